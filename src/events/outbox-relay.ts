import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import type { EventDoc, EventStore } from './event.store.ts';
import type { Lease } from '../platform/lease.ts';

export interface OutboxRelayOptions {
  events: EventStore;
  nats: Nats;
  lease: Lease;
  logger: Logger;
  registry?: Registry;
  pollMs: number;
  batchSize?: number;
}

const MAX_BACKOFF_MS = 5000;

/** The JSON every EVENTS message carries: the event row as the API shows it. */
export function eventMessage(event: EventDoc): string {
  return JSON.stringify({
    id: event._id,
    type: event.type,
    created_at: event.created_at.toISOString(),
    workspace_id: event.workspace_id,
    partner_id: event.partner_id,
    data: event.data,
  });
}

/**
 * Publishes unpublished `events` rows to JetStream and marks them (DESIGN: outbox). The message id is the event id,
 * so a row published again after a crash between publish and mark, or by a second relay, is dropped by the
 * stream's duplicate window: each event reaches EVENTS once. While NATS is down rows wait; none is lost.
 */
export class OutboxRelay {
  private readonly o: OutboxRelayOptions;
  private readonly batchSize: number;
  private readonly published: Counter;
  private readonly failures: Counter;
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** A nudge that came while a batch was running: the next sleep is skipped, so the new rows are not left for the poll. */
  private nudged = false;
  private failing = false;

  constructor(options: OutboxRelayOptions) {
    this.o = options;
    this.batchSize = options.batchSize ?? 200;
    const registers = options.registry ? [options.registry] : [];
    this.published = new Counter({ name: 'linkplane_outbox_published_total', help: 'Event rows published to JetStream', registers });
    this.failures = new Counter({ name: 'linkplane_outbox_publish_failures_total', help: 'Failed outbox publish attempts', registers });
    // The backlog's age, not its size, says whether webhooks are late: read from MongoDB at scrape time, so every
    // worker replica reports it whether or not it holds the relay's lease (alerts take the max).
    const { events, logger } = options;
    new Gauge({
      name: 'linkplane_outbox_oldest_unpublished_age_seconds',
      help: 'Age of the oldest event row not yet published to JetStream (0 when the outbox is empty), read at scrape time',
      registers,
      async collect() {
        try {
          const oldest = await events.oldestUnpublished();
          this.set(oldest === null ? 0 : Math.max(0, (Date.now() - oldest.getTime()) / 1000));
        } catch (error) {
          logger.debug({ err: error }, 'outbox backlog age unavailable');
        }
      },
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Wakes the relay now instead of at the next poll (the api calls this right after writing an event). */
  nudge(): void {
    if (this.wake) this.wake();
    else this.nudged = true;
  }

  async stop(): Promise<void> {
    this.running = false;
    this.nudge();
    await this.loop;
    await this.o.lease.release().catch(() => undefined);
  }

  /** Publishes one batch; returns how many rows were published. */
  async runOnce(): Promise<number> {
    const batch = await this.o.events.unpublished(this.batchSize);
    if (batch.length === 0) return 0;
    const results = await Promise.allSettled(
      batch.map((event) =>
        this.o.nats.js.publish(this.subjectOf(event), eventMessage(event), { msgID: event._id, timeout: 5000 }),
      ),
    );
    const done = batch.filter((_, i) => results[i]?.status === 'fulfilled').map((e) => e._id);
    await this.o.events.markPublished(done, new Date());
    this.published.inc(done.length);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      this.failures.inc(batch.length - done.length);
      throw failed.reason;
    }
    return done.length;
  }

  private subjectOf(event: EventDoc): string {
    return this.o.nats.subjects.event(event.workspace_id ?? event.partner_id ?? 'platform', event.type);
  }

  private async run(): Promise<void> {
    let backoff = this.o.pollMs;
    while (this.running) {
      let published = 0;
      try {
        if (await this.o.lease.acquire()) published = await this.runOnce();
        if (this.failing) this.o.logger.info('outbox relay recovered');
        this.failing = false;
        backoff = this.o.pollMs;
      } catch (error) {
        if (!this.failing) this.o.logger.warn({ err: error }, 'outbox relay cannot publish; events wait in the outbox');
        this.failing = true;
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
      if (published === this.batchSize) continue;
      await this.sleep(this.failing ? backoff : this.o.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.nudged) {
      this.nudged = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }
}
