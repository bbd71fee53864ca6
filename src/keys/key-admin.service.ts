// Keys as the dashboard manages them: listed by any member of the workspace or partner, created and revoked by its
// owners only. The caller is always a signed-in person (a session), never a key, so no key can mint another.
import { ForbiddenError, NotFoundError } from '../platform/errors.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { RouteSpec } from '../http/route-table.ts';
import type { MembershipDoc, MembershipStore } from '../tenancy/membership.store.ts';
import type { KeyCreateInput, KeyRecord } from './dashboard-key.schemas.ts';
import type { KeyService } from '../tenancy/key.service.ts';
import type { ApiKeyDoc, KeyKind, KeyStore } from '../tenancy/key.store.ts';
import { ALL_SCOPES, SCOPE_AREAS, type Scope, type ScopeArea } from '../tenancy/scopes.ts';

export interface KeyAdminDeps {
  keys: KeyStore;
  keyService: KeyService;
  memberships: MembershipStore;
  bus: CacheBus | null;
  /** The kinds of key each scope serves, from the route table: a scope no endpoint of a kind checks is useless on its keys. */
  scopeKinds?: () => ReadonlyMap<string, ReadonlySet<KeyKind>>;
}

export class KeyAdminService {
  private readonly d: KeyAdminDeps;

  constructor(deps: KeyAdminDeps) {
    this.d = deps;
  }

  async list(userId: string, context: string): Promise<KeyRecord[]> {
    const membership = await this.membership(userId, context);
    const keys = await this.d.keys.list(ownerFilter(membership));
    return keys.map(keyRecord);
  }

  async create(userId: string, input: KeyCreateInput): Promise<{ key: string; record: KeyRecord }> {
    const membership = await this.owner(userId, input.context);
    const created = await this.d.keyService.create({
      kind: membership.kind,
      ownerId: membership.target_id,
      scopes: input.scopes,
      name: input.name.trim(),
      expiresAt: input.expires_at === null ? null : new Date(input.expires_at),
    });
    return { key: created.key, record: keyRecord(created.record) };
  }

  /** Revokes a key of the context; a key of another workspace or partner is not found, whatever its id. */
  async revoke(userId: string, context: string, id: string): Promise<KeyRecord> {
    const membership = await this.owner(userId, context);
    const key = await this.d.keys.findById(id);
    const filter = ownerFilter(membership);
    if (!key || (filter.workspace_id ?? null) !== key.workspace_id || (filter.partner_id ?? null) !== key.partner_id) throw new NotFoundError('API key');
    return keyRecord(await this.d.keyService.revoke(id, this.d.bus));
  }

  /** Every scope, or those a key of the context's kind can use (a workspace key cannot manage clients, say). */
  async scopes(userId: string, context?: string): Promise<{ scope: Scope; description: string }[]> {
    const kind = context === undefined ? null : (await this.membership(userId, context)).kind;
    const kinds = kind === null ? null : this.d.scopeKinds?.();
    const usable = kinds ? ALL_SCOPES.filter((scope) => kinds.get(scope)?.has(kind!) ?? false) : ALL_SCOPES;
    return usable.map((scope) => {
      const [area, access] = scope.split(':') as [ScopeArea, 'read' | 'write'];
      return { scope, description: `${access === 'read' ? 'Read' : 'Change'} ${SCOPE_AREAS[area]}` };
    });
  }

  private async membership(userId: string, context: string): Promise<MembershipDoc> {
    const membership = await this.d.memberships.find(userId, context);
    if (!membership) throw new ForbiddenError('The context names no workspace or partner this user belongs to.');
    return membership;
  }

  private async owner(userId: string, context: string): Promise<MembershipDoc> {
    const membership = await this.membership(userId, context);
    if (membership.role !== 'owner') throw new ForbiddenError('Only owners create and revoke keys.');
    return membership;
  }
}

/** For each scope, the kinds of key whose endpoints check it (an endpoint open to any key serves both kinds). */
export function scopeKindsOf(routes: readonly RouteSpec[]): Map<string, Set<KeyKind>> {
  const kinds = new Map<string, Set<KeyKind>>();
  for (const route of routes) {
    for (const auth of [route.auth, ...(route.alsoChecks ?? [])]) {
      if (!auth?.scope) continue;
      const set = kinds.get(auth.scope) ?? new Set<KeyKind>();
      if (auth.kind === 'any' || auth.kind === 'workspace') set.add('workspace');
      if (auth.kind === 'any' || auth.kind === 'partner') set.add('partner');
      kinds.set(auth.scope, set);
    }
  }
  return kinds;
}

function ownerFilter(membership: MembershipDoc): { workspace_id?: string; partner_id?: string } {
  return membership.kind === 'workspace' ? { workspace_id: membership.target_id } : { partner_id: membership.target_id };
}

export function keyRecord(key: Omit<ApiKeyDoc, 'key_hash'>): KeyRecord {
  return {
    id: key._id,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes,
    created_at: key.created_at.toISOString(),
    expires_at: key.expires_at?.toISOString() ?? null,
    revoked_at: key.revoked_at?.toISOString() ?? null,
    last_used_at: key.last_used_at?.toISOString() ?? null,
  };
}
