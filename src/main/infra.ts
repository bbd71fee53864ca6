import { Counter } from 'prom-client';
import type { Config } from '../config/config.ts';
import { createLogger, type AccessLog, type Logger } from '../platform/logger.ts';
import { createMetrics, type HttpMetrics } from '../platform/metrics.ts';
import { connectMongo, type Mongo } from '../platform/mongo.ts';
import { connectNats, provisionStreams, type Nats } from '../platform/nats.ts';
import { CacheBus } from '../platform/cache-bus.ts';
import { Stores } from './stores.ts';

/**
 * Wakes the outbox relay right after an event row is written, so events do not wait for its poll. In one process
 * (all-in-one) the relay is called directly; otherwise the api publishes `outbox.wake` on core NATS, at most once
 * per event-loop turn, and every worker's relay listens to it. The poll stays as the safety net: a lost wake-up
 * delays an event by one poll interval, never loses it.
 */
export class OutboxSignal {
  private readonly listeners: Array<() => void> = [];
  private readonly nats: Nats | undefined;
  private subscribed = false;
  private publishPending = false;

  constructor(nats?: Nats) {
    this.nats = nats;
  }

  on(listener: () => void): void {
    this.listeners.push(listener);
    if (!this.nats || this.subscribed) return;
    this.subscribed = true;
    const sub = this.nats.nc.subscribe(this.nats.subjects.outboxWake);
    void (async () => {
      for await (const _ of sub) for (const l of this.listeners) l();
    })();
  }

  nudge(): void {
    if (this.listeners.length > 0) {
      for (const listener of this.listeners) listener();
      return;
    }
    const nats = this.nats;
    if (!nats || this.publishPending) return;
    this.publishPending = true;
    setImmediate(() => {
      this.publishPending = false;
      if (nats.isConnected()) nats.nc.publish(nats.subjects.outboxWake);
    });
  }
}

/** The clients a process shares between its parts (all-in-one shares them between api, redirect and worker). */
export interface Infra {
  config: Config;
  logger: Logger;
  /** The one-line-per-request log. */
  access: AccessLog;
  metrics: HttpMetrics;
  mongo: Mongo;
  nats: Nats;
  bus: CacheBus;
  stores: Stores;
  outbox: OutboxSignal;
  /** Drains NATS, closes MongoDB, flushes logs (giving up after `logFlushMs`): the last steps of a graceful shutdown. */
  close(logFlushMs?: number): Promise<void>;
}

export async function openInfra(
  config: Config,
  mongoUri: string,
  options: { logDestination?: NodeJS.WritableStream } = {},
): Promise<Infra> {
  const { logger, access, flush, droppedLines } = createLogger({
    level: config.logLevel,
    name: config.process,
    bufferMaxBytes: config.logBufferMaxBytes,
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  const metrics = createMetrics(config.process);
  new Counter({
    name: 'linkplane_log_lines_dropped_total',
    help: 'Log lines dropped because stdout was not being read (the buffer was at LOG_BUFFER_MAX_BYTES, or shutdown could not wait)',
    registers: [metrics.registry],
    collect() {
      this.reset();
      this.inc(droppedLines());
    },
  });
  const nats = await connectNats({ url: config.nats.url, prefix: config.nats.prefix, name: `linkplane-${config.process}`, logger });
  let mongo: Mongo;
  try {
    mongo = await connectMongo(mongoUri, config.mongo.db, `linkplane-${config.process}`);
  } catch (error) {
    await nats.drain();
    throw error;
  }
  const stores = new Stores(mongo.db, logger, config);
  // Idempotent: every replica of every process runs these at start-up, in any order.
  await Promise.all([stores.ensureIndexes(), provisionStreams(nats, config.nats.duplicateWindowMs, { replicas: config.nats.replicas, logger })]);
  return {
    config,
    logger,
    access,
    metrics,
    mongo,
    nats,
    bus: new CacheBus(nats, logger),
    stores,
    outbox: new OutboxSignal(nats),
    async close(logFlushMs = 1000) {
      await nats.drain().catch((error: unknown) => logger.warn({ err: error }, 'nats drain failed'));
      await mongo.close().catch((error: unknown) => logger.warn({ err: error }, 'mongodb close failed'));
      await flush(logFlushMs);
    },
  };
}
