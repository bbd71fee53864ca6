import { useCallback, useEffect, useState } from 'preact/hooks';
import { fetchPage } from '../api.ts';
import type { Query } from '../api.ts';

interface PagerProps {
  /** 1-based number of the page shown. */
  page: number;
  hasMore: boolean;
  loading?: boolean;
  onPrevious: () => void;
  onNext: () => void;
}

/** Previous / next over a cursor-paged list (cursors only go forward; the list remembers the ones it passed). */
export function Pager({ page, hasMore, loading, onPrevious, onNext }: PagerProps) {
  if (page === 1 && !hasMore) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="secondary" onClick={onPrevious} disabled={page === 1 || loading}>
        Previous page
      </button>
      <span aria-live="polite">Page {page}</span>
      <button type="button" class="secondary" onClick={onNext} disabled={!hasMore || loading} aria-busy={loading ? 'true' : undefined}>
        Next page
      </button>
    </nav>
  );
}

export interface CursorList<T> {
  items: T[];
  loading: boolean;
  error: unknown;
  page: number;
  hasMore: boolean;
  next: () => void;
  previous: () => void;
  reload: () => void;
  /** Props for <Pager>. */
  pager: PagerProps;
}

/**
 * A cursor-paged /v1 list: restarts at page 1 whenever the query changes (compared by value), keeps the cursors
 * of the pages passed so Previous works, and drops answers that arrive after a newer request.
 */
export function useCursorList<T>(path: string, query: Query, limit = 25): CursorList<T> {
  const queryKey = JSON.stringify(query);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [items, setItems] = useState<T[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [generation, setGeneration] = useState(0);

  useEffect(() => setCursors([null]), [path, queryKey]);

  const cursor = cursors[cursors.length - 1] ?? null;
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    setError(null);
    fetchPage<T>(path, { ...(JSON.parse(queryKey) as Query), limit }, cursor, controller.signal).then(
      (answer) => {
        setItems(answer.data);
        setNextCursor(answer.pagination.next_cursor);
        setHasMore(answer.pagination.has_more);
        setLoading(false);
      },
      (failure: unknown) => {
        if (controller.signal.aborted) return;
        setError(failure);
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [path, queryKey, cursor, limit, generation]);

  const next = useCallback(() => {
    if (nextCursor) setCursors((list) => [...list, nextCursor]);
  }, [nextCursor]);
  const previous = useCallback(() => setCursors((list) => (list.length > 1 ? list.slice(0, -1) : list)), []);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  const page = cursors.length;
  return { items, loading, error, page, hasMore, next, previous, reload, pager: { page, hasMore, loading, onNext: next, onPrevious: previous } };
}
