import type { ApiError } from '../../api.ts';

/** "21:04" in the visitor's own clock: when a wait of `seconds` from now ends, to the minute (rounded up). */
export function localTimeAfter(seconds: number, now = Date.now()): string {
  const at = new Date(Math.ceil((now + seconds * 1000) / 60_000) * 60_000);
  return at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
}

/**
 * A 429 of the sign-in doors as one sentence with the time it lifts in the visitor's clock ("… Try again at
 * 21:04."); the api's own message names the time in UTC, which the visitor should not have to convert.
 */
export function rateLimitSentence(error: ApiError): string | null {
  if (error.code !== 'rate_limited' || !error.retryAfter) return null;
  const what = error.message.split(';')[0]!.trim();
  return `${what}. Try again at ${localTimeAfter(error.retryAfter)}.`;
}
