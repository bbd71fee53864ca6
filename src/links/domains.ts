import type { Db } from 'mongodb';
import type { CacheBus } from '../platform/cache-bus.ts';

/** The id of the platform's own short domain, available to every workspace. */
export const DEFAULT_DOMAIN_ID = 'dom_default';

export interface ResolvedDomain {
  id: string;
  hostname: string;
  /** Origin of short URLs on it, e.g. `https://lnk.example.com`. */
  baseUrl: string;
}

/**
 * Which domains a workspace may put links on: the default short domain, and its own custom domains once active
 * (the Domains API and operator record those in `domains`). Also answers whether a URL points back at one of our
 * short domains, which would make a redirect loop.
 *
 * Subscribed to the cache bus (`subscribe`), it answers that question from memory: the hostnames of every domain
 * record, read once and read again after any `domain` invalidation (a domain connected, changed or removed on any
 * replica), after `all` (NATS reconnected: broadcasts may have been missed), and at most `hostsTtlMs` after the last
 * read. Without a bus (tools), each question is one query, as before.
 */
export class DomainDirectory {
  private readonly db: Db;
  private readonly defaultDomain: ResolvedDomain;
  private readonly hostsTtlMs: number;
  private cached = false;
  /** Every domain record's hostname, when read since the last invalidation and within the TTL. */
  private hosts: ReadonlySet<string> | null = null;
  private hostsReadAt = 0;
  /** The read under way, shared by the questions asked meanwhile; dropped by an invalidation. */
  private reading: Promise<ReadonlySet<string>> | null = null;
  /** Counts invalidations: a read that an invalidation overtook answers its own callers but is not kept. */
  private generation = 0;

  constructor(db: Db, defaultHostname: string, defaultBaseUrl: string, options: { hostsTtlMs?: number } = {}) {
    this.db = db;
    this.defaultDomain = { id: DEFAULT_DOMAIN_ID, hostname: defaultHostname.toLowerCase(), baseUrl: defaultBaseUrl };
    this.hostsTtlMs = options.hostsTtlMs ?? 60_000;
  }

  /** Keeps the hostnames in memory (unless the TTL is 0), dropped on every `domain` and `all` invalidation. */
  subscribe(bus: CacheBus): void {
    // A TTL of 0 keeps nothing: a query per question, as without a bus.
    this.cached = this.hostsTtlMs > 0;
    bus.on((message) => {
      if (message.kind === 'domain' || message.kind === 'all') this.forgetHosts();
    });
  }

  private forgetHosts(): void {
    this.generation++;
    this.hosts = null;
    this.reading = null;
  }

  /** Every domain record's hostname (any workspace, any status), from memory when fresh. */
  private knownHosts(): ReadonlySet<string> | Promise<ReadonlySet<string>> {
    if (this.hosts && Date.now() - this.hostsReadAt < this.hostsTtlMs) return this.hosts;
    if (this.reading) return this.reading;
    const generation = this.generation;
    const reading = (async () => {
      const docs = await this.db.collection<{ hostname: string }>('domains').find({}, { projection: { _id: 0, hostname: 1 } }).toArray();
      const hosts = new Set(docs.map((d) => d.hostname));
      if (generation === this.generation) {
        this.hosts = hosts;
        this.hostsReadAt = Date.now();
      }
      return hosts;
    })();
    this.reading = reading;
    // Failed or done, the next question reads again (or finds `hosts`).
    const settle = () => {
      if (this.reading === reading) this.reading = null;
    };
    reading.then(settle, settle);
    return reading;
  }

  get default(): ResolvedDomain {
    return this.defaultDomain;
  }

  /** The domain when the workspace may use it: its own, or one of its partner's (a partner domain). */
  async resolve(workspaceId: string, domainId: string | undefined): Promise<ResolvedDomain | null> {
    if (domainId === undefined || domainId === DEFAULT_DOMAIN_ID) return this.defaultDomain;
    const doc = await this.db
      .collection<{ _id: string; workspace_id: string; owner_kind?: string; hostname: string; status: string }>('domains')
      .findOne({ _id: domainId, status: 'active' });
    if (!doc) return null;
    if (doc.workspace_id !== workspaceId) {
      if (doc.owner_kind !== 'partner') return null;
      const ws = await this.db.collection<{ _id: string; partner_id: string | null }>('workspaces').findOne({ _id: workspaceId }, { projection: { partner_id: 1 } });
      if (ws?.partner_id !== doc.workspace_id) return null;
    }
    return { id: doc._id, hostname: doc.hostname, baseUrl: `https://${doc.hostname}` };
  }

  /** True when the URL's host is one of our short domains (default or any custom one, of any workspace). */
  async isShortDomain(url: string): Promise<boolean> {
    const hosts = hostsOf(url);
    if (!hosts) return false;
    if (hosts.includes(this.defaultDomain.hostname)) return true;
    if (this.cached) {
      const known = await this.knownHosts();
      return hosts.some((host) => known.has(host));
    }
    const hit = await this.db.collection('domains').findOne({ hostname: { $in: hosts } }, { projection: { _id: 1 } });
    return hit !== null;
  }

  /** `isShortDomain` for many URLs at once: one query for all their hosts, then a test per URL without I/O. */
  async shortDomainHosts(urls: readonly string[]): Promise<(url: string) => boolean> {
    const all = new Set<string>();
    for (const url of urls) for (const host of hostsOf(url) ?? []) if (host !== this.defaultDomain.hostname) all.add(host);
    const short = new Set<string>([this.defaultDomain.hostname]);
    if (all.size > 0 && this.cached) {
      const known = await this.knownHosts();
      for (const host of all) if (known.has(host)) short.add(host);
    } else if (all.size > 0) {
      const hits = await this.db.collection<{ hostname: string }>('domains').find({ hostname: { $in: [...all] } }, { projection: { _id: 0, hostname: 1 } }).toArray();
      for (const hit of hits) short.add(hit.hostname);
    }
    return (url) => (hostsOf(url) ?? []).some((host) => short.has(host));
  }
}

/** A URL's host with its port, and without it (the same when it has none); null when it is not a URL. */
function hostsOf(url: string): string[] | null {
  let host: string;
  try {
    host = new URL(url).host.toLowerCase();
  } catch {
    return null;
  }
  const bare = host.replace(/:\d+$/, '');
  return bare === host ? [host] : [host, bare];
}
