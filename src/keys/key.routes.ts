import { route, type RouteSpec } from '../http/route-table.ts';
import { principalOf } from '../http/auth.ts';
import { KeyInfoSchema, type KeyInfo } from './key.schemas.ts';
import type { ApiKeyDoc } from '../tenancy/key.store.ts';

/** The view of a cached key document is computed once per cache load, not per request. */
const views = new WeakMap<object, KeyInfo>();

function cachedKeyInfo(key: ApiKeyDoc): KeyInfo {
  let view = views.get(key);
  if (!view) {
    view = keyInfo(key);
    views.set(key, view);
  }
  return view;
}

export function keyInfo(key: Omit<ApiKeyDoc, 'key_hash'>): KeyInfo {
  return {
    id: key._id,
    kind: key.kind,
    name: key.name,
    prefix: key.prefix,
    workspace_id: key.workspace_id,
    partner_id: key.partner_id,
    scopes: key.scopes as KeyInfo['scopes'],
    created_at: key.created_at.toISOString(),
    expires_at: key.expires_at?.toISOString() ?? null,
    last_used_at: key.last_used_at?.toISOString() ?? null,
  };
}

export function keyRoutes(): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/key',
      operationId: 'getCurrentKey',
      tag: 'Keys',
      summary: 'The key making the request: its kind, owner, scopes and expiry (to check a key before using it)',
      auth: { kind: 'any', scope: null },
      responses: [{ status: 200, description: 'The calling key', schema: KeyInfoSchema }],
      handler: (ctx) => {
        ctx.body = cachedKeyInfo(principalOf(ctx).key);
      },
    }),
  ];
}
