// Event fan-out: a durable consumer on EVENTS turns each event into one DELIVERIES message per active endpoint
// subscribed to its type. Workspace events reach the workspace's endpoints and its partner's; partner-only
// events reach the partner's only. The event is acked only after every delivery publish is acknowledged. At most
// `maxPublishesInFlight` delivery publishes wait for JetStream at once, across all the events being fanned out.
import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { Filter } from 'mongodb';
import { Counter, type Registry } from 'prom-client';
import { WORKSPACE_EVENTS } from '../events/event-types.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import type { WebhookDoc, WebhookStore } from './webhook.store.ts';
import { deliveryIdFor, publishDelivery, type EventMessage } from './delivery-message.ts';
import { ensureDurable, PullRunner } from '../platform/pull-runner.ts';

export const FANOUT_DURABLE = 'webhook-fanout';
const FANOUT_ACK_WAIT_MS = 30_000;
/**
 * Enough to keep the NATS connection busy (acks come back in about a millisecond), few enough that a burst (16
 * events to 1,000 endpoints each) does not queue 16,000 publishes on the worker's one connection: those delayed the
 * delivery consumer's first attempts by seconds, and the relay's publishes of the events behind them.
 */
export const FANOUT_PUBLISHES_IN_FLIGHT = 256;
const WORKSPACE_TYPES: ReadonlySet<string> = new Set(WORKSPACE_EVENTS);

export interface FanoutOptions {
  nats: Nats;
  webhooks: WebhookStore;
  logger: Logger;
  registry?: Registry;
  concurrency?: number;
  maxPublishesInFlight?: number;
}

/** Who receives an event: active endpoints subscribed to its type, of its workspace and of its partner. */
export function recipientsFilter(event: Pick<EventMessage, 'type' | 'workspace_id' | 'partner_id'>): Filter<WebhookDoc> | null {
  const owners: Filter<WebhookDoc>[] = [];
  if (WORKSPACE_TYPES.has(event.type) && event.workspace_id !== null) owners.push({ tenant_kind: 'workspace', workspace_id: event.workspace_id });
  if (event.partner_id !== null) owners.push({ tenant_kind: 'partner', partner_id: event.partner_id });
  if (owners.length === 0) return null;
  return { status: 'active', events: event.type, $or: owners };
}

/** Retry delay for a message whose handling failed for our own reasons (database, NATS): 1 s doubling to 1 min. */
export function infraRetryDelayMs(deliveryCount: number): number {
  return Math.min(1000 * 2 ** Math.max(0, deliveryCount - 1), 60_000);
}

export class WebhookFanout {
  private readonly o: FanoutOptions;
  private readonly runner: PullRunner;
  private readonly published: Counter<'result'>;
  private readonly maxInFlight: number;
  private inFlight = 0;
  /** Publishes waiting for a free place, first come first served. */
  private readonly queued: Array<() => void> = [];

  constructor(options: FanoutOptions) {
    this.o = options;
    this.maxInFlight = options.maxPublishesInFlight ?? FANOUT_PUBLISHES_IN_FLIGHT;
    this.published = new Counter({
      name: 'linkplane_webhook_fanout_deliveries_total',
      help: 'Delivery messages written by the event fan-out',
      labelNames: ['result'],
      registers: options.registry ? [options.registry] : [],
    });
    for (const result of ['published', 'failed']) this.published.inc({ result }, 0);
    this.runner = new PullRunner({
      nats: options.nats,
      stream: this.stream,
      durable: FANOUT_DURABLE,
      concurrency: options.concurrency ?? 16,
      ackWaitMs: FANOUT_ACK_WAIT_MS,
      logger: options.logger,
      handle: (msg) => this.handle(msg),
      retryDelayMs: infraRetryDelayMs,
    });
  }

  get stream(): string {
    return this.o.nats.subjects.stream('EVENTS');
  }

  async start(): Promise<void> {
    await ensureDurable(this.o.nats, {
      stream: this.stream,
      durable: FANOUT_DURABLE,
      filterSubject: `${this.o.nats.subjects.prefix}events.>`,
      ackWaitMs: FANOUT_ACK_WAIT_MS,
      maxDeliver: -1,
      // Created once, at the first start: events older than the fan-out itself are not sent to anyone.
      deliverPolicy: DeliverPolicy.New,
    });
    this.runner.start();
  }

  stop(): Promise<void> {
    return this.runner.stop();
  }

  private async handle(msg: JsMsg): Promise<void> {
    let event: EventMessage;
    try {
      event = msg.json<EventMessage>();
    } catch (error) {
      this.o.logger.error({ err: error, seq: msg.seq }, 'unreadable event message dropped');
      msg.term('unreadable');
      return;
    }
    const filter = recipientsFilter(event);
    const endpoints = filter ? await this.o.webhooks.collection.find(filter, { projection: { _id: 1 } }).toArray() : [];
    const results = await Promise.allSettled(
      endpoints.map((endpoint) =>
        this.bounded(() => publishDelivery(this.o.nats, { delivery_id: deliveryIdFor(event.id, endpoint._id), webhook_id: endpoint._id, event })),
      ),
    );
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    this.published.inc({ result: 'published' }, results.length - failed.length);
    if (failed.length > 0) {
      // The successful publishes are repeated with the redelivered event and dropped by their message id.
      this.published.inc({ result: 'failed' }, failed.length);
      throw failed[0]!.reason;
    }
    msg.ack();
  }

  /** Runs `publish` once fewer than `maxInFlight` publishes are waiting for JetStream; a finished one hands its place on. */
  private async bounded(publish: () => Promise<void>): Promise<void> {
    if (this.inFlight < this.maxInFlight) this.inFlight++;
    else await new Promise<void>((resolve) => this.queued.push(resolve));
    try {
      await publish();
    } finally {
      const next = this.queued.shift();
      if (next) next();
      else this.inFlight--;
    }
  }
}
