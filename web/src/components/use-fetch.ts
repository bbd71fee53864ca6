import { useEffect, useState } from 'preact/hooks';
import { api, type Query } from '../api.ts';

export interface Fetched<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
}

/**
 * A GET that re-runs when the path or the query changes (compared by value). The previous answer stays on screen
 * while the next one loads, and an answer that arrives after a newer request is dropped. `path` null: nothing.
 */
export function useFetch<T>(path: string | null, query: Query = {}, generation = 0): Fetched<T> {
  const key = JSON.stringify(query);
  const [state, setState] = useState<Fetched<T>>({ data: null, error: null, loading: path !== null });
  useEffect(() => {
    if (path === null) {
      setState({ data: null, error: null, loading: false });
      return;
    }
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    api.get<T>(path, JSON.parse(key) as Query, controller.signal).then(
      (data) => setState({ data, error: null, loading: false }),
      (error: unknown) => {
        if (!controller.signal.aborted) setState({ data: null, error, loading: false });
      },
    );
    return () => controller.abort();
  }, [path, key, generation]);
  return state;
}
