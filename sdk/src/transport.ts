// What every request of the SDK goes through, beneath openapi-fetch: the key, an Idempotency-Key on each mutation
// (made once per call, so the retries of a call are recognised by the API as one request), and retries with
// backoff on `rate_limited` (429) and `internal` (5xx) answers and on connection failures, honouring Retry-After.
import { retryAfterSeconds, LinkplaneConnectionError } from './errors.ts';

const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Safe to send twice without an Idempotency-Key. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** One retry about to happen: after `delayMs`, attempt number `attempt` (the first retry is 1). */
export interface RetryEvent {
  attempt: number;
  method: string;
  url: string;
  /** The answer's status, or null when the connection failed. */
  status: number | null;
  /** The answer's `error.code`, when it came in the envelope. */
  code: string | null;
  /** The wait before the retry: the answer's Retry-After when it gave one, else exponential backoff with jitter. */
  delayMs: number;
  /** Whether the wait is the API's Retry-After. */
  retryAfter: boolean;
}

export interface TransportOptions {
  apiKey: string;
  /** Retries after the first attempt (default 2). 0 turns retrying off. */
  maxRetries: number;
  /** A Retry-After longer than this (default 60 s) is not waited for: the call fails with the 429 at once. */
  maxRetryDelayMs: number;
  /** The first backoff step without Retry-After (default 500 ms), doubled on each retry, capped at 8 s. */
  initialBackoffMs: number;
  userAgent: string;
  fetch: (request: Request) => Promise<Response>;
  onRetry?: (event: RetryEvent) => void;
  /** Waits; replaceable so that a host can schedule retries its own way. */
  sleep: (ms: number) => Promise<void>;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A fetch for openapi-fetch's `fetch` option that adds the headers and retries. */
export function transport(options: TransportOptions): (request: Request) => Promise<Response> {
  return async (request) => {
    request.headers.set('Authorization', `Bearer ${options.apiKey}`);
    if (!request.headers.has('User-Agent')) request.headers.set('User-Agent', options.userAgent);
    if (MUTATIONS.has(request.method) && !request.headers.has('Idempotency-Key')) {
      request.headers.set('Idempotency-Key', globalThis.crypto.randomUUID());
    }
    const replayable = IDEMPOTENT.has(request.method) || request.headers.has('Idempotency-Key');
    for (let attempt = 0; ; attempt++) {
      const canRetry = attempt < options.maxRetries;
      let response: Response;
      try {
        // The original is kept unread, so that each attempt sends the same body.
        response = await options.fetch(request.clone());
      } catch (error) {
        if ((error as Error).name === 'AbortError' || request.signal.aborted) throw error;
        if (!canRetry || !replayable) {
          const cause = (error as Error & { cause?: Error }).cause;
          throw new LinkplaneConnectionError(`cannot reach the Linkplane API at ${new URL(request.url).origin}: ${cause?.message ?? (error as Error).message}`, { cause: error });
        }
        const delayMs = backoff(options.initialBackoffMs, attempt);
        options.onRetry?.({ attempt: attempt + 1, method: request.method, url: request.url, status: null, code: null, delayMs, retryAfter: false });
        await options.sleep(delayMs);
        continue;
      }
      if (!canRetry || (response.status !== 429 && response.status < 500)) return response;
      const code = await errorCode(response);
      const retryable = response.status === 429 ? code === 'rate_limited' : code === 'internal' || code === null;
      // A 429 was refused before anything ran; a 5xx may have run part way, so only a replayable request is sent again.
      if (!retryable || (response.status >= 500 && !replayable)) return response;
      const asked = retryAfterSeconds(response.headers.get('Retry-After'));
      const delayMs = asked === null ? backoff(options.initialBackoffMs, attempt) : asked * 1000;
      if (delayMs > options.maxRetryDelayMs) return response;
      await response.body?.cancel();
      options.onRetry?.({ attempt: attempt + 1, method: request.method, url: request.url, status: response.status, code, delayMs, retryAfter: asked !== null });
      await options.sleep(delayMs);
    }
  };
}

/** Exponential with full jitter over its upper half: 0.5–1 × min(8 s, initial × 2^attempt). */
function backoff(initialMs: number, attempt: number): number {
  const ceiling = Math.min(8000, initialMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

async function errorCode(response: Response): Promise<string | null> {
  try {
    const body = (await response.clone().json()) as { error?: { code?: unknown } };
    return typeof body.error?.code === 'string' ? body.error.code : null;
  } catch {
    return null;
  }
}
