import type { Db } from 'mongodb';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { Logger } from '../platform/logger.ts';
import type { LinkDoc, LinkStore } from '../links/link.store.ts';
import { DEFAULT_DOMAIN_ID } from '../links/domains.ts';
import { compileLink, compileWorkspace, type CompiledLink, type CompiledWorkspace } from './compile.ts';
import { loadRedirectSettings } from './settings.ts';

/** A short link ready to be decided on: the stored link and its compiled form. */
export interface ResolvedLink {
  link: LinkDoc;
  compiled: CompiledLink;
}

interface DomainRef {
  id: string;
  hostname: string;
}

interface Cached<T> {
  value: T;
  expiresAt: number;
}

export interface ResolverOptions {
  db: Db;
  links: LinkStore;
  bus: CacheBus | null;
  logger: Logger;
  defaultHostname: string;
  ttlMs: number;
  negativeTtlMs: number;
  maxEntries: number;
}

/** How long an entry served past its TTL (the database failing) is trusted before the database is asked again. */
const STALE_RETRY_MS = 5_000;
/** How long a visitor waits for the database when an expired entry could answer instead. */
const DB_PATIENCE_MS = 500;
const TIMED_OUT = Symbol('timed out');

/**
 * Host + slug → link, in three in-process caches (domains by Host header, links by `hostname/slug`, workspace
 * settings by id), each dropped by the `cache.invalidate` broadcast and bounded by a TTL as a safety net. "Not
 * found" is remembered for a short time, so slug enumeration cannot reach the database at request rate; concurrent
 * misses for one key share one query.
 */
export class LinkResolver {
  private readonly o: ResolverOptions;
  private readonly domains = new Map<string, Cached<DomainRef | null>>();
  private readonly links = new Map<string, Cached<ResolvedLink | null>>();
  private readonly workspaces = new Map<string, Cached<CompiledWorkspace | null>>();
  private readonly pending = new Map<string, Promise<ResolvedLink | null>>();
  private readonly pendingWorkspaces = new Map<string, Promise<CompiledWorkspace | null>>();
  private readonly defaultHost: string;
  /** Bumped by every invalidation: a load that started before one must not store what it read. */
  private epoch = 0;
  private staleServed = 0;
  private lastStaleWarning = 0;

  constructor(options: ResolverOptions) {
    this.o = options;
    this.defaultHost = options.defaultHostname.toLowerCase();
    options.bus?.on((message) => {
      this.epoch++;
      switch (message.kind) {
        case 'link':
          for (const key of message.keys ?? []) this.links.delete(key);
          break;
        case 'domain':
          // A domain's state changed (activated, deleted): forget every Host header that mapped to it, and the
          // negative entries too (a host that did not resolve may now).
          for (const [host, entry] of this.domains) {
            if (entry.value === null || entry.value.id === message.id || message.keys?.includes(entry.value.hostname)) this.domains.delete(host);
          }
          // Its links too: a hostname deleted and connected again by another workspace must not serve the old links.
          for (const hostname of message.keys ?? []) {
            const prefix = `${hostname}/`;
            for (const key of this.links.keys()) if (key.startsWith(prefix)) this.links.delete(key);
          }
          break;
        case 'workspace':
          this.workspaces.delete(message.id);
          break;
        case 'all':
          this.domains.clear();
          this.links.clear();
          this.workspaces.clear();
          break;
        default:
          break;
      }
    });
  }

  /** The cached answer when there is a fresh one (no promise, no allocation): null is a remembered miss; undefined, nothing fresh. */
  peek(host: string, slug: string, now: number): ResolvedLink | null | undefined {
    const domain = this.domains.get(host);
    if (domain === undefined || domain.expiresAt <= now) return undefined;
    if (domain.value === null) return null;
    const entry = this.links.get(`${domain.value.hostname}/${slug}`);
    if (entry === undefined || entry.expiresAt <= now) return undefined;
    return entry.value;
  }

  /** Resolves from the database (after a `peek` miss). */
  async load(host: string, slug: string): Promise<ResolvedLink | null> {
    const key = `${host}\n${slug}`;
    let promise = this.pending.get(key);
    if (!promise) {
      promise = this.fetch(host, slug).finally(() => this.pending.delete(key));
      this.pending.set(key, promise);
    }
    return promise;
  }

  private async fetch(host: string, slug: string): Promise<ResolvedLink | null> {
    const epoch = this.epoch;
    const now = Date.now();
    const domain = await this.domainOf(host, now, epoch);
    if (domain === null) return null;
    const linkKey = `${domain.hostname}/${slug}`;
    const cached = this.links.get(linkKey);
    if (cached && cached.expiresAt > now) return cached.value;

    const read = await this.orStale(this.links, linkKey, now, async () => {
      const link = await this.o.links.findBySlug(domain.id, slug);
      return link ? { link, compiled: compileLink(link) } : null;
    });
    if (!read.stale && epoch === this.epoch) this.store(this.links, linkKey, read.value, now);
    return read.value;
  }

  /**
   * Reads from MongoDB; when that fails, or is slower than DB_PATIENCE_MS, and an expired entry is still held, serves
   * it a little longer instead: a link that resolved minutes ago keeps redirecting through a database outage (a
   * change would have dropped the entry through the broadcast). Without an entry the read stands, however it ends.
   */
  private async orStale<T>(map: Map<string, Cached<T | null>>, key: string, now: number, read: () => Promise<T | null>): Promise<{ value: T | null; stale: boolean }> {
    const attempt = read();
    const held = map.get(key);
    if (held === undefined) return { value: await attempt, stale: false };
    let timer: NodeJS.Timeout | undefined;
    const patience = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMED_OUT), DB_PATIENCE_MS);
    });
    let failure: unknown;
    try {
      const result = await Promise.race([attempt, patience]);
      if (result !== TIMED_OUT) return { value: result, stale: false };
      failure = new Error(`no answer within ${DB_PATIENCE_MS} ms`);
      attempt.catch(() => undefined);
    } catch (error) {
      failure = error;
    } finally {
      clearTimeout(timer);
    }
    held.expiresAt = now + STALE_RETRY_MS;
    this.staleServed++;
    if (now - this.lastStaleWarning > 10_000) {
      this.lastStaleWarning = now;
      this.o.logger.warn({ err: failure, stale_served: this.staleServed }, 'database unavailable: serving cached entries past their TTL');
    }
    return { value: held.value, stale: true };
  }

  private async domainOf(host: string, now: number, epoch: number): Promise<DomainRef | null> {
    const cached = this.domains.get(host);
    if (cached && cached.expiresAt > now) return cached.value;
    const bare = host.replace(/:\d+$/, '');
    if (host === this.defaultHost || bare === this.defaultHost) {
      const value = { id: DEFAULT_DOMAIN_ID, hostname: this.defaultHost };
      this.store(this.domains, host, value, now);
      return value;
    }
    const read = await this.orStale(this.domains, host, now, async () => {
      const doc = await this.o.db
        .collection<{ _id: string; hostname: string; status: string }>('domains')
        .findOne({ hostname: bare, status: 'active' }, { projection: { _id: 1, hostname: 1 } });
      return doc ? { id: doc._id, hostname: doc.hostname } : null;
    });
    if (!read.stale && epoch === this.epoch) this.store(this.domains, host, read.value, now);
    return read.value;
  }

  /** The workspace's compiled redirect settings when cached and fresh, else undefined. */
  peekWorkspace(workspaceId: string, now: number): CompiledWorkspace | null | undefined {
    const cached = this.workspaces.get(workspaceId);
    return cached === undefined || cached.expiresAt <= now ? undefined : cached.value;
  }

  loadWorkspace(workspaceId: string): Promise<CompiledWorkspace | null> {
    let promise = this.pendingWorkspaces.get(workspaceId);
    if (!promise) {
      promise = this.fetchWorkspace(workspaceId, Date.now(), this.epoch).finally(() => this.pendingWorkspaces.delete(workspaceId));
      this.pendingWorkspaces.set(workspaceId, promise);
    }
    return promise;
  }

  private async fetchWorkspace(workspaceId: string, now: number, epoch: number): Promise<CompiledWorkspace | null> {
    const read = await this.orStale(this.workspaces, workspaceId, now, async () => {
      const settings = await loadRedirectSettings(this.o.db, workspaceId);
      return settings ? compileWorkspace(settings) : null;
    });
    if (!read.stale && epoch === this.epoch) this.store(this.workspaces, workspaceId, read.value, now);
    return read.value;
  }


  private store<T>(map: Map<string, Cached<T | null>>, key: string, value: T | null, now: number): void {
    const ttl = value === null ? this.o.negativeTtlMs : this.o.ttlMs;
    if (ttl <= 0) return;
    // Oldest first out: a Map iterates in insertion order, and a refreshed key is re-inserted at the end.
    map.delete(key);
    if (map.size >= this.o.maxEntries) {
      const oldest = map.keys().next();
      if (!oldest.done) map.delete(oldest.value);
    }
    map.set(key, { value, expiresAt: now + ttl });
  }

  /** Entries currently held (for the cache-size gauge). */
  size(): number {
    return this.links.size;
  }
}
