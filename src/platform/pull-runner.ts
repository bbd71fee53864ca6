// A durable pull consumer run with bounded concurrency: the fan-out and the delivery consumer share it. Messages
// are fetched only for free slots, so none waits in a client-side buffer while its ack_wait runs.
import { AckPolicy, type Consumer, type DeliverPolicy, type ConsumerConfig, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { Logger } from './logger.ts';
import type { Nats } from './nats.ts';

export interface DurableSpec {
  stream: string;
  durable: string;
  filterSubject: string;
  ackWaitMs: number;
  /** -1: unlimited; the handlers decide when a message is finished (ack or term). */
  maxDeliver: number;
  deliverPolicy: DeliverPolicy;
}

/** Creates the durable consumer, or brings an existing one to this configuration; every replica runs it at start. */
export async function ensureDurable(nats: Nats, spec: DurableSpec): Promise<void> {
  const wanted: Partial<ConsumerConfig> = {
    durable_name: spec.durable,
    ack_policy: AckPolicy.Explicit,
    filter_subject: spec.filterSubject,
    ack_wait: nanos(spec.ackWaitMs),
    max_deliver: spec.maxDeliver,
    deliver_policy: spec.deliverPolicy,
    // Enough pull requests in flight for every replica's fetch loop.
    max_waiting: 512,
  };
  try {
    const info = await nats.jsm.consumers.info(spec.stream, spec.durable);
    if (info.config.ack_wait !== wanted.ack_wait || info.config.max_deliver !== wanted.max_deliver) {
      await nats.jsm.consumers.update(spec.stream, spec.durable, { ack_wait: wanted.ack_wait!, max_deliver: wanted.max_deliver! });
    }
  } catch (error) {
    if (!/consumer not found/i.test(String((error as Error).message))) throw error;
    try {
      await nats.jsm.consumers.add(spec.stream, wanted);
    } catch (addError) {
      // Another replica created it between our info and add: that is the state we wanted.
      if (!/already (in use|exists)|exists/i.test(String((addError as Error).message))) throw addError;
    }
  }
}

export interface PullRunnerOptions {
  nats: Nats;
  stream: string;
  durable: string;
  concurrency: number;
  logger: Logger;
  /**
   * The consumer's ack_wait. While a message is being handled the runner tells JetStream it is still in progress
   * every third of it, so a slow handler (a busy database, a cold worker) is never redelivered to a second worker
   * and run twice; only a worker that died stops answering, and its message goes to another after ack_wait.
   */
  ackWaitMs: number;
  /** Must settle the message (ack, nak or term); an exception naks it after `retryDelayMs(deliveryCount)`. */
  handle: (msg: JsMsg) => Promise<void>;
  retryDelayMs: (deliveryCount: number) => number;
}

const FETCH_EXPIRES_MS = 5000;

export class PullRunner {
  private readonly o: PullRunnerOptions;
  private running = false;
  private loop: Promise<void> | null = null;
  private current: ConsumerMessages | null = null;
  private consumer: Consumer | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private slotFreed: (() => void) | null = null;

  constructor(options: PullRunnerOptions) {
    this.o = options;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops fetching, then waits for the messages being handled: SIGTERM drains in-flight work. */
  async stop(): Promise<void> {
    this.running = false;
    this.current?.stop();
    this.slotFreed?.();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      try {
        const free = this.o.concurrency - this.inFlight.size;
        if (free <= 0) {
          await new Promise<void>((resolve) => (this.slotFreed = resolve));
          this.slotFreed = null;
          continue;
        }
        // Looked up once, not per fetch: each lookup is a JetStream API round trip, and fetches are frequent.
        this.consumer ??= await this.o.nats.js.consumers.get(this.o.stream, this.o.durable);
        const batch = await this.consumer.fetch({ max_messages: free, expires: FETCH_EXPIRES_MS });
        this.current = batch;
        if (!this.running) batch.stop();
        for await (const msg of batch) this.dispatch(msg);
        this.current = null;
        failures = 0;
      } catch (error) {
        this.current = null;
        this.consumer = null;
        if (!this.running) break;
        failures++;
        if (failures === 1) this.o.logger.warn({ err: error, consumer: this.o.durable }, 'jetstream fetch failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** Math.min(failures, 5), 5000)));
      }
    }
  }

  private dispatch(msg: JsMsg): void {
    const heartbeat = setInterval(() => msg.working(), Math.max(Math.floor(this.o.ackWaitMs / 3), 50));
    const task = this.o
      .handle(msg)
      .catch((error: unknown) => {
        this.o.logger.error({ err: error, consumer: this.o.durable, seq: msg.seq }, 'message handling failed; it will be redelivered');
        msg.nak(this.o.retryDelayMs(msg.info.deliveryCount));
      })
      .finally(() => {
        clearInterval(heartbeat);
        this.inFlight.delete(task);
        this.slotFreed?.();
      });
    this.inFlight.add(task);
  }
}
