import { timingSafeEqual } from 'node:crypto';
import { CsrfError } from '../platform/errors.ts';
import type { ApiContext } from './context.ts';
import type { SessionDoc } from '../tenancy/session.store.ts';

export const SESSION_COOKIE = 'lp_session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method);
}

/** The session token of a Cookie header, if any (the first `lp_session`). */
export function readSessionToken(cookieHeader: string): string | undefined {
  if (cookieHeader === '') return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}

export interface CookiePolicy {
  /** False only when the public API URL is plain http on localhost (development). */
  secure: boolean;
  maxAgeSeconds: number;
}

export function cookiePolicyFor(publicApiUrl: string, maxAgeMs: number): CookiePolicy {
  const url = new URL(publicApiUrl);
  const local = url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  return { secure: !local, maxAgeSeconds: Math.floor(maxAgeMs / 1000) };
}

export function setSessionCookie(ctx: ApiContext, token: string, policy: CookiePolicy): void {
  ctx.append('Set-Cookie', `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${policy.maxAgeSeconds}; HttpOnly; SameSite=Lax${policy.secure ? '; Secure' : ''}`);
}

export function clearSessionCookie(ctx: ApiContext, policy: CookiePolicy): void {
  ctx.append('Set-Cookie', `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${policy.secure ? '; Secure' : ''}`);
}

/** An answer that depends on the session: never stored by a shared cache, nor reused for another cookie. */
export function markPrivate(ctx: ApiContext): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.vary('Cookie');
}

/**
 * `Origin`, when the browser sends it, must be ours: the configured public URL, or the Host the request came to
 * (the same origin seen through a proxy that kept the Host header).
 */
export function checkOrigin(ctx: ApiContext, ownOrigin: string): void {
  const origin = ctx.get('Origin');
  if (origin === '') return;
  if (origin === ownOrigin) return;
  let host: string | null;
  try {
    host = origin === 'null' ? null : new URL(origin).host;
  } catch {
    host = null;
  }
  if (host === null || host !== ctx.get('Host')) throw new CsrfError(`the request comes from another origin (${origin.slice(0, 100)})`);
}

/** The synchronizer token check of a state-changing request made with the session cookie. */
export function checkCsrf(ctx: ApiContext, session: SessionDoc, ownOrigin: string): void {
  checkOrigin(ctx, ownOrigin);
  const sent = Buffer.from(ctx.get('X-CSRF-Token'));
  const expected = Buffer.from(session.csrf_token);
  if (sent.length === 0) throw new CsrfError('the X-CSRF-Token header is missing');
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) throw new CsrfError('the X-CSRF-Token header does not match the session');
}
