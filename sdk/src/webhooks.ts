// Verifying a webhook delivery, both schemes an endpoint may sign with (its `signature_scheme`):
//
// - `linkplane`: `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, each v1 an HMAC-SHA256 of
//   `<t>.<raw body>` keyed with the secret string as it was shown (`whsec_…`).
// - `standard` (Standard Webhooks): `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64>[ …]`,
//   each an HMAC-SHA256 of `<id>.<timestamp>.<raw body>` keyed with the bytes the `whsec_<base64>` secret encodes.
//
// During a secret rotation's grace period a delivery carries one signature per live secret; either secret verifies.
// The raw body must be the bytes received: JSON parsed and serialised again is not byte-identical.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { webhooks } from './generated/openapi.ts';

/** Every event a webhook endpoint receives, told apart by `type`. */
export type WebhookEvent = {
  [K in keyof webhooks]: webhooks[K] extends { post: { requestBody: { content: { 'application/json': infer B } } } } ? B : never;
}[keyof webhooks];
export type WebhookEventType = WebhookEvent['type'];

export type WebhookFailure = 'missing_headers' | 'malformed_header' | 'malformed_secret' | 'timestamp_too_old' | 'timestamp_in_future' | 'no_matching_signature' | 'malformed_body';

export class WebhookVerificationError extends Error {
  readonly reason: WebhookFailure;
  constructor(reason: WebhookFailure, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far the timestamp may be from now, either way (default 300 s): a captured delivery cannot be replayed later. */
  toleranceSeconds?: number;
  /** Now, in unix seconds (default the clock). */
  now?: number;
}

const STANDARD_SECRET = /^whsec_((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/;

/**
 * Checks a delivery's signature and returns its event. The scheme is read from the headers (`webhook-signature`
 * for Standard Webhooks, `X-Service-Signature` for ours). Throws WebhookVerificationError when it does not verify.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyWebhookOptions = {}): WebhookEvent {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const header = (name: string): string | undefined => {
    if (headers instanceof Headers) return headers.get(name) ?? undefined;
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    const value = key === undefined ? undefined : headers[key];
    return Array.isArray(value) ? value.join(',') : value;
  };
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  const standard = header('webhook-signature');
  const ours = header('x-service-signature');
  let timestamp: number;
  let expected: Buffer;
  let given: Buffer[];
  if (standard !== undefined) {
    const id = header('webhook-id');
    const ts = header('webhook-timestamp');
    if (id === undefined || ts === undefined) throw new WebhookVerificationError('missing_headers', 'webhook-id and webhook-timestamp are required with webhook-signature');
    if (!/^\d{1,12}$/.test(ts)) throw new WebhookVerificationError('malformed_header', 'webhook-timestamp is not unix seconds');
    const key = STANDARD_SECRET.exec(secret)?.[1];
    if (key === undefined || key === '') throw new WebhookVerificationError('malformed_secret', 'a Standard Webhooks secret is whsec_ and standard base64');
    timestamp = Number(ts);
    expected = createHmac('sha256', Buffer.from(key, 'base64')).update(`${id}.${timestamp}.`).update(body).digest();
    // Space-separated `v1,<base64>`; other versions are skipped, so a receiver keeps working when one is added.
    given = standard.split(' ').filter((s) => s.startsWith('v1,')).map((s) => Buffer.from(s.slice(3), 'base64'));
  } else if (ours !== undefined) {
    const parts = ours.split(',').map((part) => part.trim().split('=', 2) as [string, string | undefined]);
    const ts = parts.filter(([k]) => k === 't').map(([, v]) => v);
    if (ts.length !== 1 || !/^\d{1,12}$/.test(ts[0] ?? '')) throw new WebhookVerificationError('malformed_header', 'X-Service-Signature needs one t=<unix seconds>');
    timestamp = Number(ts[0]);
    expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
    given = parts.filter(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/i.test(v ?? '')).map(([, v]) => Buffer.from(v!, 'hex'));
  } else {
    throw new WebhookVerificationError('missing_headers', 'neither webhook-signature nor X-Service-Signature is present');
  }
  if (given.length === 0) throw new WebhookVerificationError('malformed_header', 'no v1 signature in the header');
  if (now - timestamp > tolerance) throw new WebhookVerificationError('timestamp_too_old', `the delivery is signed ${now - timestamp} s ago`);
  if (timestamp - now > tolerance) throw new WebhookVerificationError('timestamp_in_future', 'the delivery is signed in the future');
  // Every candidate is compared, so the time taken does not tell which one matched.
  let matched = false;
  for (const candidate of given) if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  if (!matched) throw new WebhookVerificationError('no_matching_signature', 'no signature matches this secret');
  try {
    return JSON.parse(body.toString('utf8')) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('malformed_body', 'the body is not JSON');
  }
}
