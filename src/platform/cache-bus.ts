import type { Nats } from './nats.ts';
import type { Logger } from './logger.ts';

/** What changed; every pod that caches it drops its copy. */
export interface Invalidation {
  /**
   * `user`: a session of theirs ended, their password changed, or one of their memberships went. `all`: anything may
   * have changed (the pod was cut off from NATS and may have missed broadcasts), every cache drops everything.
   */
  kind: 'api_key' | 'workspace' | 'partner' | 'link' | 'domain' | 'webhook' | 'user' | 'all';
  id: string;
  /** Extra lookup keys some caches are indexed by (a key hash, a host + slug). */
  keys?: string[];
}

type Handler = (message: Invalidation) => void;

/**
 * Broadcast of cache invalidations over a core NATS subject (DESIGN: `cache.invalidate`): no persistence is wanted,
 * a pod that was not connected has no stale cache to drop beyond its own TTL.
 */
export class CacheBus {
  private readonly nats: Nats;
  private readonly logger: Logger;
  private readonly handlers: Handler[] = [];
  private subscribed = false;

  constructor(nats: Nats, logger: Logger) {
    this.nats = nats;
    this.logger = logger;
  }

  on(handler: Handler): void {
    this.handlers.push(handler);
    if (this.subscribed) return;
    this.subscribed = true;
    // Broadcasts sent while this pod was disconnected are lost (core NATS keeps nothing), so once it is back, every
    // cache starts afresh rather than serve what it may have missed being told about until its TTL.
    void (async () => {
      for await (const status of this.nats.nc.status()) {
        if (status.type !== 'reconnect') continue;
        this.logger.info('nats reconnected: every cache is dropped, broadcasts may have been missed meanwhile');
        for (const h of this.handlers) h({ kind: 'all', id: '' });
      }
    })();
    const sub = this.nats.nc.subscribe(this.nats.subjects.cacheInvalidate);
    void (async () => {
      for await (const msg of sub) {
        let message: Invalidation;
        try {
          message = msg.json<Invalidation>();
        } catch {
          this.logger.warn('ignored a malformed cache invalidation');
          continue;
        }
        for (const h of this.handlers) h(message);
      }
    })();
  }

  /** Publishes and flushes, so the caller knows the server has the message when this resolves. */
  async publish(message: Invalidation): Promise<void> {
    // Local handlers first: the pod that made the change must never serve its own stale copy.
    for (const h of this.handlers) h(message);
    try {
      this.nats.nc.publish(this.nats.subjects.cacheInvalidate, JSON.stringify(message));
      await this.flushed();
    } catch (error) {
      this.logger.error({ err: error, invalidation: message }, 'cache invalidation not broadcast');
    }
  }

  /** The flush under way, and the one that follows it for messages published after it was sent. */
  private flushing: Promise<void> | null = null;
  private following: Promise<void> | null = null;

  /**
   * Resolves once the server has everything published so far. A flush is a PING the server answers after the
   * messages before it: concurrent publishers share one (a create per request would otherwise cost a round trip to
   * NATS each). A message published while a flush is under way waits for the next one, sent after it.
   */
  private flushed(): Promise<void> {
    if (this.following) return this.following;
    if (!this.flushing) return this.startFlush();
    const ignore = () => undefined;
    this.following = this.flushing.then(ignore, ignore).then(() => {
      this.following = null;
      return this.startFlush();
    });
    return this.following;
  }

  private startFlush(): Promise<void> {
    const flush = this.nats.nc.flush();
    this.flushing = flush;
    const done = () => {
      if (this.flushing === flush) this.flushing = null;
    };
    flush.then(done, done);
    return flush;
  }
}
