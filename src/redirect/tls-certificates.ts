// The redirect's half of self-managed TLS: the certificate of each active custom domain, served by SNI from a
// bounded cache loaded from MongoDB (the worker obtains and renews them, domains/tls-provisioner.ts), and the answers
// to the CA's HTTP-01 challenges on the plain HTTP listener. A name that is not an active custom domain with a
// certificate fails the handshake: no handshake ever causes a certificate order.
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Middleware } from 'koa';
import type { Collection } from 'mongodb';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { Logger } from '../platform/logger.ts';
import { Lru } from '../platform/lru.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import type { DomainTlsStore } from '../domains/tls.store.ts';
import type { DomainDoc } from '../domains/domain.store.ts';
import { bareHost } from '../domains/hostname.ts';

export interface SniCertificatesOptions {
  store: DomainTlsStore;
  domains: Collection<DomainDoc>;
  /** Opens the sealed private keys (purpose TLS_KEY_SEAL_PURPOSE). */
  keyBox: SecretBox;
  bus: CacheBus | null;
  logger: Logger;
  /** Hosts kept (certificates and "none" answers together). */
  maxEntries?: number;
  /** How long "no certificate for this name" is remembered: random names cannot hammer the database. */
  negativeTtlMs?: number;
  /** A certificate is re-read after this long even when no invalidation arrived (a missed broadcast). */
  ttlMs?: number;
  now?: () => number;
}

interface Entry {
  context: SecureContext | null;
  expiresAt: number;
}

const HOSTNAME = /^[a-z0-9.-]{1,253}$/;

export class SniCertificates {
  private readonly o: SniCertificatesOptions;
  private readonly cache: Lru<Entry>;
  private readonly loading = new Map<string, Promise<Entry>>();
  private readonly now: () => number;

  constructor(options: SniCertificatesOptions) {
    this.o = options;
    this.cache = new Lru<Entry>(options.maxEntries ?? 10_000);
    this.now = options.now ?? Date.now;
    // A new or renewed certificate, a deleted or failed domain: the worker's broadcast names the host.
    // `all`: back from a NATS outage, whose broadcasts were never heard: every host is read again.
    options.bus?.on((message) => {
      if (message.kind === 'all') this.cache.deleteWhere(() => true);
      if (message.kind !== 'domain') return;
      for (const key of message.keys ?? []) this.cache.delete(bareHost(key));
    });
  }

  /** For tls.createServer: the host's context, or an error that ends the handshake. */
  readonly callback = (servername: string, done: (error: Error | null, context?: SecureContext) => void): void => {
    this.context(servername).then(
      (context) => (context ? done(null, context) : done(new Error(`no certificate for "${servername}"`))),
      (error: unknown) => {
        this.o.logger.warn({ err: error, servername }, 'loading a TLS certificate failed');
        done(error instanceof Error ? error : new Error(String(error)));
      },
    );
  };

  async context(servername: string): Promise<SecureContext | null> {
    const host = bareHost(servername);
    if (!HOSTNAME.test(host)) return null;
    const cached = this.cache.get(host);
    if (cached && cached.expiresAt > this.now()) return cached.context;
    let pending = this.loading.get(host);
    if (!pending) {
      pending = this.load(host).finally(() => this.loading.delete(host));
      this.loading.set(host, pending);
    }
    return (await pending).context;
  }

  private async load(host: string): Promise<Entry> {
    const found = await this.o.store.certificateFor(host);
    const domain = found ? await this.o.domains.findOne({ _id: found.domainId, hostname: host, status: 'active' }, { projection: { _id: 1 } }) : null;
    let context: SecureContext | null = null;
    if (found && domain && found.certificate.not_after.getTime() > this.now()) {
      context = createSecureContext({ cert: found.certificate.pem, key: this.o.keyBox.open(found.certificate.key_sealed, found.domainId) });
    }
    const ttl = context ? (this.o.ttlMs ?? 600_000) : (this.o.negativeTtlMs ?? 10_000);
    const entry = { context, expiresAt: this.now() + ttl };
    this.cache.set(host, entry);
    return entry;
  }
}

const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

/** GET /.well-known/acme-challenge/<token> on the host being validated: the key authorization, else 404. */
export function acmeChallenges(store: DomainTlsStore): Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith(CHALLENGE_PREFIX) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    const token = ctx.path.slice(CHALLENGE_PREFIX.length);
    const answer = TOKEN.test(token) ? await store.challenge(token, bareHost(ctx.get('host'))) : null;
    if (answer === null) {
      await next();
      return;
    }
    ctx.status = 200;
    ctx.type = 'text/plain';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = answer;
  };
}
