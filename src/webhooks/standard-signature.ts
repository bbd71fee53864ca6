// The Standard Webhooks signature (https://www.standardwebhooks.com), the scheme an endpoint opts into with
// `signature_scheme: "standard"`; receivers verify it with any Standard Webhooks or Svix library. Like
// signature.ts it depends on node:crypto only.
//
// Headers: `webhook-id` (the delivery id, the same on every retry), `webhook-timestamp` (unix seconds) and
// `webhook-signature: v1,<base64>[ v1,<base64>]`, each HMAC-SHA256 over `<id>.<timestamp>.<raw body>` keyed with
// the bytes the secret encodes: `whsec_` + standard base64. One signature per live secret, as with our scheme.
import { createHmac, randomBytes } from 'node:crypto';

export const STANDARD_SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** `whsec_` and 32 random bytes in standard (padded) base64: the secret format Standard Webhooks libraries read. */
export function newStandardSecret(): string {
  return `${STANDARD_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The key bytes of a `whsec_<base64>` secret; null when the secret is not in that format (a `linkplane` one). */
export function standardKey(secret: string): Buffer | null {
  if (!secret.startsWith(STANDARD_SECRET_PREFIX)) return null;
  const encoded = secret.slice(STANDARD_SECRET_PREFIX.length);
  if (encoded.length === 0 || !BASE64.test(encoded)) return null;
  return Buffer.from(encoded, 'base64');
}

export function standardHeaders(id: string, rawBody: string | Buffer, secrets: readonly string[], timestampSeconds: number): Record<string, string> {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) throw new Error('timestampSeconds must be a non-negative integer');
  const keys = secrets.map(standardKey).filter((key): key is Buffer => key !== null);
  if (keys.length === 0) throw new Error('standardHeaders needs at least one whsec_<base64> secret');
  const signatures = keys.map((key) => `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.`).update(rawBody).digest('base64')}`);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}
