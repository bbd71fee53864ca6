import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * Short signed tokens `<expiry seconds base36>.<mac>` bound to a purpose and a subject (a link id, plus whatever
 * must invalidate the token when it changes, such as the password hash). Used for the password cookie and for the
 * continue link of warning pages, so neither can be forged or carried to another link.
 */
export class SignedTokens {
  private readonly key: Buffer;

  constructor(secretKey: string, purpose: string) {
    this.key = Buffer.from(hkdfSync('sha256', secretKey, 'linkplane-redirect', `token:${purpose}`, 32));
  }

  issue(subject: string, ttlSeconds: number, now: number = Date.now()): string {
    const expiry = (Math.floor(now / 1000) + ttlSeconds).toString(36);
    return `${expiry}.${this.mac(subject, expiry)}`;
  }

  valid(token: string | undefined | null, subject: string, now: number = Date.now()): boolean {
    if (!token) return false;
    const dot = token.indexOf('.');
    if (dot <= 0 || token.length > 64) return false;
    const expiry = token.slice(0, dot);
    const seconds = parseInt(expiry, 36);
    if (!Number.isFinite(seconds) || seconds * 1000 <= now) return false;
    const given = Buffer.from(token.slice(dot + 1));
    const expected = Buffer.from(this.mac(subject, expiry));
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private mac(subject: string, expiry: string): string {
    return createHmac('sha256', this.key).update(`${subject}\n${expiry}`).digest('base64url').slice(0, 27);
  }
}
