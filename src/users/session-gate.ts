import { ForbiddenError, NoSessionError } from '../platform/errors.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { ApiContext } from '../http/context.ts';
import type { AuthService } from './auth.service.ts';
import type { SessionCache } from './session-cache.ts';
import { checkCsrf, isSafeMethod, markPrivate } from '../http/session-cookie.ts';

const CONTEXT = /^(ws|ptr)_[A-Za-z0-9]{1,64}$/;

/**
 * The dashboard's way into /v1: the session cookie plus `Linkplane-Context` (the workspace or partner in view)
 * stand for a key. Called by the gate only when a request has no Authorization header and carries the cookie.
 * A grant already checked is answered from the cache, with no database round trip (see SessionCache).
 */
export function sessionPrincipal(auth: AuthService, ownOrigin: string, cache: SessionCache) {
  return async function principalOfSession(ctx: ApiContext, token: string): Promise<Principal> {
    // Whatever the outcome, this answer belongs to one browser's session.
    markPrivate(ctx);
    const context = ctx.get('Linkplane-Context');
    const cached = CONTEXT.test(context) ? cache.get(token, context) : undefined;
    if (cached) {
      if (!isSafeMethod(ctx.method)) checkCsrf(ctx, cached.session, ownOrigin);
      return cached.principal;
    }
    const mark = cache.mark;
    const session = await auth.session(token);
    if (!session) throw new NoSessionError();
    if (!isSafeMethod(ctx.method)) checkCsrf(ctx, session, ownOrigin);
    if (context === '') throw new ForbiddenError('A dashboard request needs Linkplane-Context: <workspace or partner id>.');
    if (!CONTEXT.test(context)) throw new ForbiddenError('Linkplane-Context names no workspace or partner this user belongs to.');
    const principal = await auth.principalFor(session, context);
    cache.remember(token, context, { session, principal }, mark);
    return principal;
  };
}
