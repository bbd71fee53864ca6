import Koa from 'koa';
import type { Infra } from './infra.ts';
import type { Service } from './service.ts';
import type { ApiState } from '../http/context.ts';
import { observe } from '../http/observe.ts';
import { opsEndpoints } from '../http/ops.ts';
import { errorEnvelope } from '../http/errors.ts';
import { NotFoundError } from '../platform/errors.ts';
import { InFlight, listen, type HttpServer } from '../platform/http-server.ts';
import { OutboxRelay } from '../events/outbox-relay.ts';
import { Lease } from '../events/lease.ts';
import { WebhookWorker } from '../webhooks/webhook-worker.ts';
import { WebhookService } from '../webhooks/webhook.service.ts';
import { SecretBox } from '../webhooks/secret-box.ts';
import { EndpointFailingNotifier, Mailer } from '../webhooks/mailer.ts';

export interface WorkerService extends Service {
  readonly relay: OutboxRelay;
  readonly webhooks: WebhookWorker;
  port(): number;
}

/** The worker process: the outbox relay (one active replica, by lease) and, later, the JetStream consumers. */
export function buildWorker(infra: Infra): WorkerService {
  const { config, logger, metrics, mongo, nats, stores } = infra;
  const relay = new OutboxRelay({
    events: stores.events,
    nats,
    // Long enough to ride out a slow batch, short enough that a dead worker's successor starts within seconds.
    lease: new Lease(mongo.db, 'outbox-relay', Math.max(5000, config.outboxPollMs * 20)),
    logger,
    registry: metrics.registry,
    pollMs: config.outboxPollMs,
  });

  const targets = { allowPrivate: config.webhooks.allowPrivateTargets };
  const webhooks = new WebhookWorker({
    nats,
    webhooks: stores.webhooks,
    deliveries: stores.webhookDeliveries,
    service: new WebhookService({
      webhooks: stores.webhooks,
      deliveries: stores.webhookDeliveries,
      box: new SecretBox(config.secretKey),
      targets,
      secretGraceHours: config.webhooks.secretGraceHours,
    }),
    targets,
    retryScheduleMs: config.webhookDelivery.retryScheduleMs,
    timeoutMs: config.webhookDelivery.timeoutMs,
    ackWaitMs: config.webhookDelivery.ackWaitMs,
    notifier: new EndpointFailingNotifier({
      mailer: new Mailer(config.mail, config.publicApiUrl),
      workspaces: stores.workspaces,
      partners: stores.partners,
      logger,
    }),
    logger,
    registry: metrics.registry,
  });

  const app = new Koa<ApiState>();
  app.silent = true;
  const inFlight = new InFlight();
  app.use(observe(infra.access, metrics, errorEnvelope(logger, config.docsBaseUrl), inFlight));
  app.use(opsEndpoints(metrics.registry, async () => ({ mongodb: await mongo.ping(), nats: nats.isConnected() })));
  app.use(() => {
    throw new NotFoundError('route');
  });

  infra.outbox.on(() => relay.nudge());

  let server: HttpServer | null = null;
  return {
    name: 'worker',
    relay,
    webhooks,
    port: () => server?.port ?? config.workerPort,
    async start() {
      relay.start();
      await webhooks.start();
      server = await listen(app.callback(), config.workerPort, config.host, inFlight);
      logger.info({ port: server.port }, `worker running (health and metrics on :${server.port})`);
    },
    async stop() {
      await server?.close(config.shutdownTimeoutMs);
      await webhooks.stop();
      await relay.stop();
    },
  };
}
