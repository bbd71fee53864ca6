import type { CacheBus, Invalidation } from '../platform/cache-bus.ts';
import { Lru } from '../platform/lru.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { SessionDoc } from '../tenancy/session.store.ts';

/** What a dashboard request to /v1 resolves to: its session (for the CSRF check) and the principal it acts as. */
export interface SessionGrant {
  session: SessionDoc;
  principal: Principal;
}

interface Entry extends SessionGrant {
  loadedAt: number;
}

export interface SessionCacheOptions {
  /** How long a grant is answered from memory at most; the bound for changes made where no broadcast reaches. */
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}

/**
 * Dashboard grants by session token and context, so a signed-in user's calls to /v1 cost no database round trip,
 * as a cached API key's do. Every change that takes a grant away is broadcast (`user`: a session of theirs ended,
 * their password changed, a membership of theirs went; `workspace`/`partner`: the plan or limits changed), and every
 * replica drops the grants it touches; the TTL bounds whatever no broadcast announces.
 */
export class SessionCache {
  private readonly entries: Lru<Entry>;
  private readonly ttlMs: number;
  private readonly now: () => number;
  /** Counts drops, so a grant loaded while one happened is not remembered stale. */
  private drops = 0;

  constructor(options: SessionCacheOptions) {
    this.entries = new Lru<Entry>(options.ttlMs > 0 ? options.maxEntries : 0);
    this.ttlMs = options.ttlMs;
    this.now = options.now ?? Date.now;
  }

  /** The grant remembered for this token in this context, while fresh and while its session is still in date. */
  get(token: string, context: string): SessionGrant | undefined {
    const id = cacheId(token, context);
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    const nowMs = this.now();
    const { session } = entry;
    if (nowMs - entry.loadedAt > this.ttlMs || session.expires_at.getTime() <= nowMs || session.idle_expires_at.getTime() <= nowMs) {
      this.entries.delete(id);
      return undefined;
    }
    return entry;
  }

  /** A mark to pass to `remember` for a grant about to be loaded. */
  get mark(): number {
    return this.drops;
  }

  /** Keeps a grant loaded since `mark`, unless a drop came in meanwhile (it may concern what was read). */
  remember(token: string, context: string, grant: SessionGrant, mark: number): void {
    if (mark !== this.drops) return;
    this.entries.set(cacheId(token, context), { ...grant, loadedAt: this.now() });
  }

  /** Drops every grant a change affects. */
  drop(message: Invalidation): void {
    this.drops += 1;
    this.entries.deleteWhere(({ session, principal }) => {
      switch (message.kind) {
        case 'all':
          return true;
        case 'user':
          return session.user_id === message.id;
        case 'workspace':
          return principal.kind === 'workspace' && principal.workspace._id === message.id;
        case 'partner':
          return principal.kind === 'partner' && principal.partner._id === message.id;
        default:
          return false;
      }
    });
  }

  subscribe(bus: CacheBus): void {
    bus.on((message) => this.drop(message));
  }
}

function cacheId(token: string, context: string): string {
  return `${context}\u0000${token}`;
}
