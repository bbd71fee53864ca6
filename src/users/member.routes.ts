import { route, type RouteSpec } from '../http/route-table.ts';
import type { ApiContext } from '../http/context.ts';
import { AcceptInviteBody, ContextBody, ContextQuery, InviteBody, JoinedSchema, MemberQuery, SessionSchema } from './auth.schemas.ts';
import type { MemberService } from './member.service.ts';
import { clientMeta, signedInOf } from './auth.routes.ts';
import { checkCsrf, setSessionCookie, type CookiePolicy } from '../http/session-cookie.ts';
import { NotFoundError } from '../platform/errors.ts';

const TAG = 'Dashboard members';

/** Members and invitations of a workspace or partner: paths relative to /auth. */
export function memberRoutes(members: MemberService, options: { cookie: CookiePolicy; trustedProxyHops: number; ownOrigin: string }): RouteSpec[] {
  const see = (ctx: ApiContext, location: string) => {
    ctx.status = 303;
    ctx.redirect(location);
  };
  return [
    route({
      method: 'GET',
      path: '/members',
      operationId: 'listMembers',
      tag: TAG,
      summary: 'The members and open invitations of a workspace or partner the user belongs to',
      auth: null,
      query: ContextQuery,
      responses: [{ status: 200, description: 'Members and invitations' }],
      handler: async (ctx, { query }) => {
        ctx.body = await members.list(signedInOf(ctx), query.context);
      },
    }),
    route({
      method: 'DELETE',
      path: '/members',
      operationId: 'removeMember',
      tag: TAG,
      summary: 'Remove a member (owners only; never the last owner)',
      auth: null,
      query: MemberQuery,
      responses: [{ status: 204, description: 'Removed' }],
      handler: async (ctx, { query }) => {
        await members.remove(signedInOf(ctx), query.context, query.user_id);
        ctx.status = 204;
      },
    }),
    route({
      method: 'POST',
      path: '/memberships',
      operationId: 'joinClientWorkspace',
      tag: TAG,
      summary: 'Join a client workspace of a partner you own, as its owner (to open it in the dashboard); a member already stays as is',
      auth: null,
      body: ContextBody,
      responses: [{ status: 200, description: 'The membership now held', schema: JoinedSchema }],
      handler: async (ctx, { body }) => {
        ctx.body = await members.joinClient(signedInOf(ctx), body.context);
      },
    }),
    route({
      method: 'POST',
      path: '/invites',
      operationId: 'invite',
      tag: TAG,
      summary: 'Invite an e-mail address (owners only)',
      auth: null,
      body: InviteBody,
      responses: [{ status: 201, description: 'The invitation' }],
      handler: async (ctx, { body }) => {
        ctx.status = 201;
        ctx.body = await members.invite(signedInOf(ctx), body.context, body.email, body.role);
      },
    }),
    route({
      method: 'POST',
      path: '/invites/accept',
      operationId: 'acceptInvite',
      tag: TAG,
      summary: 'Accept an invitation: joins as the signed-in invited address, or signs it in, creating its account if it has none',
      auth: null,
      body: AcceptInviteBody,
      responses: [{ status: 200, description: 'The session', schema: SessionSchema }],
      handler: async (ctx, { body }) => {
        const signedIn = ctx.state.signedIn;
        const own = signedIn && body.password === undefined ? await members.findOwn(signedIn, body.token) : null;
        if (signedIn && own) {
          // The session itself acts here, so its CSRF token is required as for any change made with the cookie.
          checkCsrf(ctx, signedIn.session, options.ownOrigin);
          const view = await members.acceptOwn(signedIn, own);
          if (!view) throw new NotFoundError('invitation (it may have been used or have expired)');
          ctx.body = view;
          return;
        }
        const input = { ...(body.name === undefined ? {} : { name: body.name }), ...(body.password === undefined ? {} : { password: body.password }) };
        const started = await members.accept(body.token, input, clientMeta(ctx, options.trustedProxyHops));
        if (!started) throw new NotFoundError('invitation (it may have been used or have expired)');
        setSessionCookie(ctx, started.token, options.cookie);
        ctx.body = started.view;
      },
    }),
    route({
      method: 'DELETE',
      path: '/invites/:id',
      operationId: 'revokeInvite',
      tag: TAG,
      summary: 'Withdraw an invitation (owners only)',
      auth: null,
      responses: [{ status: 204, description: 'Withdrawn' }],
      handler: async (ctx, { params }) => {
        await members.revokeInvite(signedInOf(ctx), params.id ?? '');
        ctx.status = 204;
      },
    }),
    route({
      method: 'GET',
      path: '/invites/:token',
      operationId: 'followInvite',
      tag: TAG,
      summary: 'The link in an invitation e-mail: uses nothing (mail scanners open links too), leads to the accept page',
      auth: null,
      responses: [{ status: 303, description: 'To the accept page, or to the sign-in page with error=invite_expired' }],
      handler: async (ctx, { params }) => {
        const token = params.token ?? '';
        const invite = await members.findOpen(token);
        if (!invite) return see(ctx, '/dashboard/sign-in?error=invite_expired');
        see(ctx, `/dashboard/accept-invite?${new URLSearchParams({ token, email: invite.email }).toString()}`);
      },
    }),
  ];
}
