import { route, type RouteSpec } from '../http/route-table.ts';
import type { ApiContext } from '../http/context.ts';
import type { Logger } from '../platform/logger.ts';
import type { AuthService } from './auth.service.ts';
import type { MemberService } from './member.service.ts';
import { OidcFailure, type OidcClient } from './oidc.ts';
import { clientMeta } from './auth.routes.ts';
import { setSessionCookie, type CookiePolicy } from '../http/session-cookie.ts';
import { createUser } from './accounts.ts';

const PENDING_COOKIE = 'lp_oidc';
const TAG = 'Dashboard sessions';

export interface OidcRouteDeps {
  oidc: OidcClient;
  auth: AuthService;
  members: MemberService;
  users: Parameters<typeof createUser>[0];
  cookie: CookiePolicy;
  trustedProxyHops: number;
  publicApiUrl: string;
  logger: Logger;
}

function readCookie(ctx: ApiContext, name: string): string | undefined {
  for (const part of ctx.get('Cookie').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Sign-in through the identity provider (only mounted when OIDC_ISSUER is set): paths relative to /auth. */
export function oidcRoutes(d: OidcRouteDeps): RouteSpec[] {
  const secure = d.cookie.secure ? '; Secure' : '';
  const see = (ctx: ApiContext, location: string) => {
    ctx.status = 303;
    ctx.redirect(location);
  };
  return [
    route({
      method: 'GET',
      path: '/oidc/start',
      operationId: 'oidcStart',
      tag: TAG,
      summary: 'Sign in with the identity provider: a redirect to it',
      auth: null,
      responses: [{ status: 302, description: 'To the identity provider' }],
      handler: async (ctx) => {
        const { url, pending } = await d.oidc.start(Date.now());
        // SameSite=Lax: the provider sends the browser back with a top-level GET, which carries it.
        ctx.append('Set-Cookie', `${PENDING_COOKIE}=${d.oidc.seal(pending)}; Path=/auth/oidc; Max-Age=600; HttpOnly; SameSite=Lax${secure}`);
        ctx.redirect(url);
      },
    }),
    route({
      method: 'GET',
      path: '/oidc/callback',
      operationId: 'oidcCallback',
      tag: TAG,
      summary: 'Where the identity provider returns: the session cookie, then the dashboard',
      auth: null,
      responses: [{ status: 303, description: 'To the dashboard, or to the sign-in page with error=oidc_failed or oidc_no_access' }],
      handler: async (ctx) => {
        ctx.append('Set-Cookie', `${PENDING_COOKIE}=; Path=/auth/oidc; Max-Age=0; HttpOnly; SameSite=Lax${secure}`);
        const pending = d.oidc.unseal(readCookie(ctx, PENDING_COOKIE));
        if (!pending) return see(ctx, '/dashboard/sign-in?error=oidc_failed');
        let identity;
        try {
          identity = await d.oidc.finish(new URL(`${d.publicApiUrl}/auth/oidc/callback${ctx.search}`), pending, Date.now());
        } catch (error) {
          if (!(error instanceof OidcFailure)) throw error;
          d.logger.info({ reason: error.message }, 'OpenID Connect sign-in refused');
          return see(ctx, '/dashboard/sign-in?error=oidc_failed');
        }
        // Matched by verified e-mail. A first-time user gets in only through an invitation to that address.
        let user = await d.users.findByEmail(identity.email);
        if (!user) {
          if (!(await d.members.hasOpenInvite(identity.email))) return see(ctx, '/dashboard/sign-in?error=oidc_no_access');
          user = await createUser(d.users, { email: identity.email, name: identity.name, password: null });
        }
        await d.members.acceptAllFor(user.email, user._id);
        const started = await d.auth.startSession(user, clientMeta(ctx, d.trustedProxyHops));
        setSessionCookie(ctx, started.token, d.cookie);
        see(ctx, '/dashboard/');
      },
    }),
  ];
}
