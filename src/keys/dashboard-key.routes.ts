import { route, type RouteSpec } from '../http/route-table.ts';
import { signedInOf } from '../users/auth.routes.ts';
import { CreatedKeySchema, KeyContextQuery, KeyCreateBody, KeyListSchema, KeyRecordSchema, ScopeListQuery, ScopeListSchema } from './dashboard-key.schemas.ts';
import type { KeyAdminService } from './key-admin.service.ts';

const TAG = 'Dashboard keys';

/** Key management for signed-in people (paths relative to /auth); a request without a session answers 401. */
export function dashboardKeyRoutes(admin: KeyAdminService): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/keys',
      operationId: 'listDashboardKeys',
      tag: TAG,
      summary: 'The API keys of a workspace or partner the user belongs to, newest first, revoked ones included',
      auth: null,
      query: KeyContextQuery,
      responses: [{ status: 200, description: 'The keys', schema: KeyListSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = { data: await admin.list(signedInOf(ctx).user._id, query.context) };
      },
    }),
    route({
      method: 'POST',
      path: '/keys',
      operationId: 'createDashboardKey',
      tag: TAG,
      summary: 'Create a key (owners only); the answer carries the whole key, shown this once',
      auth: null,
      body: KeyCreateBody,
      responses: [{ status: 201, description: 'The key and its record', schema: CreatedKeySchema }],
      handler: async (ctx, { body }) => {
        ctx.status = 201;
        ctx.set('Cache-Control', 'no-store');
        ctx.body = await admin.create(signedInOf(ctx).user._id, body);
      },
    }),
    route({
      method: 'DELETE',
      path: '/keys/:id',
      operationId: 'revokeDashboardKey',
      tag: TAG,
      summary: 'Revoke a key at once (owners only); revoking twice keeps the first time',
      auth: null,
      query: KeyContextQuery,
      responses: [{ status: 200, description: 'The revoked key', schema: KeyRecordSchema }],
      handler: async (ctx, { query, params }) => {
        ctx.body = await admin.revoke(signedInOf(ctx).user._id, query.context, params.id ?? '');
      },
    }),
    route({
      method: 'GET',
      path: '/scopes',
      operationId: 'listScopes',
      tag: TAG,
      summary: 'Every scope a key can hold, with what it allows; with `context`, only those its kind of key can use',
      auth: null,
      query: ScopeListQuery,
      responses: [{ status: 200, description: 'The scopes', schema: ScopeListSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = { data: await admin.scopes(signedInOf(ctx).user._id, query.context) };
      },
    }),
  ];
}
