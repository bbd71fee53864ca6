import { join } from 'node:path';
import Koa from 'koa';
import type { Infra } from './infra.ts';
import type { Service } from './service.ts';
import type { ApiContext, ApiState } from '../http/context.ts';
import { observe } from '../http/observe.ts';
import { opsEndpoints } from '../http/ops.ts';
import { InFlight, listen, type HttpServer } from '../platform/http-server.ts';
import { errorResponse, notFoundResponse } from '../redirect/pages.ts';
import { LinkResolver } from '../redirect/resolver.ts';
import { VisitorProfiler } from '../redirect/visitor.ts';
import { RedirectHandler } from '../redirect/redirect.handler.ts';
import { RedirectMetrics } from '../redirect/redirect.metrics.ts';
import { ClickIds } from '../clicks/click-id.ts';
import { ClickPublisher } from '../clicks/publisher.ts';
import { ClickSpool } from '../clicks/click-spool.ts';
import { RotatorCounters } from '../clicks/counters.ts';
import { buildReportService } from './reports.ts';
import { reportForm } from '../reports/report.form.ts';
import { acmeChallenges, SniCertificates } from '../redirect/tls-certificates.ts';
import { SecretBox } from '../webhooks/secret-box.ts';
import { TLS_KEY_SEAL_PURPOSE } from '../domains/tls.store.ts';

export interface RedirectService extends Service {
  readonly clicks: ClickPublisher;
  port(): number;
  /** The HTTPS port for custom domains (TLS_PORT); null without one. */
  tlsPort(): number | null;
}

/**
 * The redirect process: serves short links on every active domain (DESIGN, redirect decision order), its
 * interstitial pages, and records every click on the CLICKS stream without making the visitor wait.
 */
export function buildRedirect(infra: Infra): RedirectService {
  const { config, logger, metrics, mongo, nats, bus, stores } = infra;
  const counters = new RotatorCounters({ clicks: stores.clicks, health: stores.rotatorHealth, refreshMs: config.redirect.counterRefreshMs, logger });
  const resolver = new LinkResolver({
    db: mongo.db,
    links: stores.links,
    bus,
    logger,
    defaultHostname: config.defaultShortDomain,
    ttlMs: config.redirect.cacheTtlMs,
    negativeTtlMs: config.redirect.negativeCacheTtlMs,
    maxEntries: config.redirect.cacheMaxEntries,
  });
  // One folder per installation (stream prefix): a spooled click is only ever published to the streams it was meant for.
  const spool =
    config.redirect.clickSpoolDir === null
      ? null
      : new ClickSpool({ dir: join(config.redirect.clickSpoolDir, config.nats.prefix || 'default'), maxBytes: config.redirect.clickSpoolMaxBytes });
  const clicks = new ClickPublisher({ nats, logger, registry: metrics.registry, bufferMax: config.redirect.clickBufferMax, lingerMs: 10, spool });
  const redirectMetrics = new RedirectMetrics(metrics.registry, () => resolver.size());

  const app = new Koa<ApiState>();
  app.silent = true;
  const inFlight = new InFlight();
  app.use(
    observe(
      infra.access,
      metrics,
      (ctx, error) => {
        logger.error({ err: error, req_id: ctx.state.requestId }, 'unexpected error');
        redirectMetrics.outcome('error');
        ctx.status = 500;
        if (ctx.res.headersSent) return;
        const page = errorResponse();
        ctx.set(page.headers);
        ctx.body = page.html;
      },
      inFlight,
    ),
  );

  let profiler: VisitorProfiler | null = null;
  app.use(opsEndpoints(metrics.registry, async () => ({ mongodb: await mongo.ping(), nats: nats.isConnected() })));
  // Self-managed TLS (ACME): the CA's HTTP-01 requests are answered here, on the plain listener, before anything else.
  if (config.tls.acme !== null) app.use(acmeChallenges(stores.domainTls));
  const certificates =
    config.tls.port === null
      ? null
      : new SniCertificates({ store: stores.domainTls, domains: stores.domains.collection, keyBox: new SecretBox(config.secretKey, TLS_KEY_SEAL_PURPOSE), bus, logger });
  const reports = buildReportService(infra);
  app.use(reportForm({ resolver, reports, trustedProxyHops: config.redirect.trustedProxyHops }));
  app.use((ctx: ApiContext) => {
    const page = notFoundResponse();
    ctx.status = page.status;
    ctx.set(page.headers);
    ctx.body = page.html;
  });

  let server: HttpServer | null = null;
  let tlsServer: HttpServer | null = null;
  return {
    name: 'redirect',
    clicks,
    port: () => server?.port ?? config.redirectPort,
    tlsPort: () => tlsServer?.port ?? config.tls.port,
    async start() {
      profiler = await VisitorProfiler.open({ redirect: config.redirect, secretKey: config.secretKey, logger });
      const handler = new RedirectHandler({
        config,
        logger,
        resolver,
        profiler,
        clickIds: new ClickIds(config.secretKey),
        clicks,
        counters,
        attempts: stores.passwordAttempts,
        metrics: redirectMetrics,
        access: infra.access,
        accessLogClicks: config.redirect.accessLogClicks,
        requestDuration: metrics.requestDuration,
      });
      counters.start();
      // Short links are answered by the handler on node:http; everything else by the Koa app behind it.
      const koa = app.callback();
      const listener = handler.listener((req, res) => void koa(req, res), inFlight);
      server = await listen(listener, config.redirectPort, config.host, inFlight);
      logger.info({ port: server.port }, `redirect listening on http://${config.host}:${server.port}`);
      if (certificates !== null && config.tls.port !== null) {
        tlsServer = await listen(listener, config.tls.port, config.host, inFlight, { sni: certificates.callback });
        logger.info({ port: tlsServer.port }, `redirect serving custom domains on https://${config.host}:${tlsServer.port}`);
      }
    },
    async stop() {
      await Promise.all([server?.close(config.shutdownTimeoutMs), tlsServer?.close(config.shutdownTimeoutMs)]);
      counters.stop();
      // Clicks still waiting are published before NATS is drained.
      const left = await clicks.flush(Math.min(5000, config.shutdownTimeoutMs));
      if (left > 0) logger.warn({ clicks: left }, 'clicks not published at shutdown');
      profiler?.close();
      await stores.rateLimiter.close();
    },
  };
}
