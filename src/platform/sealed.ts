// Small values that go out to a browser and must come back unchanged (an OpenID Connect sign-in in progress, a
// download ticket): JSON in base64url, then an HMAC-SHA256 over it with the server's secret, bound to a purpose so
// that a value sealed for one use never opens for another. Signed, not encrypted: nothing secret goes in.
import { createHmac, timingSafeEqual } from 'node:crypto';

function mac(secret: string, purpose: string, payload: string): string {
  return createHmac('sha256', secret).update(`${purpose}:${payload}`).digest('base64url');
}

export function seal(secret: string, purpose: string, value: unknown): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${payload}.${mac(secret, purpose, payload)}`;
}

/** The value `sealed` holds when this secret sealed it for this purpose; else null. The caller checks its shape. */
export function unseal(secret: string, purpose: string, sealed: string | undefined): unknown {
  if (!sealed) return null;
  const [payload, given, extra] = sealed.split('.');
  if (!payload || !given || extra !== undefined) return null;
  const expected = Buffer.from(mac(secret, purpose, payload));
  const actual = Buffer.from(given);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return null;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
  } catch {
    return null;
  }
}
