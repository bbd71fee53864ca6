// The worker's click ingestion: a durable pull consumer on CLICKS whose messages are gathered into batches (up to
// batchSize, or whatever arrived within batchWaitMs of the first), written with one bulk insert (with the analytics
// rollups on, in the transaction that adds them: see `storing`), counted, then acknowledged together. A MongoDB
// failure naks the batch; the click ids make the redelivery harmless.
import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { BatchingConsumer } from '../platform/batching-consumer.ts';
import type { ClickRecord } from '../visitor/click-record.ts';
import { decodeClicks } from './click-wire.ts';
import type { ClickStore } from './click.store.ts';

export const CLICK_INGEST_DURABLE = 'click-ingest';

/** The clicks of the messages of a batch, in slices of at most batchSize. */
interface Batch {
  messages: JsMsg[];
  slices: ClickRecord[][];
}

/** Receives the clicks of a batch that were counted now (duplicates already counted excluded). */
export type BatchHook = (counted: readonly ClickRecord[]) => Promise<void>;

export interface ClickIngestorOptions {
  nats: Nats;
  store: ClickStore;
  logger: Logger;
  registry: Registry;
  /** config.clicks.batchSize */
  batchSize: number;
  /** config.clicks.batchWaitMs */
  batchWaitMs: number;
  /** Redelivery delay after a failed batch. */
  retryDelayMs?: number;
  ackWaitMs?: number;
  /**
   * Further counts kept with the click counters (monthly usage): run after the counters and before the clicks are
   * marked counted, so a failure naks the batch and the redelivery counts it again.
   */
  counting?: BatchHook[];
  /**
   * Told of each slice of clicks as soon as its batch is gathered, to work on them while the batch before is written
   * (the rollups' parts); never awaited.
   */
  arriving?: (records: readonly ClickRecord[]) => void;
  /**
   * Writes a slice's raw clicks in place of `store.insert`, answering as it does (the clicks still to count): the
   * rollups write them in one transaction with their parts (RollupWriter.storing). A failure naks the batch.
   */
  storing?: (records: readonly ClickRecord[], expiresAt?: (record: ClickRecord) => Date | undefined) => Promise<ClickRecord[]>;
  /** Figures derived from the counters (A/B weights): run after the batch is settled; a failure is only logged. */
  derived?: BatchHook[];
  /** When each raw click of a batch expires (raw click retention); absent: kept until deleted. */
  retention?: (records: readonly ClickRecord[]) => Promise<(record: ClickRecord) => Date>;
}

export class ClickIngestor {
  readonly stream: string;
  private readonly o: ClickIngestorOptions;
  private readonly ingested: Counter;
  private readonly failures: Counter;
  private readonly lag: Histogram;
  /** Each message's clicks are decoded once on arrival (null: malformed); a batch is up to batchSize clicks. */
  private readonly consumer: BatchingConsumer<{ msg: JsMsg; clicks: ClickRecord[] | null }, Batch>;

  constructor(options: ClickIngestorOptions) {
    this.o = options;
    this.stream = options.nats.subjects.stream('CLICKS');
    const registers = [options.registry];
    this.ingested = new Counter({ name: 'linkplane_clicks_ingested_total', help: 'Clicks written to MongoDB (duplicates excluded)', registers });
    this.failures = new Counter({ name: 'linkplane_click_ingest_failures_total', help: 'Click batches that failed and were handed back for redelivery', registers });
    this.lag = new Histogram({
      name: 'linkplane_click_ingest_lag_seconds',
      help: 'Time from a click to its write in MongoDB (what analytics are behind by)',
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
      registers,
    });
    const { nats, logger } = options;
    const stream = this.stream;
    this.consumer = new BatchingConsumer({
      nats,
      logger,
      durable: {
        stream,
        durable: CLICK_INGEST_DURABLE,
        filterSubject: nats.subjects.click('>'),
        ackWaitMs: options.ackWaitMs ?? 60_000,
        maxDeliver: -1,
        deliverPolicy: DeliverPolicy.All,
      },
      // A message may hold hundreds of clicks (the publisher batches them): a few messages make a batch.
      maxMessages: Math.max(16, Math.ceil(options.batchSize / 8)),
      batchSize: options.batchSize,
      batchWaitMs: options.batchWaitMs,
      read: (msg) => {
        const clicks = parse(msg);
        return { entry: { msg, clicks }, weight: clicks?.length ?? 0 };
      },
      gather: (pending) => this.gather(pending),
      handle: (batch) => this.process(batch),
      failure: 'click batch handling failed; unacknowledged clicks are redelivered',
    });
    new Gauge({
      name: 'linkplane_click_consumer_pending',
      help: 'Clicks on the CLICKS stream not yet delivered to the ingestion (JetStream num_pending), read at scrape time',
      registers,
      async collect() {
        try {
          this.set((await nats.jsm.consumers.info(stream, CLICK_INGEST_DURABLE)).num_pending);
        } catch (error) {
          logger.debug({ err: error }, 'click consumer info unavailable');
        }
      },
    });
  }

  /** Creates the durable consumer (idempotent) and starts consuming. */
  start(): Promise<void> {
    return this.consumer.start();
  }

  /** Stops consuming, then writes and acknowledges the clicks in hand. */
  stop(): Promise<void> {
    return this.consumer.stop();
  }

  /** A batch of the messages in hand: its clicks in slices of at most batchSize, each told to `arriving` now. */
  private gather(pending: ReadonlyArray<{ msg: JsMsg; clicks: ClickRecord[] | null }>): Batch {
    const records: ClickRecord[] = [];
    const messages: JsMsg[] = [];
    for (const { msg, clicks } of pending) {
      if (clicks) {
        records.push(...clicks);
        messages.push(msg);
      } else {
        this.o.logger.error({ seq: msg.seq, subject: msg.subject }, 'malformed click message dropped');
        msg.term();
      }
    }
    // A message may carry many clicks (the publisher batches them): each bulk write holds at most batchSize.
    const slices: ClickRecord[][] = [];
    for (let i = 0; i < records.length; i += this.o.batchSize) slices.push(records.slice(i, i + this.o.batchSize));
    for (const slice of slices) this.o.arriving?.(slice);
    return { messages, slices };
  }

  private async process({ messages, slices }: Batch): Promise<void> {
    if (messages.length === 0) return;
    const counted: ClickRecord[] = [];
    try {
      for (const slice of slices) {
        const expiresAt = await this.o.retention?.(slice);
        const chunk = this.o.storing ? await this.o.storing(slice, expiresAt) : await this.o.store.insert(slice, expiresAt);
        await this.o.store.count(chunk);
        for (const hook of this.o.counting ?? []) await hook(chunk);
        await this.o.store.markCounted(chunk);
        counted.push(...chunk);
        this.ingested.inc(chunk.length);
        const now = Date.now();
        for (const click of chunk) this.lag.observe(Math.max(0, (now - Date.parse(click.ts)) / 1000));
      }
    } catch (error) {
      this.failures.inc();
      this.o.logger.error({ err: error, clicks: messages.length }, 'click batch not ingested; it will be redelivered');
      for (const msg of messages) msg.nak(this.o.retryDelayMs ?? 1000);
      return;
    }
    await this.settle(messages, counted);
  }

  /** Acknowledges the batch's messages, then works out what derives from it. */
  private async settle(messages: readonly JsMsg[], counted: readonly ClickRecord[]): Promise<void> {
    for (const msg of messages) msg.ack();
    for (const hook of this.o.derived ?? []) {
      try {
        await hook(counted);
      } catch (error) {
        this.o.logger.warn({ err: error }, 'click batch follow-up failed; the next batch retries it');
      }
    }
  }
}

/** A message holds the clicks of one workspace (click-wire.ts), or one click as plain JSON. */
function parse(msg: JsMsg): ClickRecord[] | null {
  let body: unknown;
  try {
    body = msg.json<unknown>();
  } catch {
    return null;
  }
  return decodeClicks(body);
}
