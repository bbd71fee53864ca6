// The webhook signature of spec 6.3, both sides: the platform signs, receivers verify. It depends on node:crypto
// only, so a receiver can copy this file as it is.
//
// Header: `t=<unix seconds>,v1=<hex>[,v1=<hex>]`. Each v1 is HMAC-SHA256 over `<t>.<raw body>` with one secret;
// during a secret rotation's grace period a delivery carries one v1 per live secret (as Stripe does), so a receiver
// holding either the old or the new secret accepts it.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export function signPayload(rawBody: string | Buffer, secrets: readonly string[], timestampSeconds: number): string {
  if (secrets.length === 0) throw new Error('signPayload needs at least one secret');
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) throw new Error('timestampSeconds must be a non-negative integer');
  return [`t=${timestampSeconds}`, ...secrets.map((secret) => `v1=${digest(rawBody, secret, timestampSeconds)}`)].join(',');
}

export type VerifyFailure = 'malformed_header' | 'timestamp_too_old' | 'timestamp_in_future' | 'no_matching_signature';
export type VerifyResult = { valid: true; timestamp: number } | { valid: false; reason: VerifyFailure };

export interface VerifyOptions {
  /** How old (or how far ahead, for clock skew) the timestamp may be; 300 s by default (spec 6.3). */
  toleranceSeconds?: number;
  /** The current time in unix seconds; the clock by default. */
  now?: number;
}

/**
 * Checks a signature header against the raw request body, before any JSON parsing: re-serialised JSON would not
 * be byte-identical. Bounding the timestamp both ways stops a captured delivery from being replayed later.
 */
export function verifySignature(rawBody: string | Buffer, header: string | undefined, secret: string, options: VerifyOptions = {}): VerifyResult {
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const parsed = parseHeader(header);
  if (!parsed) return { valid: false, reason: 'malformed_header' };
  if (now - parsed.timestamp > tolerance) return { valid: false, reason: 'timestamp_too_old' };
  if (parsed.timestamp - now > tolerance) return { valid: false, reason: 'timestamp_in_future' };
  const expected = Buffer.from(digest(rawBody, secret, parsed.timestamp), 'hex');
  // Every candidate is compared, so the time taken does not reveal which one (if any) matched.
  let matched = false;
  for (const candidate of parsed.signatures) {
    const given = Buffer.from(candidate, 'hex');
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched ? { valid: true, timestamp: parsed.timestamp } : { valid: false, reason: 'no_matching_signature' };
}

function digest(rawBody: string | Buffer, secret: string, timestampSeconds: number): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`).update(rawBody).digest('hex');
}

/** Unknown schemes (a future `v2=`) are skipped, so receivers keep working when one is added. */
function parseHeader(header: string | undefined): { timestamp: number; signatures: string[] } | null {
  if (typeof header !== 'string' || header.length > 4096) return null;
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== null || !/^\d{1,12}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/i.test(value)) return null;
      signatures.push(value.toLowerCase());
    }
  }
  return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures };
}
