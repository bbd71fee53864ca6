import Koa, { type Middleware } from 'koa';
import compose from 'koa-compose';
import Router from '@koa/router';
import type { Infra } from './infra.ts';
import type { Service } from './service.ts';
import type { ApiContext, ApiState } from '../http/context.ts';
import { observe } from '../http/observe.ts';
import { errorEnvelope } from '../http/errors.ts';
import { transportErrorBody } from '../http/error-response.ts';
import { opsEndpoints } from '../http/ops.ts';
import { challengeOnUnauthorized, chargeMore, gate } from '../http/gate.ts';
import { jsonBody } from '../http/body.ts';
import { idempotency } from '../http/idempotency.ts';
import { memoizeMatches, mount, type RouteSpec } from '../http/route-table.ts';
import { fallback } from '../http/fallback.ts';
import { InFlight, listen, type HttpServer } from '../platform/http-server.ts';
import { NotFoundError } from '../platform/errors.ts';
import { KeyService } from '../tenancy/key.service.ts';
import { WorkspaceService } from '../workspace/workspace.service.ts';
import { workspaceRoutes } from '../workspace/workspace.routes.ts';
import { PartnerService } from '../partner/partner.service.ts';
import { partnerRoutes } from '../partner/partner.routes.ts';
import { SubscriptionWriter } from '../partner/subscription.service.ts';
import { BillingService } from '../partner/billing.service.ts';
import { billingRoutes, BILLING_INGEST_PREFIX } from '../partner/billing.routes.ts';
import { refuseInactiveWrites } from '../partner/inactive-guard.ts';
import { EVENT_PAYLOADS } from './event-payloads.ts';
import { partnerDomainRoutes } from '../partner/partner-domain.routes.ts';
import { partnerAnalyticsRoutes } from '../partner/partner-analytics.routes.ts';
import { keyRoutes } from '../keys/key.routes.ts';
import { DomainDirectory } from '../links/domains.ts';
import { LinkService } from '../links/link.service.ts';
import { LabelService } from '../links/label.service.ts';
import { labelRoutes, linkRoutes } from '../links/link.routes.ts';
import { qrLogoRoutes } from '../links/qr-logo.routes.ts';
import { QrLogoService } from '../links/qr-logo.service.ts';
import { eventRoutes } from '../events/event.routes.ts';
import { ClickStreams } from '../clicks/click-stream.ts';
import { clickStreamRoutes } from '../clicks/click-stream.routes.ts';
import { WebhookService } from '../webhooks/webhook.service.ts';
import { webhookRoutes } from '../webhooks/webhook.routes.ts';
import { DomainService } from '../domains/domain.service.ts';
import { domainRoutes } from '../domains/domain.routes.ts';
import { KubeDomains } from '../domains/kube-domains.ts';
import { IpListService } from '../iplists/ip-list.service.ts';
import { ipListRoutes } from '../iplists/ip-list.routes.ts';
import { webhookTestRoutes } from '../webhooks/test-delivery.ts';
import { SecretBox } from '../webhooks/secret-box.ts';
import { buildOpenApi } from '../http/openapi.ts';
import { ClickIds } from '../clicks/click-id.ts';
import { AbFeedback } from '../clicks/ab-feedback.ts';
import { ConversionService } from '../conversions/conversion.service.ts';
import { conversionRoutes } from '../conversions/conversion.routes.ts';
import { buildReportService } from './reports.ts';
import { PUBLIC_REPORT_PATH, reportRoutes } from '../reports/report.routes.ts';
import { MCP_PATH, mcpRoutes } from '../mcp/mcp.routes.ts';
import { OAuthService } from '../oauth/oauth.service.ts';
import { buildAuthorizationServer } from '../oauth/authorization-server.ts';
import { authorizedAppRoutes, consentRoutes, oauthEndpoints, resourceMetadataUrl } from '../oauth/oauth.routes.ts';
import { AlertService } from '../alerts/alert.service.ts';
import { alertRoutes } from '../alerts/alert.routes.ts';
import { openApiRoutes } from '../http/openapi.routes.ts';
import { AnalyticsService } from '../analytics/analytics.service.ts';
import { EstimateMemo, PartCache } from '../analytics/part-cache.ts';
import { EdgeClickStore } from '../analytics/edge-clicks.store.ts';
import { analyticsRoutes } from '../analytics/analytics.routes.ts';
import { ConversionRollup } from '../analytics/conversion-rollup.ts';
import { Mailer } from '../webhooks/mailer.ts';
import { AuthService } from '../users/auth.service.ts';
import { authRoutes } from '../users/auth.routes.ts';
import { MemberService } from '../users/member.service.ts';
import { memberRoutes } from '../users/member.routes.ts';
import { OidcClient } from '../users/oidc.ts';
import { oidcRoutes } from '../users/oidc.routes.ts';
import { authDoor } from '../users/auth-door.ts';
import { dashboardKeyRoutes } from '../keys/dashboard-key.routes.ts';
import { KeyAdminService, scopeKindsOf } from '../keys/key-admin.service.ts';
import { sessionPrincipal } from '../users/session-gate.ts';
import { SessionCache } from '../users/session-cache.ts';
import { DOWNLOADS_PATH, DownloadTickets, downloadRoutes, followDownload } from '../users/downloads.ts';
import { cookiePolicyFor } from '../http/session-cookie.ts';
import { dashboardStatic } from '../dashboard/static.ts';
import { ImportService, IMPORT_SEAL_PURPOSE } from '../imports/import.service.ts';

/** The /auth operations the OpenAPI document describes (the rest is the dashboard's own API, see docs/dashboard.md). */
// The e-mailed link's GET (a 303 to the dashboard's page) is the dashboard's own, not an operation to call.
const PUBLISHED_AUTH_OPERATIONS = new Set(['requestPasswordReset', 'resetPassword']);
import { importRoutes } from '../imports/import.routes.ts';

/** Paths under /v1 answered without a key. */
const PUBLIC_PATHS = new Set(['/v1/openapi.json', `/v1${PUBLIC_REPORT_PATH}`]);
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface ApiService extends Service {
  readonly app: Koa<ApiState>;
  readonly keys: KeyService;
  readonly auth: AuthService;
  readonly routes: readonly RouteSpec[];
  /** Routes outside /v1 that the OpenAPI document describes too (the password reset routes of /auth). */
  readonly outsideV1: ReadonlyArray<{ prefix: string; routes: readonly RouteSpec[] }>;
  port(): number;
}

/** The api process: config → stores → services → routes, as a wiring diagram. */
export function buildApi(infra: Infra): ApiService {
  const { config, logger, metrics, mongo, nats, bus, stores } = infra;

  const keys = new KeyService({
    keys: stores.keys,
    workspaces: stores.workspaces,
    partners: stores.partners,
    logger,
    cacheTtlMs: config.keyCacheTtlMs,
    defaultRateLimits: config.rateLimit,
  });
  keys.subscribe(bus);
  const domains = new DomainDirectory(mongo.db, config.defaultShortDomain, config.shortLinkBaseUrl, { hostsTtlMs: config.keyCacheTtlMs });
  domains.subscribe(bus);
  const workspaces = new WorkspaceService({
    workspaces: stores.workspaces,
    partners: stores.partners,
    usage: stores.usage,
    defaultRatePerMinute: config.rateLimit.workspacePerMinute,
    ipLists: stores.ipLists,
    domains,
    bus,
  });
  const ipLists = new IpListService({ ipLists: stores.ipLists, bus });

  const subscriptions = new SubscriptionWriter({ workspaces: stores.workspaces, events: stores.events, bus });
  const partners = new PartnerService({
    client: mongo.client,
    partners: stores.partners,
    workspaces: stores.workspaces,
    plans: stores.partnerPlans,
    subscriptions,
    keys,
    box: new SecretBox(config.secretKey),
    bus,
    config: {
      clientQuota: config.partner.clientQuota,
      platformFeeBps: config.partner.platformFeeBps,
      publicApiUrl: config.publicApiUrl,
      defaultWorkspaceRatePerMinute: config.rateLimit.workspacePerMinute,
    },
    onEvent: () => infra.outbox.nudge(),
  });
  const billing = new BillingService({
    client: mongo.client,
    ledger: stores.ledger,
    workspaces: stores.workspaces,
    partners: stores.partners,
    partnerService: partners,
    subscriptions,
    events: stores.events,
    onEvent: () => infra.outbox.nudge(),
    logger,
    registry: metrics.registry,
    refusals: { limiter: stores.rateLimiter, perIpPerMinute: config.partner.ingestRefusedPerMinPerIp, perPartnerPerMinute: config.partner.ingestRefusedPerMinPerPartner },
  });

  const links = new LinkService({
    client: mongo.client,
    links: stores.links,
    quota: stores.quota,
    tags: stores.tags,
    folders: stores.folders,
    events: stores.events,
    domains,
    bus,
    onEvent: () => infra.outbox.nudge(),
    blocklist: config.linkBlocklist,
    exportSlots: stores.linkExportSlots,
  });
  const qrLogos = new QrLogoService(stores.qrLogos);
  const tags = new LabelService(stores.tags, stores.links, 'tag');
  const folders = new LabelService(stores.folders, stores.links, 'folder');
  const webhooks = new WebhookService({
    webhooks: stores.webhooks,
    deliveries: stores.webhookDeliveries,
    box: new SecretBox(config.secretKey),
    targets: { allowPrivate: config.webhooks.allowPrivateTargets },
    secretGraceHours: config.webhooks.secretGraceHours,
    bus,
  });
  const customDomains = new DomainService({
    domains: stores.domains,
    kube: KubeDomains.fromConfig(config.domains),
    tls: config.tls.acme === null ? null : stores.domainTls,
    bus,
    defaultHostname: domains.default.hostname,
    // Our own hosts: none of them, nor a subdomain of them, can be connected by a customer.
    policy: {
      reserved: [config.defaultShortDomain, new URL(config.shortLinkBaseUrl).host, new URL(config.publicApiUrl).host, config.domains.cnameTarget ?? ''],
    },
    targets: config.domains,
  });
  const conversions = new ConversionService({
    client: mongo.client,
    conversions: stores.conversions,
    clicks: stores.clicks.clicks,
    workspaces: stores.workspaces,
    events: stores.events,
    clickIds: new ClickIds(config.secretKey),
    abFeedback: new AbFeedback({
      client: mongo.client,
      links: stores.links.collection,
      clicks: stores.clicks,
      conversions: stores.conversions,
      events: stores.events,
      workspaces: stores.workspaces,
      invalidate: (m) => bus.publish(m),
      onEvent: () => infra.outbox.nudge(),
    }),
    logger,
    clickWaitMs: config.conversions.clickWaitMs,
    onEvent: () => infra.outbox.nudge(),
    // Conversions counted in the analytics rollups, in the buckets of the click they are attributed to.
    counted: [new ConversionRollup(mongo.client, stores.rollups, stores.clicks.clicks).counted],
  });
  const reports = buildReportService(infra);
  if (config.webhooks.allowPrivateTargets) {
    logger.warn('WEBHOOK_ALLOW_PRIVATE_TARGETS is on: webhook endpoints may target loopback and private addresses (development only)');
  }

  // The api's queries keep the parts they read (the worker's alert figures read the latest quarter-hours, mostly new).
  // Without a budget, no cache at all: a read then fetches its parts in one query instead of their ids first.
  // An eighth of the budget keeps unique-visitor estimates worked out from those parts.
  const keeps = config.analytics.partCacheBytes;
  if (keeps > 0) stores.rollups.cacheParts(new PartCache(keeps - Math.floor(keeps / 8), metrics.registry));
  const clickStreams = new ClickStreams({ nats, logger });
  const analytics = new AnalyticsService({
    rollups: stores.rollups,
    edges: new EdgeClickStore(stores.clicks.clicks),
    links: stores.links.collection,
    defaultBaseUrl: config.shortLinkBaseUrl,
    memo: keeps > 0 ? new EstimateMemo(Math.floor(keeps / 8), metrics.registry) : undefined,
    geo: {
      country: config.redirect.geoip.cityDb !== null || config.redirect.geoip.openData || config.redirect.trustEdgeHeaders,
      location: config.redirect.geoip.cityDb !== null || config.redirect.trustEdgeHeaders,
      network: config.redirect.geoip.asnDb !== null || config.redirect.geoip.openData || config.redirect.trustEdgeHeaders,
    },
  });

  const routes: RouteSpec[] = [
    ...keyRoutes(),
    ...workspaceRoutes(workspaces),
    ...ipListRoutes(ipLists),
    ...linkRoutes(links, qrLogos),
    ...qrLogoRoutes(qrLogos),
    ...labelRoutes(tags, folders),
    ...domainRoutes(customDomains),
    ...eventRoutes(stores.events),
    ...webhookRoutes(webhooks, config.webhooks.secretGraceHours),
    ...webhookTestRoutes({ webhooks: stores.webhooks, nats }),
    ...conversionRoutes(conversions, config.conversions.clickWaitMs),
    ...partnerRoutes(partners),
    ...billingRoutes(billing, {
      trustedProxyHops: config.redirect.trustedProxyHops,
      refusedPerMinPerIp: config.partner.ingestRefusedPerMinPerIp,
      refusedPerMinPerPartner: config.partner.ingestRefusedPerMinPerPartner,
    }),
    ...reportRoutes(reports, { trustedProxyHops: config.redirect.trustedProxyHops, perMinute: config.reports.perMinute }),
    ...partnerDomainRoutes(customDomains, { partners: stores.partners, workspaces: stores.workspaces, defaultWorkspaceRatePerMinute: config.rateLimit.workspacePerMinute }),
    ...alertRoutes(new AlertService({ alerts: stores.alerts, links: stores.links }), config.alerts.evalIntervalMs),
    ...analyticsRoutes(analytics, { clicks: stores.clicks.clicks, slots: stores.exportSlots, logger }),
    ...clickStreamRoutes(clickStreams),
    ...partnerAnalyticsRoutes(analytics, { partners: stores.partners, workspaces: stores.workspaces, defaultWorkspaceRatePerMinute: config.rateLimit.workspacePerMinute }),
    ...importRoutes(new ImportService({ store: stores.imports, box: new SecretBox(config.secretKey, IMPORT_SEAL_PURPOSE) })),
  ];

  // The authorization server MCP hosts connect through: a token is bound to the tool server, or to the whole API.
  const issuer = config.publicApiUrl.replace(/\/+$/, '');
  const resources = { mcp: `${issuer}/v1${MCP_PATH}`, api: `${issuer}/v1` };
  const oauth = new OAuthService({
    store: stores.oauth,
    memberships: stores.memberships,
    workspaces: stores.workspaces,
    partners: stores.partners,
    users: stores.users,
    logger,
    resources,
    defaultRateLimits: config.rateLimit,
    scopeKinds: () => scopeKindsOf(routes),
  });
  const authorizationServer = buildAuthorizationServer(
    stores.oauth,
    { grantEnded: (grantId) => oauth.grantEnded(grantId), now: Date.now },
    {
      issuer,
      resources: [resources.mcp, resources.api],
      secretKey: config.secretKey,
      accessTokenTtlSeconds: config.oauth.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: config.oauth.refreshTokenTtlSeconds,
      behindProxy: config.redirect.trustedProxyHops > 0,
      accountExists: (userId) => oauth.accountExists(userId),
    },
  );
  oauth.attach(authorizationServer);
  const oauthAnswer = oauthEndpoints(authorizationServer, { issuer, resources, docsUrl: config.docsBaseUrl });
  routes.push(...authorizedAppRoutes(oauth));
  // The tool server's tools are the operations of the finished table, read on its first request.
  routes.push(...mcpRoutes(() => routes, { logger, version: '1.0.0', chargeMore: chargeMore(stores.rateLimiter) }));
  // The /auth routes published in the document as well (password reset: a front end of its own may offer it),
  // filled in below where the /auth table is built.
  const publishedAuthRoutes: RouteSpec[] = [];
  const documentedOutsideV1 = [{ prefix: '/auth', routes: publishedAuthRoutes }];
  // Built on the first request, from the finished table (itself included), so nothing listed here goes undocumented.
  routes.push(
    ...openApiRoutes(() =>
      buildOpenApi(routes, {
        serverUrl: config.publicApiUrl,
        version: '1.0.0',
        idempotencyTtlHours: config.idempotencyTtlHours,
        events: EVENT_PAYLOADS,
        outsideV1: documentedOutsideV1,
      }),
    ),
  );
  const v1 = new Router<ApiState>({ prefix: '/v1' });
  mount(v1, routes);
  memoizeMatches(v1);

  // The dashboard: its sessions (/auth, outside /v1; only the password reset routes are in the OpenAPI document) and
  // its files (/dashboard).
  const mailer = new Mailer(config.mail, config.publicApiUrl);
  const ownOrigin = new URL(config.publicApiUrl).origin;
  const auth = new AuthService({
    users: stores.users,
    sessions: stores.sessions,
    memberships: stores.memberships,
    links: stores.signInLinks,
    workspaces: stores.workspaces,
    partners: stores.partners,
    mailer,
    logger,
    settings: {
      idleTimeoutMs: config.dashboard.sessionIdleMs,
      absoluteTimeoutMs: config.dashboard.sessionAbsoluteMs,
      linkTtlMs: config.dashboard.signInLinkTtlMs,
      attempts: stores.signInAttempts,
      passwordResets: stores.passwordResets,
      passwordResetTtlMs: config.dashboard.passwordResetTtlMs,
      publicApiUrl: config.publicApiUrl,
      defaultRateLimits: config.rateLimit,
    },
    bus,
  });
  const sessionCache = new SessionCache({ ttlMs: config.keyCacheTtlMs, maxEntries: 10_000 });
  sessionCache.subscribe(bus);
  const members = new MemberService({
    users: stores.users,
    memberships: stores.memberships,
    invites: stores.invites,
    workspaces: stores.workspaces,
    partners: stores.partners,
    auth,
    mailer,
    logger,
    inviteTtlMs: config.dashboard.inviteTtlMs,
    publicApiUrl: config.publicApiUrl,
  });
  const cookie = cookiePolicyFor(config.publicApiUrl, config.dashboard.sessionAbsoluteMs);
  const trustedProxyHops = config.redirect.trustedProxyHops;
  const downloadTickets = new DownloadTickets(config.secretKey);
  const authRouter = new Router<ApiState>({ prefix: '/auth' });
  const sessionRoutes = authRoutes(auth, { cookie, trustedProxyHops, oidc: { enabled: config.dashboard.oidc !== null, name: config.dashboard.oidc?.name ?? '' } });
  publishedAuthRoutes.push(...sessionRoutes.filter((r) => PUBLISHED_AUTH_OPERATIONS.has(r.operationId)));
  mount(authRouter, [
    ...sessionRoutes,
    ...memberRoutes(members, { cookie, trustedProxyHops, ownOrigin }),
    ...downloadRoutes(downloadTickets, auth),
    ...consentRoutes(oauth),
    ...dashboardKeyRoutes(new KeyAdminService({ keys: stores.keys, keyService: keys, memberships: stores.memberships, bus, scopeKinds: () => scopeKindsOf(routes) })),
    ...(config.dashboard.oidc
      ? oidcRoutes({
          oidc: new OidcClient({ ...config.dashboard.oidc, redirectUri: `${config.publicApiUrl}/auth/oidc/callback`, secretKey: config.secretKey }),
          auth,
          members,
          users: stores.users,
          cookie,
          trustedProxyHops,
          publicApiUrl: config.publicApiUrl,
          logger,
        })
      : []),
  ]);
  const authRouting = [authDoor(auth, ownOrigin), authRouter.routes() as Middleware<ApiState>, fallback(authRouter)];
  const authReads = compose<ApiContext>(authRouting);
  const authMutations = compose<ApiContext>([jsonBody(config.bodyLimitBytes), ...authRouting]);
  const dashboard = dashboardStatic(config.dashboard.dir);

  // Layers are chosen per request instead of stacked: a GET never passes through the body parser or the
  // idempotency check, and operations endpoints never through authentication (each Koa layer costs every request).
  const routing = [v1.routes() as Middleware<ApiState>, fallback(v1)];
  const mcpMetadata = resourceMetadataUrl(issuer, resources.mcp);
  const apiMetadata = resourceMetadataUrl(issuer, resources.api);
  const door = challengeOnUnauthorized(
    gate(keys, stores.rateLimiter, sessionPrincipal(auth, ownOrigin, sessionCache), (ctx, token) => oauth.principalFor(token, ctx.path)),
    (ctx) => (ctx.path === `/v1${MCP_PATH}` ? mcpMetadata : apiMetadata),
  );
  const reads = compose<ApiContext>([door, ...routing]);
  const mutations = compose<ApiContext>([
    door,
    refuseInactiveWrites,
    jsonBody(config.bodyLimitBytes),
    idempotency({ store: stores.idempotency, docsBaseUrl: config.docsBaseUrl }),
    ...routing,
  ]);
  const unauthenticated = compose<ApiContext>(routing);
  const download = followDownload(downloadTickets, auth, reads);
  // Processor events (no key: the signature is the credential, the raw body kept for its verification), and the
  // public filing of abuse reports: a parsed body, but no key and no idempotency.
  const ingestion = compose<ApiContext>([jsonBody(config.bodyLimitBytes), ...routing]);
  const ops = opsEndpoints(metrics.registry, async () => ({ mongodb: await mongo.ping() }), { errorDocs: true });
  const outsideV1 = (ctx: ApiContext): Promise<void> => {
    if (ctx.method === 'GET' && ctx.path.startsWith(`${DOWNLOADS_PATH}/`)) return download(ctx);
    if (ctx.path === '/auth' || ctx.path.startsWith('/auth/')) return READ_METHODS.has(ctx.method) ? authReads(ctx) : authMutations(ctx);
    if (ctx.path === '/dashboard' || ctx.path.startsWith('/dashboard/')) return dashboard(ctx);
    const answered = oauthAnswer(ctx);
    if (answered) return answered;
    if (ctx.path === '/' && READ_METHODS.has(ctx.method)) {
      ctx.redirect('/dashboard/');
      return Promise.resolve();
    }
    throw new NotFoundError('route');
  };

  const app = new Koa<ApiState>();
  app.silent = true;
  const inFlight = new InFlight();
  // A request refused before routing is still labelled by the route template its path matches, never its raw path.
  const routeOf = (ctx: ApiContext) => {
    const match = v1.match(ctx.path, ctx.method);
    const template = (match.pathAndMethod[0] ?? match.path[0])?.path;
    return typeof template === 'string' ? template : undefined;
  };
  app.use(observe(infra.access, metrics, errorEnvelope(logger, config.docsBaseUrl), inFlight, routeOf));
  app.use((ctx: ApiContext) => {
    if (ctx.path !== '/v1' && !ctx.path.startsWith('/v1/')) return ops(ctx, () => outsideV1(ctx));
    if (PUBLIC_PATHS.has(ctx.path)) return READ_METHODS.has(ctx.method) ? unauthenticated(ctx) : ingestion(ctx);
    if (ctx.path.startsWith(BILLING_INGEST_PREFIX) && ctx.method === 'POST') return ingestion(ctx);
    // Every /v1 answer from here on carries the key's rate-limit headers, a 404 or a 405 included.
    return READ_METHODS.has(ctx.method) ? reads(ctx) : mutations(ctx);
  });

  let server: HttpServer | null = null;
  return {
    name: 'api',
    app,
    keys,
    auth,
    routes,
    outsideV1: documentedOutsideV1,
    port: () => server?.port ?? config.apiPort,
    async start() {
      server = await listen(app.callback(), config.apiPort, config.host, inFlight, {
        requestTimeoutMs: config.requestTimeoutMs,
        transportError: (status, requestId) => {
          // Refused before any middleware ran: the envelope, with the request id, without rate-limit headers (no key was read).
          logger.info({ req_id: requestId, status }, 'request refused by the HTTP parser');
          return { contentType: 'application/json; charset=utf-8', body: JSON.stringify(transportErrorBody(status, config.docsBaseUrl)) };
        },
      });
      logger.info({ port: server.port, nats: nats.isConnected() }, `api listening on http://${config.host}:${server.port}/v1`);
    },
    async stop() {
      // Open click streams never end by themselves: ended first, their clients reconnect elsewhere with Last-Event-ID.
      clickStreams.closeAll();
      await server?.close(config.shutdownTimeoutMs);
      await stores.rateLimiter.close();
      mailer.close();
    },
  };
}
