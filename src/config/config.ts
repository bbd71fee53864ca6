import { existsSync, readFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { constrainedMemory } from 'node:process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMPTY_BLOCKLIST, mergeBlocklists, normaliseHost, parseBlocklist, type Blocklist } from './link-safety.ts';

// The only reader of process.env. Every process receives the frozen result; a bad variable is named at start-up,
// all of them at once, so an operator fixes a deployment in one round.

export type ProcessName = 'api' | 'redirect' | 'worker' | 'all-in-one';

export interface Config {
  readonly process: ProcessName;
  readonly env: 'development' | 'production' | 'test';
  readonly host: string;
  readonly apiPort: number;
  readonly redirectPort: number;
  readonly workerPort: number;
  readonly publicApiUrl: string;
  readonly docsBaseUrl: string;
  readonly shortLinkBaseUrl: string;
  readonly defaultShortDomain: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Log bytes held while stdout is not being read; beyond, lines are dropped and counted. */
  readonly logBufferMaxBytes: number;
  readonly mongo: { readonly uri: string | null; readonly db: string };
  readonly devdb: { readonly port: number; readonly dataDir: string | null; readonly youngGenerationMb: number; readonly heapMb: number; readonly cacheMb: number };
  readonly nats: {
    /** NATS_URL as given, normalised: one server, or several comma-separated (the members of a cluster). */
    readonly url: string;
    /** Every server of NATS_URL; the client connects to any that answers and fails over to the others. */
    readonly servers: readonly string[];
    readonly prefix: string;
    readonly duplicateWindowMs: number;
    /**
     * NATS_REPLICAS: copies JetStream keeps of every stream (its consumers follow); null: three when the cluster has
     * three or more nodes, else one. Existing streams are brought to it at start.
     */
    readonly replicas: number | null;
  };
  readonly bodyLimitBytes: number;
  /** How long a client may take to send a whole request before it is answered 408. */
  readonly requestTimeoutMs: number;
  readonly rateLimit: { readonly workspacePerMinute: number; readonly partnerPerMinute: number };
  readonly idempotencyTtlHours: number;
  readonly keyCacheTtlMs: number;
  readonly outboxPollMs: number;
  readonly shutdownTimeoutMs: number;
  readonly secretKey: string;
  /** Private targets are allowed by default only in all-in-one, a development run on one machine. */
  readonly webhooks: { readonly allowPrivateTargets: boolean; readonly secretGraceHours: number };
  /** The worker's delivery of webhooks. */
  readonly webhookDelivery: {
    /** Delay before each retry, in ms (spec 6.4: 1m,5m,30m,2h,12h); its length is the number of retries. */
    readonly retryScheduleMs: readonly number[];
    /** How long a receiver has to answer a delivery POST. */
    readonly timeoutMs: number;
    /** JetStream ack_wait of the delivery consumer: a delivery held this long by a dead worker is redelivered. */
    readonly ackWaitMs: number;
  };
  /** Outgoing e-mail (the failing-endpoint notice of spec 6.4); no SMTP URL: nothing is sent, a warning is logged. */
  readonly mail: { readonly smtpUrl: string | null; readonly from: string };
  /** The redirect process: caches, visitor profile sources, privacy, interstitials, click capture. */
  readonly redirect: {
    /** How long a resolved link stays cached when no invalidation arrives (the broadcast normally drops it first). */
    readonly cacheTtlMs: number;
    /** How long "no such link" is remembered, so slug enumeration cannot hammer the database. */
    readonly negativeCacheTtlMs: number;
    readonly cacheMaxEntries: number;
    /** MaxMind-format databases (GeoIP2/GeoLite2 City, ASN, Anonymous IP); each optional. */
    readonly geoip: { readonly cityDb: string | null; readonly asnDb: string | null; readonly anonymousDb: string | null; readonly openData: boolean };
    /** Believe CDN/edge headers (CF-IPCountry, X-Geo-*, X-Forwarded-For…); only behind a proxy that sets them. */
    readonly trustEdgeHeaders: boolean;
    /** How many proxies in front of us append to X-Forwarded-For (0: use the socket address). */
    readonly trustedProxyHops: number;
    /** How a visitor IP is kept in a click record: truncated (/24, /48), hashed (keyed, daily salt) or not at all. */
    readonly ipStorage: 'truncate' | 'hash' | 'none';
    /** Lifetime of the cookie a correct password sets. */
    readonly passwordCookieTtlSeconds: number;
    /** Wrong passwords allowed per visitor and link in the window before the form is locked. */
    readonly passwordMaxAttempts: number;
    readonly passwordAttemptWindowMs: number;
    /** Clicks held in memory while NATS is unreachable; beyond it the oldest are dropped (and counted). */
    readonly clickBufferMax: number;
    /**
     * Where clicks beyond the buffer wait on local disk while NATS is unreachable (CLICK_SPOOL_DIR; `none`: no
     * spool, they are dropped), and how much of it they may fill (CLICK_SPOOL_MAX_MB).
     */
    readonly clickSpoolDir: string | null;
    readonly clickSpoolMaxBytes: number;
    /** How often rotator click counts and destination health are re-read from MongoDB. */
    readonly counterRefreshMs: number;
    /**
     * Also write a request-log line for visits recorded as clicks (successful GETs). Off by default: the click on
     * the CLICKS stream is that request's record, with more in it; errors, 4xx, POST and HEAD are always logged.
     */
    readonly accessLogClicks: boolean;
  };
  /** Click ingestion in the worker. */
  readonly clicks: { readonly batchSize: number; readonly batchWaitMs: number; readonly healthCheckIntervalMs: number };
  /** Destinations' own social cards, read by the worker for links without a custom preview (src/links/preview-fetch.ts). */
  readonly previews: { readonly intervalMs: number; readonly refreshMs: number; readonly timeoutMs: number; readonly maxBytes: number };
  /** `link.clicked` webhook deliveries: at most `batchSize` clicks per delivery, sent at the latest `batchWaitMs` after the first. */
  readonly clickWebhooks: { readonly batchSize: number; readonly batchWaitMs: number };
  /** Analytics: rollups, raw click retention, CSV exports. */
  readonly analytics: {
    /** Raw clicks are kept this many days at most (a plan may keep them for less); rollups are kept regardless. */
    readonly clickRetentionDays: number;
    /** Ingest clicks into the rollups (off only to measure what the rollups cost). */
    readonly rollups: boolean;
    /** How often the worker merges the parts of ended rollup buckets into one (settler.ts). */
    readonly settleIntervalMs: number;
    /** CSV exports running at once per workspace (across API pods); one more answers 429. */
    readonly exportsPerWorkspace: number;
    /** Bytes of rollup parts an api process keeps from one query to the next (part-cache.ts); 0 turns it off. */
    readonly partCacheBytes: number;
    /** How long the click ingestion may hold a batch before JetStream redelivers it (a dead worker's batch waits this long). */
    readonly clickAckWaitMs: number;
  };
  /** Custom domains: where `Domain` objects are created, and what customers point their DNS at. */
  readonly domains: {
    /** `off`: no cluster (connecting a domain answers 503 not_configured). */
    readonly kube: 'off' | 'in-cluster' | 'kubeconfig';
    readonly kubeconfig: string | null;
    readonly namespace: string;
    /** The hostname customers CNAME to (our ingress); null when only A records are offered. */
    readonly cnameTarget: string | null;
    /** IPv4 addresses for an apex domain's A records. */
    readonly aTargets: readonly string[];
    /** TXT record name prefix: `<prefix>.<hostname>` holds the verification token. */
    readonly txtPrefix: string;
  };
  /**
   * Custom domains without Kubernetes (docs/custom-domains-tls.md): the worker verifies DNS and obtains certificates
   * through ACME HTTP-01, the redirect answers the challenges and terminates TLS by SNI. Off while `acme` is null.
   */
  readonly tls: {
    /** TLS_PORT: where the redirect serves HTTPS for custom domains; null: no TLS listener. */
    readonly port: number | null;
    /** ACME_DIRECTORY_URL, ACME_CONTACT_EMAIL, ACME_CA_FILE (a PEM bundle trusted for the directory's HTTPS). */
    readonly acme: { readonly directoryUrl: string; readonly contactEmail: string | null; readonly caFile: string | null } | null;
    /** How often the worker looks for domains to verify, certificates to issue and to renew. */
    readonly sweepIntervalMs: number;
    /** Part of a certificate's lifetime after which it is renewed (2/3: a 90-day certificate at day 60). */
    readonly renewAtFraction: number;
    /** Delays before retrying a failed issuance or renewal; the last repeats (CAs limit failed validations). */
    readonly issuanceBackoffMs: readonly number[];
    /** The DNS check, as the operator makes it: resolvers (empty: the system's), backoff, give-up time. */
    readonly dns: { readonly resolvers: readonly ResolverAddress[]; readonly backoffMs: readonly number[]; readonly giveUpAfterMs: number };
  };
  /** Conversions, abuse reports and link safety. */
  readonly conversions: {
    /** How long POST /conversions waits for a genuine click the ingestion has not written yet. */
    readonly clickWaitMs: number;
  };
  /** Destinations refused on every URL field of a link (LINK_BLOCKLIST_HOSTS, LINK_BLOCKLIST_FILE). */
  readonly linkBlocklist: Blocklist;
  /** Links exports (GET /links/export) of a workspace running at once, across API pods (LINK_EXPORTS_PER_WORKSPACE). */
  readonly linkExportsPerWorkspace: number;
  /** The dashboard: where its build is served from, sessions, sign-in limits, and the optional identity provider. */
  readonly dashboard: {
    /** The built single-page app (web/dist), served under /dashboard/. */
    readonly dir: string;
    /** A session unused this long ends (12 h); none lives past the absolute lifetime (30 days). */
    readonly sessionIdleMs: number;
    readonly sessionAbsoluteMs: number;
    /** How long an e-mailed sign-in link works (15 min), and an invitation (7 days). */
    readonly signInLinkTtlMs: number;
    readonly inviteTtlMs: number;
    /**
     * Sign-in attempts allowed in the window, then 429 with Retry-After: per account and client address together
     * (a guesser elsewhere does not lock the owner out), per address across accounts, and a much higher ceiling per
     * account from every address together (distributed guessing).
     */
    readonly signInMaxAttempts: number;
    readonly signInMaxAttemptsPerIp: number;
    readonly signInMaxAttemptsPerAccount: number;
    readonly signInWindowMs: number;
    /** How long an e-mailed password reset link works (30 min); reset e-mails per account and per address an hour. */
    readonly passwordResetTtlMs: number;
    readonly passwordResetsPerAccount: number;
    readonly passwordResetsPerIp: number;
    /** OpenID Connect sign-in; null when OIDC_ISSUER is not set. */
    readonly oidc: { readonly issuer: string; readonly clientId: string; readonly clientSecret: string | null; readonly name: string } | null;
  };
  /** The authorization server MCP hosts sign in with (OAuth 2.1): how long its access and refresh tokens live. */
  readonly oauth: {
    readonly accessTokenTtlSeconds: number;
    readonly refreshTokenTtlSeconds: number;
  };
  /** The partner platform: client quotas, the platform's fee, dunning and payouts. */
  readonly partner: {
    /** Client workspaces a partner may hold unless its record sets another quota. */
    readonly clientQuota: number;
    /** The platform's fee on every client payment, in basis points of the gross (rounded down). */
    readonly platformFeeBps: number;
    /** The length of one "day" of a partner's grace period: 24 h; tests and demos compress it. */
    readonly graceDayMs: number;
    /** How often the worker looks for clients whose grace ran out and for periods to pay out. */
    readonly billingSweepMs: number;
    /**
     * Refused posts to the public Stripe ingestion URL (a forged, stale or missing signature, or a partner without a
     * secret or unknown) counted per minute per source address and per partner; past either, refusals answer 429.
     */
    readonly ingestRefusedPerMinPerIp: number;
    readonly ingestRefusedPerMinPerPartner: number;
  };
  /** Abuse reports: how many one address may file per minute (the form and the public endpoint together). */
  readonly reports: { readonly perMinute: number };
  /** Alert rules: how often the worker evaluates them. */
  readonly alerts: { readonly evalIntervalMs: number };
  /** Import jobs in the worker (docs/importing/README.md). */
  readonly imports: {
    /** How often the worker looks for queued jobs (and for jobs whose worker died). */
    readonly pollMs: number;
    /** Lease on a running job: a dead worker's job is resumed by another this long after its last batch at most. */
    readonly leaseMs: number;
    /** Sources on loopback and private addresses (a self-hosted Shlink on the same network); development default. */
    readonly allowPrivateSources: boolean;
  };
}

type Env = Record<string, string | undefined>;

/**
 * Told the default of each variable as it is read: how scripts/config-docs.ts shows the defaults in
 * docs/configuration.md from the code that applies them, so the page cannot state another.
 */
export type DefaultObserver = (name: string, fallback: string) => void;

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Collects problems instead of throwing on the first, so start-up reports every bad variable together. */
class Reader {
  readonly problems: string[] = [];
  private readonly env: Env;
  private readonly observe: DefaultObserver | undefined;
  constructor(env: Env, observe?: DefaultObserver) {
    this.env = env;
    this.observe = observe;
  }

  string(name: string, fallback: string): string {
    this.observe?.(name, fallback);
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    return raw;
  }

  optional(name: string): string | null {
    const raw = this.env[name];
    return raw === undefined || raw === '' ? null : raw;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    this.observe?.(name, String(fallback));
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^-?\d+$/.test(raw.trim())) {
      this.problems.push(`${name}: expected an integer, got "${raw}"`);
      return fallback;
    }
    const value = Number(raw);
    if (value < min || value > max) {
      this.problems.push(`${name}: must be between ${min} and ${max}, got ${value}`);
      return fallback;
    }
    return value;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    this.observe?.(name, fallback);
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name}: must be one of ${allowed.join(', ')}, got "${raw}"`);
      return fallback;
    }
    return raw as T;
  }

  boolean(name: string, fallback: boolean): boolean {
    this.observe?.(name, String(fallback));
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (raw === 'true' || raw === 'false') return raw === 'true';
    this.problems.push(`${name}: must be true or false, got "${raw}"`);
    return fallback;
  }

  /** A comma-separated list of durations (`100ms`, `30s`, `5m`, `2h`), each at least 1 ms, in milliseconds. */
  durations(name: string, fallback: string, minCount: number, maxCount: number): number[] {
    const raw = this.string(name, fallback);
    const parts = raw.split(',').map((part) => part.trim());
    const values = parts.map(parseDuration);
    if (parts.length < minCount || parts.length > maxCount) {
      this.problems.push(`${name}: expected ${minCount} to ${maxCount} comma-separated durations, got ${parts.length} in "${raw}"`);
    } else if (values.some((v) => v === null)) {
      this.problems.push(`${name}: each entry must be a whole number with a unit (ms, s, m or h) of at least 1 ms, got "${raw}"`);
    } else {
      return values as number[];
    }
    return fallback.split(',').map((part) => parseDuration(part.trim())!);
  }

  url(name: string, fallback: string, protocols: readonly string[]): string {
    return this.checkUrl(name, this.string(name, fallback), protocols);
  }

  /** A comma-separated list of URLs (blanks around the commas ignored), each checked as `url` checks one. */
  urls(name: string, fallback: string, protocols: readonly string[]): string[] {
    const raw = this.string(name, fallback);
    const parts = raw.split(',').map((part) => part.trim());
    if (parts.some((part) => part === '')) {
      this.problems.push(`${name}: empty entry in the comma-separated list "${raw}"`);
      return [fallback];
    }
    return parts.map((part) => this.checkUrl(name, part, protocols));
  }

  private checkUrl(name: string, raw: string, protocols: readonly string[]): string {
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        this.problems.push(`${name}: protocol must be ${protocols.join(' or ')}, got "${parsed.protocol}"`);
      }
    } catch {
      this.problems.push(`${name}: not a valid URL: "${raw}"`);
    }
    return raw.replace(/\/+$/, '');
  }
}

const PORT_MAX = 65535;
export const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

export interface ResolverAddress {
  readonly host: string;
  readonly port: number;
}

/** `10.0.0.53`, `10.0.0.53:5353`, `[::1]:53` or `::1`; null when it is none of these. */
export function parseResolver(text: string): ResolverAddress | null {
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(text);
  if (bracketed) return withPort(bracketed[1]!, bracketed[2]);
  const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(text);
  if (v4 && IPV4.test(v4[1]!)) return withPort(v4[1]!, v4[2]);
  if (/^[0-9a-fA-F:]+$/.test(text) && text.includes(':')) return { host: text, port: 53 };
  return null;
}

function withPort(host: string, port: string | undefined): ResolverAddress | null {
  const value = port === undefined ? 53 : Number(port);
  return value >= 1 && value <= PORT_MAX ? { host, port: value } : null;
}
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `250ms`, `30s`, `5m`, `2h` in milliseconds; null when malformed, below 1 ms or beyond 30 days. */
function parseDuration(text: string): number | null {
  const match = /^(\d{1,9})(ms|s|m|h)$/.exec(text);
  if (!match) return null;
  const ms = Number(match[1]) * DURATION_UNITS[match[2]!]!;
  return ms >= 1 && ms <= 30 * 86_400_000 ? ms : null;
}

/**
 * Three quarters of the memory this process may use (its cgroup's limit, else the machine's), in MiB: the heap
 * devdb's thread may grow to in the all-in-one. The rest is for the process's own heap, buffers and the page cache.
 */
export function defaultDevdbHeapMb(): number {
  const limit = constrainedMemory();
  const bytes = limit > 0 ? Math.min(limit, totalmem()) : totalmem();
  return Math.max(256, Math.floor((bytes * 0.75) / 1_048_576));
}

export function loadConfig(process: ProcessName, env: Env = globalThis.process.env, observe?: DefaultObserver): Config {
  const r = new Reader(env, observe);
  const nodeEnv = r.oneOf('NODE_ENV', process === 'all-in-one' ? 'development' : 'production', [
    'development',
    'production',
    'test',
  ] as const);
  const host = r.string('HOST', process === 'all-in-one' ? '127.0.0.1' : '0.0.0.0');
  const apiPort = r.int('API_PORT', 8080, 0, PORT_MAX);
  const redirectPort = r.int('REDIRECT_PORT', 8081, 0, PORT_MAX);
  const publicApiUrl = r.url('PUBLIC_API_URL', `http://localhost:${apiPort}`, ['http:', 'https:']);
  const shortLinkBaseUrl = r.url('SHORT_LINK_BASE_URL', `http://localhost:${redirectPort}`, ['http:', 'https:']);
  const mongoUri = r.optional('MONGODB_URI');
  if (mongoUri === null && process !== 'all-in-one') {
    r.problems.push('MONGODB_URI: required for the api, redirect and worker processes');
  }
  if (mongoUri !== null && !/^mongodb(\+srv)?:\/\//.test(mongoUri)) {
    r.problems.push('MONGODB_URI: must start with mongodb:// or mongodb+srv://');
  }
  const secretKey = r.optional('SECRET_KEY');
  if (secretKey !== null && secretKey.length < 32) {
    r.problems.push('SECRET_KEY: must be at least 32 characters');
  }
  if (secretKey === null && nodeEnv === 'production') {
    r.problems.push('SECRET_KEY: required in production (signs click ids and visitor cookies)');
  }

  const webhookTimeoutMs = r.int('WEBHOOK_TIMEOUT_MS', 10_000, 1, 120_000);
  const smtpUrl = r.optional('SMTP_URL');
  if (smtpUrl !== null) {
    try {
      const protocol = new URL(smtpUrl).protocol;
      if (protocol !== 'smtp:' && protocol !== 'smtps:') r.problems.push(`SMTP_URL: protocol must be smtp: or smtps:, got "${protocol}"`);
    } catch {
      r.problems.push('SMTP_URL: not a valid URL (smtp://user:pass@host:587 or smtps://…)');
    }
  }

  const natsServers = r.urls('NATS_URL', 'nats://127.0.0.1:4222', ['nats:', 'tls:']);
  const linkBlocklist = readBlocklist(r, env);
  const oidcIssuer = r.optional('OIDC_ISSUER') === null ? null : r.url('OIDC_ISSUER', '', ['https:', 'http:']);
  const oidcClientId = r.optional('OIDC_CLIENT_ID');
  if (oidcIssuer !== null && oidcClientId === null) r.problems.push('OIDC_CLIENT_ID: required when OIDC_ISSUER is set');

  const config: Config = {
    process,
    env: nodeEnv,
    host,
    apiPort,
    redirectPort,
    workerPort: r.int('WORKER_PORT', 8082, 0, PORT_MAX),
    publicApiUrl,
    docsBaseUrl: r.url('DOCS_BASE_URL', `${publicApiUrl}/docs`, ['http:', 'https:']),
    shortLinkBaseUrl,
    defaultShortDomain: r.string('DEFAULT_SHORT_DOMAIN', new URL(shortLinkBaseUrl).host),
    logLevel: r.oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    logBufferMaxBytes: r.int('LOG_BUFFER_MAX_BYTES', 8 * 1_048_576, 65_536, 1_073_741_824),
    mongo: { uri: mongoUri, db: r.string('MONGODB_DB', 'linkplane') },
    devdb: {
      port: r.int('DEVDB_PORT', 27017, 0, PORT_MAX),
      dataDir: r.optional('DEVDB_DATA_DIR') ?? (process === 'all-in-one' ? '.data/devdb' : null),
      youngGenerationMb: r.int('DEVDB_YOUNG_GENERATION_MB', 256, 16, 4096),
      heapMb: r.int('DEVDB_HEAP_MB', defaultDevdbHeapMb(), 256, 1_048_576),
      cacheMb: r.int('DEVDB_CACHE_MB', 64, 0, 65536),
    },
    nats: {
      url: natsServers.join(','),
      servers: natsServers,
      prefix: r.string('NATS_PREFIX', ''),
      duplicateWindowMs: r.int('NATS_DUPLICATE_WINDOW_MS', 3_600_000, 1000, 7 * 86_400_000),
      replicas: r.optional('NATS_REPLICAS') === null ? null : r.int('NATS_REPLICAS', 1, 1, 5),
    },
    bodyLimitBytes: r.int('BODY_LIMIT_BYTES', 1_048_576, 1024, 64 * 1_048_576),
    requestTimeoutMs: r.int('HTTP_REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000),
    rateLimit: {
      workspacePerMinute: r.int('RATE_LIMIT_WORKSPACE_PER_MIN', 600, 1, 100_000_000),
      partnerPerMinute: r.int('RATE_LIMIT_PARTNER_PER_MIN', 1200, 1, 100_000_000),
    },
    idempotencyTtlHours: r.int('IDEMPOTENCY_TTL_HOURS', 24, 1, 24 * 30),
    keyCacheTtlMs: r.int('KEY_CACHE_TTL_MS', 60_000, 0, 3_600_000),
    outboxPollMs: r.int('OUTBOX_POLL_MS', 250, 10, 60_000),
    shutdownTimeoutMs: r.int('SHUTDOWN_TIMEOUT_MS', 10_000, 100, 300_000),
    secretKey: secretKey ?? 'development-secret-key-not-for-production-use',
    webhooks: {
      allowPrivateTargets: r.boolean('WEBHOOK_ALLOW_PRIVATE_TARGETS', process === 'all-in-one'),
      secretGraceHours: r.int('WEBHOOK_SECRET_GRACE_HOURS', 24, 0, 24 * 30),
    },
    webhookDelivery: {
      retryScheduleMs: r.durations('WEBHOOK_RETRY_SCHEDULE', '1m,5m,30m,2h,12h', 1, 10),
      timeoutMs: webhookTimeoutMs,
      ackWaitMs: r.int('WEBHOOK_ACK_WAIT_MS', webhookTimeoutMs + 20_000, 1, 3_600_000),
    },
    mail: { smtpUrl, from: r.string('MAIL_FROM', 'Linkplane <no-reply@localhost>') },
    redirect: {
      cacheTtlMs: r.int('REDIRECT_CACHE_TTL_MS', 300_000, 0, 86_400_000),
      negativeCacheTtlMs: r.int('REDIRECT_NEGATIVE_CACHE_TTL_MS', 5_000, 0, 600_000),
      cacheMaxEntries: r.int('REDIRECT_CACHE_MAX_ENTRIES', 100_000, 1, 10_000_000),
      geoip: {
        cityDb: r.optional('GEOIP_CITY_DB'),
        asnDb: r.optional('GEOIP_ASN_DB'),
        anonymousDb: r.optional('GEOIP_ANONYMOUS_DB'),
        openData: r.boolean('GEOIP_OPEN_DATA', true),
      },
      trustEdgeHeaders: r.boolean('TRUST_EDGE_HEADERS', false),
      trustedProxyHops: r.int('TRUSTED_PROXY_HOPS', 0, 0, 10),
      ipStorage: r.oneOf('IP_STORAGE', 'truncate', ['truncate', 'hash', 'none'] as const),
      passwordCookieTtlSeconds: r.int('PASSWORD_COOKIE_TTL_S', 3_600, 60, 30 * 86_400),
      passwordMaxAttempts: r.int('PASSWORD_MAX_ATTEMPTS', 5, 1, 1_000),
      passwordAttemptWindowMs: r.int('PASSWORD_ATTEMPT_WINDOW_MS', 900_000, 1_000, 86_400_000),
      clickBufferMax: r.int('CLICK_BUFFER_MAX', 100_000, 1, 10_000_000),
      clickSpoolDir: ((dir) => (dir === 'none' ? null : dir))(r.string('CLICK_SPOOL_DIR', join(tmpdir(), 'linkplane-click-spool'))),
      clickSpoolMaxBytes: r.int('CLICK_SPOOL_MAX_MB', 1024, 1, 1_048_576) * 1_048_576,
      counterRefreshMs: r.int('COUNTER_REFRESH_MS', 2_000, 50, 600_000),
      accessLogClicks: r.boolean('REDIRECT_ACCESS_LOG_CLICKS', false),
    },
    clicks: {
      batchSize: r.int('CLICK_BATCH_SIZE', 10_000, 1, 10_000),
      batchWaitMs: r.int('CLICK_BATCH_WAIT_MS', 200, 1, 60_000),
      healthCheckIntervalMs: r.int('ROTATOR_HEALTH_INTERVAL_MS', 60_000, 100, 86_400_000),
    },
    previews: {
      intervalMs: r.int('LINK_PREVIEW_INTERVAL_MS', 60_000, 100, 86_400_000),
      refreshMs: r.int('LINK_PREVIEW_REFRESH_MS', 86_400_000, 1000, 30 * 86_400_000),
      timeoutMs: r.int('LINK_PREVIEW_TIMEOUT_MS', 5000, 100, 60_000),
      maxBytes: r.int('LINK_PREVIEW_MAX_KB', 256, 1, 4096) * 1024,
    },
    clickWebhooks: {
      batchSize: r.int('WEBHOOK_CLICK_BATCH_SIZE', 100, 1, 1000),
      batchWaitMs: r.int('WEBHOOK_CLICK_BATCH_WAIT_MS', 1000, 10, 60_000),
    },
    analytics: {
      clickRetentionDays: r.int('CLICK_RETENTION_DAYS', 400, 1, 36_500),
      rollups: r.boolean('ANALYTICS_ROLLUPS', true),
      settleIntervalMs: r.int('ANALYTICS_SETTLE_INTERVAL_MS', 60_000, 100, 3_600_000),
      exportsPerWorkspace: r.int('ANALYTICS_EXPORTS_PER_WORKSPACE', 2, 1, 100),
      partCacheBytes: r.int('ANALYTICS_PART_CACHE_MB', 64, 0, 16_384) * 1024 * 1024,
      clickAckWaitMs: r.int('CLICK_ACK_WAIT_MS', 60_000, 1_000, 3_600_000),
    },
    domains: {
      kube: r.oneOf(
        'DOMAINS_KUBE',
        env.KUBECONFIG ? 'kubeconfig' : env.KUBERNETES_SERVICE_HOST ? 'in-cluster' : 'off',
        ['off', 'in-cluster', 'kubeconfig'] as const,
      ),
      kubeconfig: r.optional('KUBECONFIG'),
      namespace: r.string('DOMAIN_NAMESPACE', r.string('POD_NAMESPACE', 'linkplane')),
      // A host name as DNS compares it (the operator reads it the same way): the records shown to customers, the
      // worker's DNS check and the names no customer may connect all use this one spelling.
      cnameTarget: r.optional('DOMAIN_CNAME_TARGET')?.toLowerCase().replace(/\.$/, '') ?? null,
      aTargets: (r.optional('DOMAIN_A_TARGETS') ?? '').split(',').map((v) => v.trim()).filter((v) => v !== ''),
      txtPrefix: r.string('DOMAIN_TXT_PREFIX', '_linkplane'),
    },
    tls: {
      port: r.optional('TLS_PORT') === null ? null : r.int('TLS_PORT', 8443, 0, PORT_MAX),
      acme:
        r.optional('ACME_DIRECTORY_URL') === null
          ? null
          : { directoryUrl: r.url('ACME_DIRECTORY_URL', '', ['https:', 'http:']), contactEmail: r.optional('ACME_CONTACT_EMAIL'), caFile: r.optional('ACME_CA_FILE') },
      sweepIntervalMs: r.int('TLS_SWEEP_INTERVAL_MS', 10_000, 50, 3_600_000),
      renewAtFraction: r.int('TLS_RENEW_AT_PERCENT', 67, 10, 95) / 100,
      issuanceBackoffMs: r.durations('TLS_ISSUANCE_BACKOFF', '1m,5m,15m,1h,6h', 1, 20),
      dns: {
        resolvers: readResolvers(r),
        backoffMs: r.durations('DNS_CHECK_BACKOFF', '10s,30s,1m,5m,15m', 1, 20),
        giveUpAfterMs: r.durations('DNS_GIVE_UP_AFTER', '72h', 1, 1)[0]!,
      },
    },
    conversions: {
      clickWaitMs: r.int('CONVERSION_CLICK_WAIT_MS', 5_000, 0, 60_000),
    },
    linkBlocklist,
    linkExportsPerWorkspace: r.int('LINK_EXPORTS_PER_WORKSPACE', 2, 1, 100),
    dashboard: {
      dir: r.string('DASHBOARD_DIR', join(repositoryRoot(), 'web', 'dist')),
      sessionIdleMs: r.int('SESSION_IDLE_TIMEOUT_MS', 12 * 3_600_000, 60_000, 30 * 86_400_000),
      sessionAbsoluteMs: r.int('SESSION_MAX_AGE_MS', 30 * 86_400_000, 60_000, 365 * 86_400_000),
      signInLinkTtlMs: r.int('SIGN_IN_LINK_TTL_MS', 15 * 60_000, 1_000, 86_400_000),
      inviteTtlMs: r.int('INVITE_TTL_MS', 7 * 86_400_000, 1_000, 90 * 86_400_000),
      signInMaxAttempts: r.int('SIGN_IN_MAX_ATTEMPTS', 10, 1, 10_000),
      signInMaxAttemptsPerIp: r.int('SIGN_IN_MAX_ATTEMPTS_PER_IP', 100, 1, 1_000_000),
      signInMaxAttemptsPerAccount: r.int('SIGN_IN_MAX_ATTEMPTS_PER_ACCOUNT', 200, 1, 1_000_000),
      passwordResetTtlMs: r.int('PASSWORD_RESET_TTL_MS', 30 * 60_000, 60_000, 86_400_000),
      passwordResetsPerAccount: r.int('PASSWORD_RESETS_PER_ACCOUNT', 3, 1, 1_000),
      passwordResetsPerIp: r.int('PASSWORD_RESETS_PER_IP', 20, 1, 100_000),
      signInWindowMs: r.int('SIGN_IN_ATTEMPT_WINDOW_MS', 900_000, 1_000, 86_400_000),
      oidc:
        oidcIssuer === null || oidcClientId === null
          ? null
          : { issuer: oidcIssuer, clientId: oidcClientId, clientSecret: r.optional('OIDC_CLIENT_SECRET'), name: r.string('OIDC_NAME', 'single sign-on') },
    },
    oauth: {
      accessTokenTtlSeconds: r.int('OAUTH_ACCESS_TOKEN_TTL_SECONDS', 3_600, 60, 86_400),
      refreshTokenTtlSeconds: r.int('OAUTH_REFRESH_TOKEN_TTL_SECONDS', 30 * 86_400, 3_600, 365 * 86_400),
    },
    partner: {
      clientQuota: r.int('PARTNER_CLIENT_QUOTA', 1_000, 1, 10_000_000),
      platformFeeBps: r.int('PARTNER_PLATFORM_FEE_BPS', 500, 0, 10_000),
      graceDayMs: r.int('BILLING_GRACE_DAY_MS', 86_400_000, 1, 86_400_000),
      billingSweepMs: r.int('BILLING_SWEEP_INTERVAL_MS', 60_000, 10, 3_600_000),
      ingestRefusedPerMinPerIp: r.int('BILLING_INGEST_REFUSED_PER_MIN_PER_IP', 20, 1, 100_000),
      ingestRefusedPerMinPerPartner: r.int('BILLING_INGEST_REFUSED_PER_MIN_PER_PARTNER', 60, 1, 100_000),
    },
    reports: { perMinute: r.int('REPORT_RATE_LIMIT_PER_MIN', 5, 1, 10_000) },
    alerts: { evalIntervalMs: r.int('ALERT_EVAL_INTERVAL_MS', 60_000, 50, 3_600_000) },
    imports: {
      pollMs: r.int('IMPORT_POLL_MS', 2_000, 10, 600_000),
      leaseMs: r.int('IMPORT_LEASE_MS', 60_000, 500, 3_600_000),
      allowPrivateSources: r.boolean('IMPORT_ALLOW_PRIVATE_SOURCES', process === 'all-in-one'),
    },
  };
  if (config.tls.acme !== null && config.domains.kube !== 'off') {
    r.problems.push('ACME_DIRECTORY_URL: custom domains are provisioned either by the Kubernetes operator or by ACME, not both (set DOMAINS_KUBE=off)');
  }
  if (config.tls.port !== null && config.tls.acme === null) {
    r.problems.push('TLS_PORT: needs ACME_DIRECTORY_URL (the certificates served there are obtained through ACME)');
  }
  if (config.tls.acme !== null && config.tls.acme.contactEmail !== null && !/^[^@\s]+@[^@\s]+$/.test(config.tls.acme.contactEmail)) {
    r.problems.push(`ACME_CONTACT_EMAIL: not an e-mail address: "${config.tls.acme.contactEmail}"`);
  }
  if (config.tls.acme?.caFile && !existsSync(config.tls.acme.caFile)) {
    r.problems.push(`ACME_CA_FILE: no such file: "${config.tls.acme.caFile}"`);
  }
  if (config.domains.cnameTarget === null && config.domains.aTargets.length === 0 && (config.domains.kube !== 'off' || config.tls.acme !== null)) {
    r.problems.push('DOMAIN_CNAME_TARGET or DOMAIN_A_TARGETS: at least one is needed to tell customers where to point a domain');
  }
  for (const ip of config.domains.aTargets) {
    if (!/^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(ip)) r.problems.push(`DOMAIN_A_TARGETS: not an IPv4 address: "${ip}"`);
  }
  if (config.webhookDelivery.ackWaitMs < webhookTimeoutMs + 1000) {
    r.problems.push(`WEBHOOK_ACK_WAIT_MS: must be at least WEBHOOK_TIMEOUT_MS + 1000 (${webhookTimeoutMs + 1000}), got ${config.webhookDelivery.ackWaitMs}`);
  }
  if (!/^[A-Za-z0-9_-]*$/.test(config.nats.prefix)) {
    r.problems.push('NATS_PREFIX: letters, digits, "_" and "-" only');
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return deepFreeze(config);
}

/** DNS_RESOLVERS: comma-separated `ip` or `ip:port` (empty: the system's resolvers). */
function readResolvers(r: Reader): ResolverAddress[] {
  const resolvers: ResolverAddress[] = [];
  for (const entry of (r.optional('DNS_RESOLVERS') ?? '').split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const parsed = parseResolver(entry);
    if (parsed === null) r.problems.push(`DNS_RESOLVERS: expected ip or ip:port, got "${entry}"`);
    else resolvers.push(parsed);
  }
  return resolvers;
}

/** LINK_BLOCKLIST_HOSTS (comma-separated hostnames) and the entries of LINK_BLOCKLIST_FILE (see src/config/link-safety.ts). */
function readBlocklist(r: Reader, env: Env): Blocklist {
  const hosts = (env.LINK_BLOCKLIST_HOSTS ?? '').split(',').map((h) => h.trim()).filter((h) => h !== '');
  const inline: Blocklist = { hosts: [], patterns: [] };
  for (const entry of hosts) {
    const host = normaliseHost(entry);
    if (host === null || entry.includes('/')) r.problems.push(`LINK_BLOCKLIST_HOSTS: "${entry}" is not a hostname`);
    else (inline.hosts as Array<{ host: string; reason: string }>).push({ host, reason: 'the host is on the blocklist' });
  }
  const file = r.optional('LINK_BLOCKLIST_FILE');
  if (file === null) return hosts.length === 0 ? EMPTY_BLOCKLIST : inline;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    r.problems.push(`LINK_BLOCKLIST_FILE: cannot read "${file}": ${(error as Error).message}`);
    return inline;
  }
  const parsed = parseBlocklist(text);
  for (const problem of parsed.problems) r.problems.push(`LINK_BLOCKLIST_FILE ${file}, ${problem}`);
  return mergeBlocklists(inline, parsed.blocklist);
}

/** The checkout (or image) root, the nearest folder above this file holding package.json: src/ and dist/src/ alike. */
function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
  return dir;
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (child !== null && typeof child === 'object') deepFreeze(child as object);
  }
  return Object.freeze(value);
}
