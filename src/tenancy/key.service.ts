import { createHash } from 'node:crypto';
import { newId, randomBase62 } from '../platform/ids.ts';
import { NotFoundError, UnauthorizedError, ValidationError } from '../platform/errors.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { Logger } from '../platform/logger.ts';
import type { ApiKeyDoc, KeyKind, KeyStore } from './key.store.ts';
import type { Scope } from './scopes.ts';
import type { WorkspaceStore } from './workspace.store.ts';
import type { PartnerStore } from './partner.store.ts';
import { effectivePlan } from './plans.ts';
import type { Principal } from './principal.ts';

export const KEY_PREFIX: Readonly<Record<KeyKind, string>> = { workspace: 'lp_live_', partner: 'lpp_live_' };
/** 40 base62 characters: about 238 bits of entropy, far past guessing, so a fast hash is enough to store it. */
const SECRET_LENGTH = 40;
const DISPLAY_PREFIX_LENGTH = 4;
/** last_used_at is a date to display, not an audit log: one write per key per minute is plenty. */
const TOUCH_INTERVAL_MS = 60_000;
const MAX_CACHED_KEYS = 10_000;

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

interface CacheEntry {
  principal: Principal;
  loadedAt: number;
}

export interface KeyServiceDeps {
  keys: KeyStore;
  workspaces: WorkspaceStore;
  partners: PartnerStore;
  logger: Logger;
  cacheTtlMs: number;
  defaultRateLimits: { workspacePerMinute: number; partnerPerMinute: number };
  /** Milliseconds since the epoch. */
  now?: () => number;
}

export interface CreatedKey {
  key: string;
  record: Omit<ApiKeyDoc, 'key_hash'>;
}

export class KeyService {
  private readonly deps: KeyServiceDeps;
  /**
   * Principals by the presented token: a hit costs one map lookup, no hashing. Tokens already sit in request
   * buffers; this cache lives only in memory and is never written anywhere.
   */
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lastTouched = new Map<string, number>();
  private readonly now: () => number;

  constructor(deps: KeyServiceDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
  }

  async create(input: {
    kind: KeyKind;
    ownerId: string;
    scopes: readonly Scope[];
    name?: string | null;
    expiresAt?: Date | null;
  }): Promise<CreatedKey> {
    if (input.scopes.length === 0) throw new ValidationError([{ path: 'scopes', message: 'at least one scope' }]);
    const owner =
      input.kind === 'workspace'
        ? await this.deps.workspaces.findById(input.ownerId)
        : await this.deps.partners.findById(input.ownerId);
    if (!owner) throw new NotFoundError(input.kind);
    if (input.expiresAt && input.expiresAt.getTime() <= this.now()) {
      throw new ValidationError([{ path: 'expires_at', message: 'must be in the future' }]);
    }
    const key = KEY_PREFIX[input.kind] + randomBase62(SECRET_LENGTH);
    const doc: ApiKeyDoc = {
      _id: newId('key'),
      kind: input.kind,
      workspace_id: input.kind === 'workspace' ? input.ownerId : null,
      partner_id: input.kind === 'partner' ? input.ownerId : null,
      name: input.name ?? null,
      prefix: key.slice(0, KEY_PREFIX[input.kind].length + DISPLAY_PREFIX_LENGTH),
      key_hash: hashKey(key),
      scopes: [...input.scopes],
      created_at: new Date(this.now()),
      expires_at: input.expiresAt ?? null,
      revoked_at: null,
      last_used_at: null,
    };
    await this.deps.keys.insert(doc);
    const { key_hash: _hash, ...record } = doc;
    return { key, record };
  }

  /**
   * Resolves a bearer token to its principal, or throws `unauthorized` (missing, unknown, revoked, expired).
   * A cached key is answered synchronously: no promise on the hot path; a miss returns the database lookup.
   */
  authenticate(token: string | undefined): Principal | Promise<Principal> {
    if (!token || !(token.startsWith(KEY_PREFIX.workspace) || token.startsWith(KEY_PREFIX.partner))) {
      throw new UnauthorizedError();
    }
    const nowMs = this.now();
    const entry = this.cache.get(token);
    if (entry && nowMs - entry.loadedAt <= this.deps.cacheTtlMs) return this.admit(entry.principal, nowMs);
    return this.load(hashKey(token)).then((principal) => {
      if (!principal) {
        this.cache.delete(token);
        throw new UnauthorizedError('The API key is unknown or has been revoked.');
      }
      this.remember(token, { principal, loadedAt: nowMs });
      return this.admit(principal, nowMs);
    });
  }

  private admit(principal: Principal, nowMs: number): Principal {
    const { key } = principal;
    if (key.revoked_at) throw new UnauthorizedError('The API key has been revoked.');
    if (key.expires_at && key.expires_at.getTime() <= nowMs) throw new UnauthorizedError('The API key has expired.');
    this.touch(key._id, nowMs);
    return principal;
  }

  /** Drops cached principals (from a broadcast invalidation, or locally after a change). */
  invalidate(kind: 'api_key' | 'workspace' | 'partner', id: string): void {
    for (const [token, entry] of this.cache) {
      const p = entry.principal;
      const matches =
        (kind === 'api_key' && p.key._id === id) ||
        (kind === 'workspace' && p.kind === 'workspace' && p.workspace._id === id) ||
        (kind === 'partner' && p.kind === 'partner' && p.partner._id === id);
      if (matches) this.cache.delete(token);
    }
  }

  subscribe(bus: CacheBus): void {
    bus.on((message) => {
      if (message.kind === 'all') this.cache.clear();
      else if (message.kind === 'api_key' || message.kind === 'workspace' || message.kind === 'partner') {
        this.invalidate(message.kind, message.id);
      }
    });
  }

  async revoke(id: string, bus: CacheBus | null): Promise<ApiKeyDoc> {
    const key = await this.deps.keys.revoke(id, new Date(this.now()));
    if (!key) throw new NotFoundError('API key');
    this.invalidate('api_key', id);
    await bus?.publish({ kind: 'api_key', id });
    return key;
  }

  private async load(hash: string): Promise<Principal | null> {
    const key = await this.deps.keys.findByHash(hash);
    if (!key) return null;
    const scopes = new Set(key.scopes);
    if (key.kind === 'workspace' && key.workspace_id) {
      const workspace = await this.deps.workspaces.findById(key.workspace_id);
      if (!workspace) return null;
      const plan = effectivePlan(workspace.plan_id, workspace.limits_override, workspace.capabilities_override);
      return {
        kind: 'workspace',
        key,
        scopes,
        workspace,
        plan,
        rateLimitPerMinute: plan.limits.rate_limit_per_minute ?? this.deps.defaultRateLimits.workspacePerMinute,
      };
    }
    if (key.kind === 'partner' && key.partner_id) {
      const partner = await this.deps.partners.findById(key.partner_id);
      if (!partner) return null;
      return {
        kind: 'partner',
        key,
        scopes,
        partner,
        rateLimitPerMinute: partner.rate_limit_per_minute ?? this.deps.defaultRateLimits.partnerPerMinute,
      };
    }
    return null;
  }

  private remember(token: string, entry: CacheEntry): void {
    if (this.cache.size >= MAX_CACHED_KEYS) {
      // Maps iterate in insertion order: the first entry is the oldest loaded.
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(token, entry);
  }

  private touch(id: string, nowMs: number): void {
    const last = this.lastTouched.get(id) ?? 0;
    if (nowMs - last < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(id, nowMs);
    this.deps.keys.touch(id, new Date(nowMs)).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, key_id: id }, 'could not record key last use');
    });
  }
}
