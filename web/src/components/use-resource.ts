import { useCallback, useEffect, useState } from 'preact/hooks';

export interface Resource<T> {
  /** undefined until the first answer arrives. */
  data: T | undefined;
  loading: boolean;
  error: unknown;
  /** Fetches again (after a change made on the screen). */
  reload: () => void;
  /** Replaces the data with an answer already in hand (a PATCH returning the new state) without a round trip. */
  set: (next: T) => void;
}

/**
 * One thing a screen reads from the api (a profile, a single-page list): loaded when the screen appears and
 * whenever `key` changes, with answers to superseded requests dropped so a slow one never overwrites a newer one.
 */
export function useResource<T>(load: (signal: AbortSignal) => Promise<T>, key: string): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    setError(null);
    load(controller.signal).then(
      (answer) => {
        if (controller.signal.aborted) return;
        setData(answer);
        setLoading(false);
      },
      (failure: unknown) => {
        if (controller.signal.aborted) return;
        setError(failure);
        setLoading(false);
      },
    );
    return () => controller.abort();
    // `load` is a fresh closure every render; `key` names what it loads.
  }, [key, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data, loading, error, reload, set: setData };
}

/** Runs a state-changing call for a button or form: busy while it runs, its failure kept for display. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async <R,>(action: () => Promise<R>): Promise<R | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await action();
    } catch (failure) {
      setError(failure);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}
