// The one way a source talks to its service: a request through the job's guarded client, retried with backoff on a
// rate limit (honouring the service's Retry-After or reset header) and on a server error or network failure, and
// turned into a SourceError the job understands when it cannot succeed. Each source says how its service signals
// a rate limit beyond the standard 429 + Retry-After (some answer 429 with a reset timestamp, some 403).
import { SourceError, type SourceDeps, type SourceHttpAnswer, type SourceHttpRequest } from '../source.ts';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** First backoff when the service names no wait; doubled on each further attempt, with jitter. */
  baseDelayMs: number;
  /** No single wait is longer than this (a Retry-After of an hour is not honoured by sleeping an hour). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseDelayMs: 500, maxDelayMs: 60_000 };

export interface RemoteCall {
  /** True when the answer means "slow down" for this service (default: status 429). */
  isRateLimited?: (answer: SourceHttpAnswer) => boolean;
  /**
   * True when the answer means the credentials were refused (default: 401 or 403). A service that answers 403 for
   * something else (Rebrandly's invalid query parameters) says so here, and gets that answer back.
   */
  isAuthFailure?: (answer: SourceHttpAnswer) => boolean;
  /** Milliseconds the service asks to wait, or null (default: Retry-After in seconds or as an HTTP date). */
  waitOf?: (answer: SourceHttpAnswer, now: number) => number | null;
  retry?: RetryPolicy;
  /** Clock, replaceable in tests. */
  now?: () => number;
}

/** Milliseconds named by a standard Retry-After header (delta-seconds or HTTP-date), or null. */
export function retryAfterMs(answer: SourceHttpAnswer, now: number): number | null {
  const value = answer.headers['retry-after']?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Sends `request` until it gets an answer that is neither a rate limit nor a server error, or the attempts run out.
 * 401 and 403 (unless the service uses 403 for its rate limit or for something else) become `auth`; other 4xx are
 * returned to the caller, which knows what its service means by them.
 */
export async function callRemote(deps: SourceDeps, request: SourceHttpRequest, signal: AbortSignal, call: RemoteCall = {}): Promise<SourceHttpAnswer> {
  const policy = call.retry ?? DEFAULT_RETRY;
  const isRateLimited = call.isRateLimited ?? ((answer: SourceHttpAnswer) => answer.status === 429);
  const isAuthFailure = call.isAuthFailure ?? ((answer: SourceHttpAnswer) => answer.status === 401 || answer.status === 403);
  const waitOf = call.waitOf ?? retryAfterMs;
  const now = call.now ?? Date.now;
  let lastProblem = '';
  for (let attempt = 1; attempt <= policy.attempts; attempt++) {
    let answer: SourceHttpAnswer | null = null;
    try {
      answer = await deps.http(request, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    if (answer) {
      const limited = isRateLimited(answer);
      if (!limited && answer.status < 500) {
        if (isAuthFailure(answer)) throw new SourceError('auth', `${hostOf(request.url)} refused the credentials (HTTP ${answer.status})`);
        return answer;
      }
      lastProblem = limited ? 'rate limited' : `HTTP ${answer.status}`;
      if (attempt < policy.attempts) {
        const named = limited ? waitOf(answer, now()) : null;
        await deps.sleep(Math.min(policy.maxDelayMs, named ?? backoff(policy, attempt)), signal);
        continue;
      }
    } else if (attempt < policy.attempts) {
      await deps.sleep(backoff(policy, attempt), signal);
      continue;
    }
  }
  throw new SourceError('remote', `${hostOf(request.url)} did not answer successfully after ${policy.attempts} attempts (${lastProblem})`);
}

/** Sends `request` and parses a JSON answer; a 2xx that is not JSON is the service failing. */
export async function callRemoteJson(deps: SourceDeps, request: SourceHttpRequest, signal: AbortSignal, call: RemoteCall = {}): Promise<{ answer: SourceHttpAnswer; json: unknown }> {
  const answer = await callRemote(deps, request, signal, call);
  try {
    return { answer, json: answer.body === '' ? null : (JSON.parse(answer.body) as unknown) };
  } catch (error) {
    throw new SourceError('remote', `${hostOf(request.url)} answered HTTP ${answer.status} with a body that is not JSON`, { cause: error });
  }
}

function backoff(policy: RetryPolicy, attempt: number): number {
  const exponential = policy.baseDelayMs * 2 ** (attempt - 1);
  return Math.min(policy.maxDelayMs, Math.round(exponential * (0.75 + Math.random() * 0.5)));
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the service';
  }
}
