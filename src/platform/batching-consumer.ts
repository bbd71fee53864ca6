// A durable consumer whose messages are gathered into batches: up to `batchSize` (each message weighing what its
// reader says: one, or the clicks it carries), or whatever arrived within `batchWaitMs` of the first. Batches are
// handled one at a time, in order; waiting for a full batch to be handled is the back-pressure (at most two batches
// are in hand). The loop survives the consumer ending or failing (the server went away, the consumer was deleted):
// it looks it up again, backing off on repeated failures. Click ingestion and `link.clicked` webhooks both run on it.
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from './logger.ts';
import type { Nats } from './nats.ts';
import { ensureDurable, type DurableSpec } from './pull-runner.ts';

export interface BatchingConsumerOptions<T, B = T[]> {
  nats: Nats;
  logger: Logger;
  /** The durable consumer, created (or brought to this configuration) at start. */
  durable: DurableSpec;
  /** Messages the client asks the server for at a time. */
  maxMessages: number;
  batchSize: number;
  batchWaitMs: number;
  /** What a message adds to the batch, and how much of `batchSize` it counts for. */
  read: (msg: JsMsg) => { entry: T; weight: number };
  /**
   * Makes the batch of the entries in hand, at once (while the batch before may still be being handled, so work can
   * start on it early); absent, the entries are the batch.
   */
  gather?: (entries: T[]) => B;
  /**
   * Handles a batch, acknowledging (or handing back) its messages. A failure it throws is logged with `failure`; the
   * messages it left unacknowledged are delivered again after their ack_wait.
   */
  handle: (batch: B) => Promise<void>;
  failure: string;
}

export class BatchingConsumer<T, B = T[]> {
  private readonly o: BatchingConsumerOptions<T, B>;
  private running = false;
  private loop: Promise<void> | null = null;
  private messages: ConsumerMessages | null = null;
  private pending: T[] = [];
  private pendingWeight = 0;
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(options: BatchingConsumerOptions<T, B>) {
    this.o = options;
  }

  /** Creates the durable consumer (idempotent) and starts consuming. */
  async start(): Promise<void> {
    if (this.running) return;
    await ensureDurable(this.o.nats, this.o.durable);
    this.running = true;
    this.loop = this.run();
  }

  /** Stops consuming, then handles what is in hand. */
  async stop(): Promise<void> {
    this.running = false;
    this.messages?.stop();
    await this.loop;
    await this.flush();
  }

  private async run(): Promise<void> {
    const { stream, durable } = this.o.durable;
    let failures = 0;
    while (this.running) {
      try {
        const consumer = await this.o.nats.js.consumers.get(stream, durable);
        const messages = await consumer.consume({ max_messages: this.o.maxMessages });
        this.messages = messages;
        if (!this.running) messages.stop();
        for await (const msg of messages) {
          failures = 0;
          const { entry, weight } = this.o.read(msg);
          this.pending.push(entry);
          this.pendingWeight += weight;
          if (this.pendingWeight >= this.o.batchSize) await this.flush();
          else this.timer ??= setTimeout(() => void this.flush(), this.o.batchWaitMs);
        }
        this.messages = null;
        // The consumer ended without an error (deleted, or the server went away): look it up again shortly.
        if (this.running) await new Promise((r) => setTimeout(r, 250));
      } catch (error) {
        this.messages = null;
        if (!this.running) break;
        failures++;
        if (failures === 1) this.o.logger.warn({ err: error, consumer: durable }, 'consumer failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** Math.min(failures, 5), 5000)));
      }
    }
  }

  private flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const entries = this.pending;
    this.pending = [];
    this.pendingWeight = 0;
    if (entries.length > 0) {
      const batch = this.o.gather ? this.o.gather(entries) : (entries as B);
      this.chain = this.chain.then(() => this.o.handle(batch)).catch((error: unknown) => this.o.logger.error({ err: error, consumer: this.o.durable.durable }, this.o.failure));
    }
    return this.chain;
  }
}
