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
import { Lease } from '../platform/lease.ts';
import { WebhookWorker } from '../webhooks/webhook-worker.ts';
import { WebhookService } from '../webhooks/webhook.service.ts';
import { SecretBox } from '../webhooks/secret-box.ts';
import { EndpointFailingNotifier, Mailer } from '../webhooks/mailer.ts';
import { ClickIngestor } from '../clicks/ingest.ts';
import { ClickWebhooks } from '../clicks/click-webhooks.ts';
import { AbFeedback } from '../clicks/ab-feedback.ts';
import { DestinationHealthChecker } from '../clicks/health.ts';
import { ClickUsage } from '../clicks/usage-meter.ts';
import { DomainEvents } from '../domains/domain-events.ts';
import { BillingJobs } from '../partner/billing-jobs.ts';
import { AlertEvaluator, AnalyticsClickFigures } from '../alerts/alert-evaluator.ts';
import { AnalyticsService } from '../analytics/analytics.service.ts';
import { EdgeClickStore } from '../analytics/edge-clicks.store.ts';
import { SubscriptionWriter } from '../partner/subscription.service.ts';
import { RollupWriter } from '../analytics/rollup.store.ts';
import { RollupSettler } from '../analytics/settler.ts';
import { ClickRetention } from '../analytics/retention.ts';
import { LinkService } from '../links/link.service.ts';
import { PreviewFetcher } from '../links/preview-fetch.ts';
import { DomainService } from '../domains/domain.service.ts';
import { KubeDomains } from '../domains/kube-domains.ts';
import { ImportRunner } from '../imports/import-runner.ts';
import { ImportDomainDirectory } from '../imports/import-domains.ts';
import { IMPORT_SEAL_PURPOSE } from '../imports/import.service.ts';
import { TlsProvisioner } from '../domains/tls-provisioner.ts';
import { AcmeIssuer, ACME_ACCOUNT_SEAL_PURPOSE, TLS_KEY_SEAL_PURPOSE } from '../domains/acme-issuer.ts';
import { DnsChecker } from '../domains/dns-check.ts';

export interface WorkerService extends Service {
  readonly relay: OutboxRelay;
  readonly webhooks: WebhookWorker;
  readonly clicks: ClickIngestor;
  readonly clickWebhooks: ClickWebhooks;
  readonly rotatorHealth: DestinationHealthChecker;
  readonly previews: PreviewFetcher;
  readonly domainEvents: DomainEvents;
  readonly billing: BillingJobs;
  readonly alerts: AlertEvaluator;
  readonly settler: RollupSettler;
  readonly imports: ImportRunner;
  /** Custom domains' DNS checks and certificates when the platform provisions them itself (ACME); else null. */
  readonly tls: TlsProvisioner | null;
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

  const mailer = new Mailer(config.mail, config.publicApiUrl);
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
      mailer,
      workspaces: stores.workspaces,
      partners: stores.partners,
      logger,
    }),
    bus: infra.bus,
    logger,
    registry: metrics.registry,
  });

  const domainEvents = new DomainEvents({
    nats,
    client: mongo.client,
    domains: stores.domains,
    events: stores.events,
    workspaces: stores.workspaces,
    bus: infra.bus,
    logger,
    registry: metrics.registry,
    onEvent: () => relay.nudge(),
  });

  // Without Kubernetes, custom domains are verified and certified here (ACME HTTP-01), one replica at a time.
  const acme = config.tls.acme;
  const tls =
    acme === null
      ? null
      : new TlsProvisioner({
          domains: stores.domains,
          store: stores.domainTls,
          dns: new DnsChecker({
            servers: config.tls.dns.resolvers,
            targets: config.domains,
          }),
          issuer: new AcmeIssuer({
            directoryUrl: acme.directoryUrl,
            contactEmail: acme.contactEmail,
            caFile: acme.caFile,
            store: stores.domainTls,
            box: new SecretBox(config.secretKey, ACME_ACCOUNT_SEAL_PURPOSE),
            logger,
          }),
          keyBox: new SecretBox(config.secretKey, TLS_KEY_SEAL_PURPOSE),
          transition: (message) => domainEvents.apply(message),
          bus: infra.bus,
          // An order takes seconds; the lease is renewed between domains and outlives a slow one.
          lease: new Lease(mongo.db, 'domain-tls', Math.max(120_000, config.tls.sweepIntervalMs * 3)),
          logger,
          registry: metrics.registry,
          intervalMs: config.tls.sweepIntervalMs,
          dnsBackoffMs: config.tls.dns.backoffMs,
          giveUpAfterMs: config.tls.dns.giveUpAfterMs,
          renewAtFraction: config.tls.renewAtFraction,
          issuanceBackoffMs: config.tls.issuanceBackoffMs,
        });

  // Analytics rollups are counted exactly once per click: a batch's raw clicks are written in one transaction with
  // their rollup parts, worked out while the batch before is written.
  const rollups = new RollupWriter({
    client: mongo.client,
    store: stores.rollups,
    clicks: stores.clicks.clicks,
    // A merge that failed is retried by the settling job at the latest.
    onError: (error) => logger.warn({ err: error }, 'merging rollup parts failed'),
    registry: metrics.registry,
  });
  const settler = new RollupSettler({
    db: mongo.db,
    store: stores.rollups,
    lease: new Lease(mongo.db, 'analytics-settle', Math.max(30_000, config.analytics.settleIntervalMs * 3)),
    logger,
    intervalMs: config.analytics.settleIntervalMs,
  });
  const retention = new ClickRetention(stores.workspaces, config.analytics.clickRetentionDays);
  const clicks = new ClickIngestor({
    nats,
    store: stores.clicks,
    logger,
    registry: metrics.registry,
    batchSize: config.clicks.batchSize,
    batchWaitMs: config.clicks.batchWaitMs,
    counting: [
      new ClickUsage({ db: mongo.db, client: mongo.client, workspaces: stores.workspaces, events: stores.events, onEvent: () => relay.nudge() }).afterCount,
    ],
    ...(config.analytics.rollups ? { arriving: rollups.arriving, storing: rollups.storing } : {}),
    retention: (records) => retention.forBatch(records),
    ackWaitMs: config.analytics.clickAckWaitMs,
    derived: [
      new AbFeedback({
        client: mongo.client,
        links: stores.links.collection,
        clicks: stores.clicks,
        conversions: stores.conversions,
        events: stores.events,
        workspaces: stores.workspaces,
        invalidate: (m) => infra.bus.publish(m),
        onEvent: () => relay.nudge(),
      }).afterBatch,
    ],
  });
  const clickWebhooks = new ClickWebhooks({
    nats,
    webhooks: stores.webhooks,
    bus: infra.bus,
    logger,
    registry: metrics.registry,
    batchSize: config.clickWebhooks.batchSize,
    batchWaitMs: config.clickWebhooks.batchWaitMs,
  });
  const rotatorHealth = new DestinationHealthChecker({
    links: stores.links.collection,
    health: stores.rotatorHealth,
    intervalMs: config.clicks.healthCheckIntervalMs,
    allowPrivate: config.webhooks.allowPrivateTargets,
    lease: new Lease(mongo.db, 'rotator-health', Math.max(30_000, config.clicks.healthCheckIntervalMs * 3)),
    logger,
  });

  const previews = new PreviewFetcher({
    links: stores.links.collection,
    bus: infra.bus,
    intervalMs: config.previews.intervalMs,
    refreshMs: config.previews.refreshMs,
    timeoutMs: config.previews.timeoutMs,
    maxBytes: config.previews.maxBytes,
    allowPrivate: config.webhooks.allowPrivateTargets,
    lease: new Lease(mongo.db, 'link-previews', Math.max(30_000, config.previews.intervalMs * 3)),
    logger,
  });

  const billing = new BillingJobs({
    client: mongo.client,
    workspaces: stores.workspaces,
    partners: stores.partners,
    ledger: stores.ledger,
    subscriptions: new SubscriptionWriter({ workspaces: stores.workspaces, events: stores.events, bus: infra.bus }),
    dunningLease: new Lease(mongo.db, 'billing-dunning', Math.max(30_000, config.partner.billingSweepMs * 3)),
    payoutLease: new Lease(mongo.db, 'billing-payouts', Math.max(30_000, config.partner.billingSweepMs * 3)),
    logger,
    registry: metrics.registry,
    intervalMs: config.partner.billingSweepMs,
    graceDayMs: config.partner.graceDayMs,
    onEvent: () => relay.nudge(),
  });

  // Import jobs write links through the links service, onto the default domain or the workspace's own domains,
  // including ones the import connects (still pending verification).
  const importDomains = new ImportDomainDirectory(mongo.db, config.defaultShortDomain, config.shortLinkBaseUrl);
  const imports = new ImportRunner({
    db: mongo.db,
    store: stores.imports,
    box: new SecretBox(config.secretKey, IMPORT_SEAL_PURPOSE),
    links: new LinkService({
      client: mongo.client,
      links: stores.links,
      quota: stores.quota,
      tags: stores.tags,
      folders: stores.folders,
      events: stores.events,
      domains: importDomains,
      bus: infra.bus,
      onEvent: () => relay.nudge(),
      blocklist: config.linkBlocklist,
    }),
    linkDocs: stores.links.collection,
    tags: stores.tags,
    keys: stores.keys,
    workspaces: stores.workspaces,
    domains: new DomainService({
      domains: stores.domains,
      kube: KubeDomains.fromConfig(config.domains),
      tls: config.tls.acme === null ? null : stores.domainTls,
      bus: infra.bus,
      defaultHostname: importDomains.default.hostname,
      policy: {
        reserved: [config.defaultShortDomain, new URL(config.shortLinkBaseUrl).host, new URL(config.publicApiUrl).host, config.domains.cnameTarget ?? ''],
      },
      targets: config.domains,
    }),
    defaultHostname: importDomains.default.hostname,
    logger,
    pollMs: config.imports.pollMs,
    leaseMs: config.imports.leaseMs,
    allowPrivateSources: config.imports.allowPrivateSources,
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
  const alerts = new AlertEvaluator({
    db: mongo.db,
    client: mongo.client,
    alerts: stores.alerts,
    events: stores.events,
    workspaces: stores.workspaces,
    usage: stores.usage,
    figures: new AnalyticsClickFigures(new AnalyticsService({ rollups: stores.rollups, edges: new EdgeClickStore(stores.clicks.clicks), links: stores.links.collection, defaultBaseUrl: config.shortLinkBaseUrl }), stores.workspaces),
    mailer,
    lease: new Lease(mongo.db, 'alerts', Math.max(30_000, config.alerts.evalIntervalMs * 3)),
    logger,
    intervalMs: config.alerts.evalIntervalMs,
    onEvent: () => relay.nudge(),
  });

  return {
    name: 'worker',
    relay,
    webhooks,
    domainEvents,
    clicks,
    clickWebhooks,
    rotatorHealth,
    previews,
    billing,
    alerts,
    settler,
    imports,
    tls,
    port: () => server?.port ?? config.workerPort,
    async start() {
      relay.start();
      await webhooks.start();
      await clicks.start();
      await clickWebhooks.start();
      rotatorHealth.start();
      previews.start();
      await domainEvents.start();
      billing.start();
      alerts.start();
      settler.start();
      imports.start();
      tls?.start();
      server = await listen(app.callback(), config.workerPort, config.host, inFlight);
      logger.info({ port: server.port }, `worker running (health and metrics on :${server.port})`);
    },
    async stop() {
      await server?.close(config.shutdownTimeoutMs);
      await imports.stop();
      await tls?.stop();
      await domainEvents.stop();
      await alerts.stop();
      await settler.stop();
      await billing.stop();
      await rotatorHealth.stop();
      await previews.stop();
      await clicks.stop();
      await clickWebhooks.stop();
      await rollups.idle();
      await webhooks.stop();
      await relay.stop();
    },
  };
}
