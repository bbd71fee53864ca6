import type { Infra } from './infra.ts';
import { ReportService } from '../reports/report.service.ts';

/**
 * The abuse-report service as every process builds it: the api (filing through the API, review) and the redirect
 * (the public form on short domains) share one configuration, so the two doors cannot drift apart.
 */
export function buildReportService(infra: Infra): ReportService {
  const { config, mongo, stores, bus } = infra;
  return new ReportService({
    client: mongo.client,
    db: mongo.db,
    reports: stores.reports,
    links: stores.links,
    events: stores.events,
    bus,
    rateLimiter: stores.rateLimiter,
    perMinute: config.reports.perMinute,
    defaultHost: config.defaultShortDomain.toLowerCase(),
    shortLinkBaseUrl: config.shortLinkBaseUrl,
    onEvent: () => infra.outbox.nudge(),
  });
}
