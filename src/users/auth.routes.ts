import { route, type RouteSpec } from '../http/route-table.ts';
import type { ApiContext } from '../http/context.ts';
import { clientIp } from '../platform/client-ip.ts';
import { NoSessionError, PasswordResetExpiredError, SignInLinkExpiredError } from '../platform/errors.ts';
import type { AuthService, ClientMeta } from './auth.service.ts';
import type { SignedIn } from '../tenancy/principal.ts';
import { AuthConfigSchema, PasswordChangeBody, PasswordResetBody, PasswordResetRequestBody, SessionSchema, SignInBody, SignInLinkBody, SignInLinkTokenBody } from './auth.schemas.ts';
import { clearSessionCookie, setSessionCookie, type CookiePolicy } from '../http/session-cookie.ts';

export interface AuthRouteOptions {
  cookie: CookiePolicy;
  trustedProxyHops: number;
  oidc: { enabled: boolean; name: string };
}

export function clientMeta(ctx: ApiContext, trustedProxyHops: number): ClientMeta {
  const ua = ctx.get('User-Agent');
  return { ip: clientIp(ctx.req.headers, ctx.req.socket.remoteAddress, trustedProxyHops), userAgent: ua === '' ? null : ua };
}

export function signedInOf(ctx: ApiContext): SignedIn {
  const signedIn = ctx.state.signedIn;
  if (!signedIn) throw new NoSessionError();
  return signedIn;
}

const TAG = 'Dashboard sessions';
const session = { status: 200, description: 'The session', schema: SessionSchema };

/** Sign-in, the session, sign-out, the session list and the password: paths relative to /auth. */
export function authRoutes(auth: AuthService, options: AuthRouteOptions): RouteSpec[] {
  const meta = (ctx: ApiContext) => clientMeta(ctx, options.trustedProxyHops);
  return [
    route({
      method: 'GET',
      path: '/config',
      operationId: 'authConfig',
      tag: TAG,
      summary: 'How one may sign in here',
      auth: null,
      description:
        'Public, and never an error for a visitor who is not signed in: `signed_in` tells the sign-in page whether this ' +
        'browser holds a live session already (then GET /auth/session answers it), so the page need not ask ' +
        '/auth/session and meet a 401.',
      responses: [{ status: 200, description: 'The sign-in methods', schema: AuthConfigSchema }],
      handler: (ctx) => {
        ctx.body = {
          password: true,
          link: auth.linkSignInAvailable,
          password_reset: auth.passwordResetAvailable,
          oidc: options.oidc.enabled,
          oidc_name: options.oidc.enabled ? options.oidc.name : null,
          signed_in: ctx.state.signedIn != null,
        };
      },
    }),
    route({
      method: 'POST',
      path: '/sign-in',
      operationId: 'signIn',
      tag: TAG,
      summary: 'Sign in with e-mail and password',
      auth: null,
      body: SignInBody,
      responses: [session],
      handler: async (ctx, { body }) => {
        const { token, view } = await auth.signInWithPassword(body.email, body.password, meta(ctx));
        setSessionCookie(ctx, token, options.cookie);
        ctx.body = view;
      },
    }),
    route({
      method: 'POST',
      path: '/sign-in/link',
      operationId: 'requestSignInLink',
      tag: TAG,
      summary: 'E-mail a one-time sign-in link (always 202: the answer never tells whether the account exists)',
      auth: null,
      body: SignInLinkBody,
      responses: [{ status: 202, description: 'Sent, if the account exists' }],
      handler: async (ctx, { body }) => {
        await auth.requestSignInLink(body.email);
        ctx.status = 202;
        ctx.body = {};
      },
    }),
    route({
      method: 'GET',
      path: '/sign-in/link/:token',
      operationId: 'followSignInLink',
      tag: TAG,
      summary: 'The link in a sign-in e-mail: uses nothing (mail scanners open links too), leads to the page whose button signs in',
      auth: null,
      responses: [{ status: 303, description: 'To the sign-in link page, or to the sign-in page with error=link_expired' }],
      handler: async (ctx, { params }) => {
        const token = params.token ?? '';
        const email = await auth.signInLinkEmail(token);
        ctx.status = 303;
        if (email === null) {
          ctx.redirect('/dashboard/sign-in?error=link_expired');
          return;
        }
        ctx.redirect(`/dashboard/sign-in/link?${new URLSearchParams({ token, email }).toString()}`);
      },
    }),
    route({
      method: 'POST',
      path: '/sign-in/link/consume',
      operationId: 'useSignInLink',
      tag: TAG,
      summary: 'Use a sign-in link (once): the session cookie and the session',
      auth: null,
      body: SignInLinkTokenBody,
      responses: [session],
      handler: async (ctx, { body }) => {
        const started = await auth.signInWithLink(body.token, meta(ctx));
        if (!started) throw new SignInLinkExpiredError();
        setSessionCookie(ctx, started.token, options.cookie);
        ctx.body = started.view;
      },
    }),
    route({
      method: 'POST',
      path: '/password/reset',
      operationId: 'requestPasswordReset',
      tag: TAG,
      summary: 'E-mail a one-time password reset link (always 202: the answer never tells whether the account exists)',
      description:
        'The link works once, for `PASSWORD_RESET_TTL_MS` (30 minutes); only the sha256 of its token is stored. Reset ' +
        'e-mails are limited per client address (`PASSWORD_RESETS_PER_IP` an hour; past it 429 `rate_limited` with ' +
        'Retry-After, for any address asked about) and per account (`PASSWORD_RESETS_PER_ACCOUNT` an hour; past it ' +
        'no more mail is sent, and the answer is still 202). 503 `not_configured` without `SMTP_URL`.',
      auth: null,
      body: PasswordResetRequestBody,
      responses: [{ status: 202, description: 'Sent, if the account exists' }],
      handler: async (ctx, { body }) => {
        await auth.requestPasswordReset(body.email, meta(ctx));
        ctx.status = 202;
        ctx.body = {};
      },
    }),
    route({
      method: 'GET',
      path: '/password/reset/:token',
      operationId: 'followPasswordResetLink',
      tag: TAG,
      summary: 'The link in a password reset e-mail: uses nothing (mail scanners open links too), leads to the page that sets the new password',
      auth: null,
      responses: [{ status: 303, description: 'To the reset page, or to the sign-in page with error=reset_expired' }],
      handler: async (ctx, { params }) => {
        const token = params.token ?? '';
        const email = await auth.passwordResetEmail(token);
        ctx.status = 303;
        if (email === null) {
          ctx.redirect('/dashboard/sign-in?error=reset_expired');
          return;
        }
        ctx.redirect(`/dashboard/reset-password?${new URLSearchParams({ token, email }).toString()}`);
      },
    }),
    route({
      method: 'POST',
      path: '/password/reset/consume',
      operationId: 'resetPassword',
      tag: TAG,
      summary: 'Use a password reset link (once): sets the new password, ends every session of the user, signs in',
      description:
        'A `new_password` too weak is 422 `validation_failed` and leaves the link usable; an unknown, used or expired ' +
        'link is 401 `unauthorized`. On success the other reset links of the user stop working, every session of the ' +
        'user is signed out, and the answer carries a new session and its cookie.',
      auth: null,
      body: PasswordResetBody,
      responses: [session],
      handler: async (ctx, { body }) => {
        const started = await auth.resetPassword(body.token, body.new_password, meta(ctx));
        if (!started) throw new PasswordResetExpiredError();
        setSessionCookie(ctx, started.token, options.cookie);
        ctx.body = started.view;
      },
    }),
    route({
      method: 'GET',
      path: '/session',
      operationId: 'getSession',
      tag: TAG,
      summary: 'The current session',
      auth: null,
      responses: [session],
      handler: async (ctx) => {
        ctx.body = await auth.view(signedInOf(ctx));
      },
    }),
    route({
      method: 'POST',
      path: '/sign-out',
      operationId: 'signOut',
      tag: TAG,
      summary: 'Sign out (revokes this session)',
      auth: null,
      responses: [{ status: 204, description: 'Signed out' }],
      handler: async (ctx) => {
        await auth.signOut(signedInOf(ctx));
        clearSessionCookie(ctx, options.cookie);
        ctx.status = 204;
      },
    }),
    route({
      method: 'GET',
      path: '/sessions',
      operationId: 'listSessions',
      tag: TAG,
      summary: "The user's sessions still signed in",
      auth: null,
      responses: [{ status: 200, description: 'The sessions' }],
      handler: async (ctx) => {
        ctx.body = { data: await auth.listSessions(signedInOf(ctx)) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/sessions/:id',
      operationId: 'revokeSession',
      tag: TAG,
      summary: 'Sign out one of the user’s sessions',
      auth: null,
      responses: [{ status: 204, description: 'Revoked' }],
      handler: async (ctx, { params }) => {
        await auth.revokeSession(signedInOf(ctx), params.id ?? '');
        ctx.status = 204;
      },
    }),
    route({
      method: 'POST',
      path: '/password',
      operationId: 'changePassword',
      tag: TAG,
      summary: 'Change the password (signs out every other session)',
      description:
        'Each `current_password` checked counts as a sign-in attempt of the account and of the client address (one ' +
        'window shared with `POST /auth/sign-in`): past either limit the answer is the one sign-in gives, 429 ' +
        '`rate_limited` with Retry-After, and the password is not checked.',
      auth: null,
      body: PasswordChangeBody,
      responses: [{ status: 204, description: 'Changed' }],
      handler: async (ctx, { body }) => {
        await auth.changePassword(signedInOf(ctx), body.current_password, body.new_password, meta(ctx));
        ctx.status = 204;
      },
    }),
  ];
}
