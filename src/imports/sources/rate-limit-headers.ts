// How long a 429 asks a source to wait, read from the headers services actually send: the standard Retry-After, and
// the X-RateLimit-Reset of the IETF draft that Dub and Short.io document. Services disagree on what a number in them
// means (Dub's reference says seconds to wait in Retry-After and an epoch in seconds in X-RateLimit-Reset; Short.io's
// SDK reads X-RateLimit-Reset as a Unix timestamp; others send seconds to wait), so a number is read by its size:
// an epoch in milliseconds, an epoch in seconds, or else a delay in seconds. Ten-digit delays (thirty years) do not
// occur, so the reading is not ambiguous in practice.
import type { SourceHttpAnswer } from '../source.ts';
import { retryAfterMs } from './remote.ts';

const EPOCH_MS = 1e12;
const EPOCH_SECONDS = 1e9;
/** A reset time already past (clock skew) still waits this long, so the retry does not hammer the service. */
const MIN_WAIT_AFTER_RESET_MS = 1000;

/** Milliseconds to wait before retrying, from Retry-After or else X-RateLimit-Reset; null when neither is readable. */
export function rateLimitWaitMs(answer: SourceHttpAnswer, now: number): number | null {
  return timeOrDelayMs(answer.headers['retry-after'], now) ?? retryAfterMs(answer, now) ?? timeOrDelayMs(answer.headers['x-ratelimit-reset'], now);
}

function timeOrDelayMs(value: string | undefined, now: number): number | null {
  const text = value?.trim();
  if (!text || !/^\d+(\.\d+)?$/.test(text)) return null;
  const number = Number(text);
  if (number >= EPOCH_MS) return Math.max(MIN_WAIT_AFTER_RESET_MS, Math.ceil(number - now));
  if (number >= EPOCH_SECONDS) return Math.max(MIN_WAIT_AFTER_RESET_MS, Math.ceil(number * 1000 - now));
  return Math.ceil(number * 1000);
}
