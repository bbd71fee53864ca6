import { connect, nanos } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from './logger.ts';

export type { NatsConnection, JetStreamClient };

export class NatsUnreachableError extends Error {
  constructor(url: string, cause: unknown) {
    super(
      `NATS is not reachable at ${url}. Start a server with JetStream (\`nats-server -js\`) or set NATS_URL.`,
      { cause },
    );
    this.name = 'NatsUnreachableError';
  }
}

/** Names of streams and subjects; a prefix gives each test run (or each installation sharing a server) its own. */
export class Subjects {
  readonly prefix: string;
  constructor(prefix: string) {
    this.prefix = prefix;
  }
  stream(base: 'EVENTS' | 'DELIVERIES' | 'CLICKS' | 'DOMAINS'): string {
    return `${this.prefix}${base}`;
  }
  event(tenant: string, type: string): string {
    return `${this.prefix}events.${tenant}.${type}`;
  }
  delivery(endpointId: string): string {
    return `${this.prefix}deliveries.${endpointId}`;
  }
  click(workspaceId: string): string {
    return `${this.prefix}clicks.${workspaceId}`;
  }
  domain(tenant: string, type: string): string {
    return `${this.prefix}domains.${tenant}.${type}`;
  }
  get cacheInvalidate(): string {
    return `${this.prefix}cache.invalidate`;
  }
  /** Core NATS, no payload: an api wrote an event row, the outbox relay should look now rather than at its poll. */
  get outboxWake(): string {
    return `${this.prefix}outbox.wake`;
  }
}

/** The servers of a NATS_URL: one URL, or several separated by commas. */
export function natsServers(url: string): string[] {
  return url.split(',').map((server) => server.trim()).filter((server) => server !== '');
}

export interface Nats {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  subjects: Subjects;
  isConnected(): boolean;
  /** Drains subscriptions and pending publishes, then closes (graceful shutdown). */
  drain(): Promise<void>;
}

export async function connectNats(options: { url: string; prefix: string; name: string; logger: Logger }): Promise<Nats> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      // NATS_URL may list several servers (a cluster): the client starts on any that answers and fails over.
      servers: natsServers(options.url),
      name: options.name,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      timeout: 5000,
    });
  } catch (error) {
    throw new NatsUnreachableError(options.url, error);
  }
  let connected = true;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') connected = false;
      if (status.type === 'reconnect') connected = true;
      if (status.type === 'disconnect' || status.type === 'reconnect') {
        options.logger.warn({ nats: status.type, server: status.server }, `nats ${status.type}`);
      }
    }
  })();
  const js = jetstream(nc, { timeout: 5000 });
  // No account-info check here: while a cluster elects a new meta leader (its node just died) that request times out,
  // and provisionStreams, which every process runs next, already waits for the cluster to take requests.
  const jsm = await jetstreamManager(nc, { timeout: 5000, checkAPI: false });
  return {
    nc,
    js,
    jsm,
    subjects: new Subjects(options.prefix),
    isConnected: () => connected && !nc.isClosed(),
    drain: async () => {
      if (!nc.isClosed()) await nc.drain();
    },
  };
}

interface StreamSpec {
  base: 'EVENTS' | 'DELIVERIES' | 'CLICKS' | 'DOMAINS';
  subject: string;
  maxAgeMs: number;
}

const DAY = 86_400_000;

const STREAMS: readonly StreamSpec[] = [
  { base: 'EVENTS', subject: 'events.>', maxAgeMs: 7 * DAY },
  // Retries reach 12 h after the first attempt, so deliveries must outlive the whole schedule.
  { base: 'DELIVERIES', subject: 'deliveries.>', maxAgeMs: 3 * DAY },
  { base: 'CLICKS', subject: 'clicks.>', maxAgeMs: 3 * DAY },
  { base: 'DOMAINS', subject: 'domains.>', maxAgeMs: 7 * DAY },
];

/**
 * The replicas streams get when NATS_REPLICAS is not set: three when the server we reached is in a cluster of three
 * or more (its INFO lists every member's client URL), else one (a single server refuses more).
 */
export function defaultReplicas(nc: NatsConnection): number {
  const info = nc.info;
  if (!info?.cluster) return 1;
  return (info.connect_urls?.length ?? 1) >= 3 ? 3 : 1;
}

export interface ProvisionOptions {
  /** NATS_REPLICAS; null: `defaultReplicas`, and an existing stream is then never scaled down. */
  replicas?: number | null;
  logger?: Logger;
  /** How long to keep retrying while the cluster cannot take the request (no meta leader, a peer just died). */
  retryForMs?: number;
}

/** Errors a cluster gives while it elects a leader or notices a dead peer: worth another try in a moment. */
function transient(error: unknown): boolean {
  const text = `${(error as { name?: string }).name ?? ''} ${String((error as Error).message ?? error)}`;
  // Not "no responders": nothing serves the JetStream API there (a server started without -js), which waiting does
  // not change.
  return /timeout|insufficient resources|no suitable peers|leader|temporarily unavailable|not (yet )?(ready|available)/i.test(text);
}

/**
 * Creates or updates the streams, so every process can run it at start-up in any order. The duplicate window is
 * what makes a re-published outbox row harmless, so it is long (an hour by default) rather than JetStream's 2 min.
 * Replicas: a stream made before replicas were configured (or with fewer) is scaled to the configured number; its
 * consumers inherit the stream's replicas and follow it.
 */
export async function provisionStreams(nats: Nats, duplicateWindowMs: number, options: ProvisionOptions = {}): Promise<void> {
  const deadline = Date.now() + (options.retryForMs ?? 60_000);
  for (let wait = 250; ; wait = Math.min(wait * 2, 4000)) {
    try {
      await provisionOnce(nats, duplicateWindowMs, options.replicas ?? null);
      return;
    } catch (error) {
      if (!transient(error) || Date.now() + wait > deadline) throw error;
      options.logger?.warn({ err: error }, 'the NATS cluster cannot create or update streams yet; retrying');
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

async function provisionOnce(nats: Nats, duplicateWindowMs: number, configured: number | null): Promise<void> {
  const wanted = configured ?? defaultReplicas(nats.nc);
  for (const spec of STREAMS) {
    const name = nats.subjects.stream(spec.base);
    const config = {
      subjects: [`${nats.subjects.prefix}${spec.subject}`],
      max_age: nanos(spec.maxAgeMs),
      duplicate_window: nanos(Math.min(duplicateWindowMs, spec.maxAgeMs)),
    };
    try {
      const info = await nats.jsm.streams.info(name);
      const current = info.config;
      const replicas = configured ?? Math.max(wanted, current.num_replicas ?? 1);
      if (
        current.subjects?.join() !== config.subjects.join() ||
        current.max_age !== config.max_age ||
        current.duplicate_window !== config.duplicate_window ||
        (current.num_replicas ?? 1) !== replicas
      ) {
        await nats.jsm.streams.update(name, { ...current, ...config, num_replicas: replicas });
      }
    } catch (error) {
      if ((error as { name?: string }).name !== 'StreamNotFoundError') throw error;
      try {
        await nats.jsm.streams.add({ name, ...config, num_replicas: wanted });
      } catch (addError) {
        // Another replica created it between our info and add: that is the state we wanted.
        if (!/already in use|exists/i.test(String((addError as Error).message))) throw addError;
      }
    }
  }
}
