// Clicks streamed to webhook endpoints (`link.clicked`): a durable consumer of its own on CLICKS gathers clicks for a
// while (up to `batchSize` clicks, or `batchWaitMs` after the first) and hands each subscribed endpoint of a
// workspace one DELIVERIES message per slice of at most `batchSize` of its clicks. The delivery consumer then POSTs it
// like any other event: signed, logged, retried on the schedule, the endpoint's concurrency bounded. A busy link
// therefore costs a receiver one POST per `batchSize` clicks, not one per click. The clicks are acknowledged once
// every delivery message of the batch is stored; a batch handed out again (a worker died) is published again under
// the same ids, and JetStream drops the copies.
import { createHash } from 'node:crypto';
import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { Counter, type Registry } from 'prom-client';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { BatchingConsumer } from '../platform/batching-consumer.ts';
import type { WebhookStore } from '../webhooks/webhook.store.ts';
import { deliveryIdFor, publishDelivery, type EventMessage } from '../webhooks/delivery-message.ts';
import type { ClickRecord } from '../visitor/click-record.ts';
import { decodeClicks } from './click-wire.ts';
import { clickEventOf, type ClickedEventData } from './click-event.ts';

export const CLICK_WEBHOOKS_DURABLE = 'click-webhooks';
const EVENT_TYPE = 'link.clicked';
const ENDPOINTS_TTL_MS = 5000;

export interface ClickWebhooksOptions {
  nats: Nats;
  webhooks: WebhookStore;
  /** Endpoint changes (created, events changed, deleted, failing): the endpoints known per workspace are dropped. */
  bus: CacheBus | null;
  logger: Logger;
  registry?: Registry;
  /** WEBHOOK_CLICK_BATCH_SIZE: clicks per delivery at most. */
  batchSize: number;
  /** WEBHOOK_CLICK_BATCH_WAIT_MS: how long the first click of a batch waits for company. */
  batchWaitMs: number;
  retryDelayMs?: number;
  ackWaitMs?: number;
}

/** `evt_` and 20 base62 characters from the batch's click ids: the same batch always makes the same event. */
export function batchEventId(clickIds: readonly string[]): string {
  const digest = createHash('sha256').update(clickIds.join('\n')).digest();
  let n = BigInt(`0x${digest.toString('hex')}`);
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let out = '';
  for (let i = 0; i < 20; i++) {
    out += alphabet[Number(n % 62n)];
    n /= 62n;
  }
  return `evt_${out}`;
}

export class ClickWebhooks {
  readonly stream: string;
  private readonly o: ClickWebhooksOptions;
  private readonly batches: Counter;
  private readonly clicks: Counter;
  /** A batch is up to batchSize messages (a message holds one or many clicks; the slices bound each delivery). */
  private readonly consumer: BatchingConsumer<{ msg: JsMsg; workspaceId: string }>;
  /** Per workspace: its active endpoints subscribed to `link.clicked`, as last read. */
  private readonly endpoints = new Map<string, { ids: string[]; expiresAt: number }>();
  private invalidations = 0;

  constructor(options: ClickWebhooksOptions) {
    this.o = options;
    this.stream = options.nats.subjects.stream('CLICKS');
    const registers = options.registry ? [options.registry] : [];
    this.batches = new Counter({ name: 'linkplane_webhook_click_batches_total', help: '`link.clicked` deliveries handed to the delivery consumer (one per endpoint and batch)', registers });
    this.clicks = new Counter({ name: 'linkplane_webhook_clicks_total', help: 'Clicks put in `link.clicked` deliveries (counted once per endpoint)', registers });
    options.bus?.on((message) => {
      // `all`: back from a NATS outage, whose webhook changes were never heard.
      if (message.kind !== 'webhook' && message.kind !== 'all') return;
      this.invalidations++;
      this.endpoints.clear();
    });
    this.consumer = new BatchingConsumer({
      nats: options.nats,
      logger: options.logger,
      durable: {
        stream: this.stream,
        durable: CLICK_WEBHOOKS_DURABLE,
        filterSubject: options.nats.subjects.click('>'),
        ackWaitMs: options.ackWaitMs ?? 60_000,
        maxDeliver: -1,
        // Created once, at the first start: clicks older than the stream of clicks itself are not sent to anyone.
        deliverPolicy: DeliverPolicy.New,
      },
      maxMessages: Math.max(64, options.batchSize * 2),
      batchSize: options.batchSize,
      batchWaitMs: options.batchWaitMs,
      read: (msg) => ({ entry: { msg, workspaceId: msg.subject.slice(options.nats.subjects.click('').length) }, weight: 1 }),
      handle: (pending) => this.process(pending),
      failure: 'click webhook batch failed; its clicks are handed out again',
    });
  }

  start(): Promise<void> {
    return this.consumer.start();
  }

  /** Stops consuming, then hands out what is in hand. */
  stop(): Promise<void> {
    return this.consumer.stop();
  }

  private async process(pending: ReadonlyArray<{ msg: JsMsg; workspaceId: string }>): Promise<void> {
    const byWorkspace = new Map<string, { endpoints: string[]; clicks: ClickRecord[] }>();
    try {
      for (const { msg, workspaceId } of pending) {
        let entry = byWorkspace.get(workspaceId);
        if (!entry) {
          entry = { endpoints: await this.endpointsOf(workspaceId), clicks: [] };
          byWorkspace.set(workspaceId, entry);
        }
        // Decoded only for a workspace that streams its clicks somewhere.
        if (entry.endpoints.length === 0) continue;
        const clicks = parse(msg);
        if (clicks) entry.clicks.push(...clicks);
      }
      const publishes: Promise<void>[] = [];
      for (const [workspaceId, { endpoints, clicks }] of byWorkspace) {
        for (let i = 0; i < clicks.length; i += this.o.batchSize) {
          const slice = clicks.slice(i, i + this.o.batchSize);
          const data: ClickedEventData = { clicks: slice.map(clickEventOf) };
          const event: EventMessage = {
            id: batchEventId(slice.map((c) => c.id)),
            type: EVENT_TYPE,
            created_at: new Date().toISOString(),
            workspace_id: workspaceId,
            partner_id: null,
            data,
          };
          for (const webhookId of endpoints) {
            publishes.push(publishDelivery(this.o.nats, { delivery_id: deliveryIdFor(event.id, webhookId), webhook_id: webhookId, event }));
            this.batches.inc();
            this.clicks.inc(slice.length);
          }
        }
      }
      await Promise.all(publishes);
    } catch (error) {
      this.o.logger.warn({ err: error, messages: pending.length }, 'click webhook batch not handed out; it will be redelivered');
      for (const { msg } of pending) msg.nak(this.o.retryDelayMs ?? 1000);
      return;
    }
    for (const { msg } of pending) msg.ack();
  }

  private async endpointsOf(workspaceId: string): Promise<string[]> {
    const now = Date.now();
    const hit = this.endpoints.get(workspaceId);
    if (hit && hit.expiresAt > now) return hit.ids;
    const before = this.invalidations;
    const docs = await this.o.webhooks.collection
      .find({ tenant_kind: 'workspace', workspace_id: workspaceId, status: 'active', events: EVENT_TYPE }, { projection: { _id: 1 } })
      .toArray();
    const ids = docs.map((d) => d._id);
    if (before === this.invalidations) this.endpoints.set(workspaceId, { ids, expiresAt: now + ENDPOINTS_TTL_MS });
    return ids;
  }
}

function parse(msg: JsMsg): ClickRecord[] | null {
  try {
    return decodeClicks(msg.json<unknown>());
  } catch {
    return null;
  }
}
