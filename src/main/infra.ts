import { Counter } from 'prom-client';
import type { Config } from '../config/config.ts';
import { createLogger, type AccessLog, type Logger } from '../platform/logger.ts';
import { createMetrics, type HttpMetrics } from '../platform/metrics.ts';
import { connectMongo, type Mongo } from '../platform/mongo.ts';
import { connectNats, provisionStreams, type Nats } from '../platform/nats.ts';
import { CacheBus } from '../platform/cache-bus.ts';
import { Stores } from './stores.ts';

/** In-process wake-up of the outbox relay (all-in-one runs the writer and the relay in one process). */
export class OutboxSignal {
  private readonly listeners: Array<() => void> = [];
  on(listener: () => void): void {
    this.listeners.push(listener);
  }
  nudge(): void {
    for (const listener of this.listeners) listener();
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
  await Promise.all([stores.ensureIndexes(), provisionStreams(nats, config.nats.duplicateWindowMs)]);
  return {
    config,
    logger,
    access,
    metrics,
    mongo,
    nats,
    bus: new CacheBus(nats, logger),
    stores,
    outbox: new OutboxSignal(),
    async close(logFlushMs = 1000) {
      await nats.drain().catch((error: unknown) => logger.warn({ err: error }, 'nats drain failed'));
      await mongo.close().catch((error: unknown) => logger.warn({ err: error }, 'mongodb close failed'));
      await flush(logFlushMs);
    },
  };
}
