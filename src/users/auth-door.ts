import type { Next } from 'koa';
import type { ApiContext } from '../http/context.ts';
import type { AuthService } from './auth.service.ts';
import { checkCsrf, checkOrigin, isSafeMethod, markPrivate, readSessionToken } from '../http/session-cookie.ts';

/** The /auth/* endpoints that start a session: no session to take a CSRF token from, so only Origin is checked. */
const SESSIONLESS = new Set([
  '/auth/sign-in',
  '/auth/sign-in/link',
  '/auth/sign-in/link/consume',
  '/auth/password/reset',
  '/auth/password/reset/consume',
  '/auth/invites/accept',
]);

/**
 * Before every /auth/* route: the session of the cookie (if usable) on `ctx.state.signedIn`, and the CSRF check
 * of state-changing requests: the session's token in X-CSRF-Token, and no foreign Origin.
 */
export function authDoor(auth: AuthService, ownOrigin: string) {
  return async function authenticateSession(ctx: ApiContext, next: Next): Promise<void> {
    markPrivate(ctx);
    const token = readSessionToken(ctx.get('Cookie'));
    const signedIn = token === undefined ? null : await auth.authenticate(token);
    if (signedIn) ctx.state.signedIn = signedIn;
    if (!isSafeMethod(ctx.method)) {
      if (signedIn && !SESSIONLESS.has(ctx.path)) checkCsrf(ctx, signedIn.session, ownOrigin);
      else checkOrigin(ctx, ownOrigin);
    }
    await next();
  };
}
