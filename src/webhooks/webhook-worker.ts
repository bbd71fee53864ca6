// The worker's webhook part: the fan-out and delivery consumers, and the gauges about them.
import { Gauge, type Registry } from 'prom-client';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import type { WebhookStore } from './webhook.store.ts';
import type { WebhookDeliveryStore } from './delivery.store.ts';
import type { WebhookService } from './webhook.service.ts';
import type { TargetOptions } from '../platform/outbound/ssrf.ts';
import { FANOUT_DURABLE, WebhookFanout } from './fanout.ts';
import { DELIVERY_DURABLE, WebhookDelivery } from './delivery.ts';
import type { EndpointFailingNotifier } from './mailer.ts';

export interface WebhookWorkerOptions {
  nats: Nats;
  webhooks: WebhookStore;
  deliveries: WebhookDeliveryStore;
  /** Only its signingSecrets is used: the worker signs with the same secrets the api manages. */
  service: WebhookService;
  targets: TargetOptions;
  retryScheduleMs: readonly number[];
  timeoutMs: number;
  /** The delivery consumer's ack_wait (WEBHOOK_ACK_WAIT_MS). */
  ackWaitMs?: number;
  /** The owner's e-mail when an endpoint turns failing. */
  notifier: EndpointFailingNotifier;
  /** Endpoint changes broadcast by the api: with it, the delivery consumer caches endpoints (delivery.ts). */
  bus?: CacheBus | null;
  logger: Logger;
  registry: Registry;
  /** How often consumer lag is read from JetStream. */
  lagIntervalMs?: number;
}

export class WebhookWorker {
  readonly fanout: WebhookFanout;
  readonly delivery: WebhookDelivery;
  private readonly o: WebhookWorkerOptions;
  private readonly lag: Gauge<'consumer'>;
  private lagTimer: NodeJS.Timeout | null = null;

  constructor(options: WebhookWorkerOptions) {
    this.o = options;
    this.fanout = new WebhookFanout({ nats: options.nats, webhooks: options.webhooks, logger: options.logger, registry: options.registry });
    this.delivery = new WebhookDelivery({
      nats: options.nats,
      webhooks: options.webhooks,
      deliveries: options.deliveries,
      signingSecrets: (endpoint) => options.service.signingSecrets(endpoint),
      targets: options.targets,
      retryScheduleMs: options.retryScheduleMs,
      timeoutMs: options.timeoutMs,
      ...(options.ackWaitMs === undefined ? {} : { ackWaitMs: options.ackWaitMs }),
      onEndpointFailing: (endpoint) => options.notifier.notify(endpoint),
      bus: options.bus ?? null,
      logger: options.logger,
      registry: options.registry,
    });
    const webhooks = options.webhooks;
    new Gauge({
      name: 'linkplane_webhook_endpoints_failing',
      help: 'Webhook endpoints in the failing state (counted at scrape time, across all replicas)',
      registers: [options.registry],
      async collect() {
        this.set(await webhooks.collection.countDocuments({ status: 'failing' }));
      },
    });
    this.lag = new Gauge({
      name: 'linkplane_webhook_consumer_pending_messages',
      help: 'Messages not yet delivered to the webhook consumers (JetStream num_pending), read periodically',
      labelNames: ['consumer'],
      registers: [options.registry],
    });
  }

  /** Creates the durable consumers (idempotent) and starts consuming. */
  async start(): Promise<void> {
    await this.fanout.start();
    await this.delivery.start();
    await this.readLag();
    this.lagTimer = setInterval(() => void this.readLag(), this.o.lagIntervalMs ?? 15_000);
    this.lagTimer.unref();
  }

  /** Stops fetching and waits for the messages in hand (SIGTERM drains in-flight deliveries). */
  async stop(): Promise<void> {
    if (this.lagTimer) clearInterval(this.lagTimer);
    this.lagTimer = null;
    await Promise.all([this.fanout.stop(), this.delivery.stop()]);
    await this.o.notifier.stop();
  }

  private async readLag(): Promise<void> {
    for (const [stream, durable] of [
      [this.fanout.stream, FANOUT_DURABLE],
      [this.delivery.stream, DELIVERY_DURABLE],
    ] as const) {
      try {
        const info = await this.o.nats.jsm.consumers.info(stream, durable);
        this.lag.set({ consumer: durable }, info.num_pending);
      } catch (error) {
        this.o.logger.debug({ err: error, consumer: durable }, 'consumer info unavailable');
      }
    }
  }
}
