import type { Db, MongoClient } from 'mongodb';
import { inTransaction } from '../platform/mongo.ts';
import { newId } from '../platform/ids.ts';
import { NotFoundError, RateLimitedError } from '../platform/errors.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { RateLimiter } from '../platform/rate-limiter.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { EventStore } from '../events/event.store.ts';
import type { LinkDoc, LinkModeration, LinkStore } from '../links/link.store.ts';
import type { LinkEventData } from '../links/link.schemas.ts';
import { DEFAULT_DOMAIN_ID } from '../links/domains.ts';
import { decodeTimePosition, pageOf, timePosition, type Pagination } from '../http/cursor.ts';
import type { ReportDoc, ReportStore } from './report.store.ts';
import type { Report, ReportFile, ReportListQuery, ReportReason, ReportResolve } from './report.schemas.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

export interface ReportServiceDeps {
  client: MongoClient;
  db: Db;
  reports: ReportStore;
  links: LinkStore;
  events: EventStore;
  /** Null in processes without NATS; the cache broadcast then waits for the redirect cache TTL. */
  bus: CacheBus | null;
  rateLimiter: RateLimiter;
  /** Reports one address may file per minute (form and API together). */
  perMinute: number;
  /** The default short domain's host (with port when it has one). */
  defaultHost: string;
  shortLinkBaseUrl: string;
  onEvent?: () => void;
  now?: () => Date;
}

export interface NewReport {
  reason: ReportReason;
  details?: string | undefined;
  reporter_contact?: string | undefined;
}

export class ReportService {
  private readonly d: ReportServiceDeps;
  private readonly now: () => Date;
  constructor(deps: ReportServiceDeps) {
    this.d = deps;
    this.now = deps.now ?? (() => new Date());
  }

  /** Counts a filing against the reporter's address; 429 `rate_limited` beyond the limit. */
  async admit(reporter: string): Promise<void> {
    const decision = await this.d.rateLimiter.check(`report:${reporter}`, this.d.perMinute);
    if (!decision.allowed) throw new RateLimitedError(Math.max(1, decision.retryAfter));
  }

  /** The public filing endpoint: the reported short URL is looked up; an unknown one is 404. */
  async fileByUrl(input: ReportFile, reporter: string): Promise<ReportDoc> {
    await this.admit(reporter);
    const link = await this.linkOf(input.short_url);
    if (!link) throw new NotFoundError('short link');
    return this.file(link, input, 'api');
  }

  /** Records a report about `link` (the form on the redirect domain has the link in hand already). */
  async file(link: LinkDoc, input: NewReport, source: 'form' | 'api'): Promise<ReportDoc> {
    const now = this.now();
    const doc: ReportDoc = {
      _id: newId('rpt'),
      workspace_id: link.workspace_id,
      link_id: link._id,
      short_url: this.shortUrlOf(link),
      destination: link.url,
      reason: input.reason,
      details: input.details?.trim() ? input.details.trim() : null,
      reporter_contact: input.reporter_contact ?? null,
      source,
      status: 'open',
      resolution: null,
      created_at: now,
      updated_at: now,
    };
    await this.d.reports.insert(doc);
    return doc;
  }

  async get(principal: WorkspacePrincipal, id: string): Promise<Report> {
    return reportView(await this.find(principal, id));
  }

  async list(principal: WorkspacePrincipal, query: ReportListQuery): Promise<{ data: Report[]; pagination: Pagination }> {
    const rows = await this.d.reports.page({
      workspaceId: principal.workspace._id,
      after: decodeTimePosition(query.cursor),
      limit: query.limit + 1,
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.link_id !== undefined ? { linkId: query.link_id } : {}),
    });
    const { page, pagination } = pageOf(rows, query.limit, timePosition);
    return { data: page.map(reportView), pagination };
  }

  /**
   * Resolves (or re-resolves) a report. `warn` and `disable` put the link under moderation; `dismiss` lifts the
   * moderation this report had set (another report's stays). The report, the link and `link.updated` commit
   * together; every redirect pod then drops the link.
   */
  async resolve(principal: WorkspacePrincipal, id: string, body: ReportResolve): Promise<Report> {
    const report = await this.find(principal, id);
    const workspaceId = principal.workspace._id;
    const now = this.now();
    const link = await this.d.links.findById(workspaceId, report.link_id);
    const moderation = link ? nextModeration(link.moderation ?? null, report, body.action, now) : undefined;
    const resolved = await inTransaction(this.d.client, async (session) => {
      const updated = await this.d.reports.resolve(workspaceId, id, { action: body.action, note: body.note ?? null, resolved_at: now }, session);
      if (!updated) throw new NotFoundError('report');
      if (link && moderation !== undefined) {
        await this.d.links.collection.updateOne({ _id: link._id, workspace_id: workspaceId }, { $set: { moderation, updated_at: now } }, { session });
        await this.d.events.append(
          {
            type: 'link.updated',
            workspaceId,
            partnerId: principal.workspace.partner_id,
            data: { id: link._id, domain: link.domain, slug: link.slug, url: link.url, changed: ['moderation'], moderation: moderationView(moderation), report_id: id } satisfies LinkEventData,
          },
          session,
          now,
        );
      }
      return updated;
    });
    if (link && moderation !== undefined) {
      this.d.onEvent?.();
      await this.d.bus?.publish({ kind: 'link', id: link._id, keys: [`${link.domain}/${link.slug}`] });
    }
    return reportView(resolved);
  }

  private async find(principal: WorkspacePrincipal, id: string): Promise<ReportDoc> {
    const doc = await this.d.reports.findById(principal.workspace._id, id);
    if (!doc) throw new NotFoundError('report');
    return doc;
  }

  /** The link behind a short URL on any of our domains, or null. */
  private async linkOf(shortUrl: string): Promise<LinkDoc | null> {
    const url = new URL(shortUrl);
    let slug: string;
    try {
      slug = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, '').replace(/\/report$/, ''));
    } catch {
      return null; // a malformed percent-encoding names no link
    }
    if (slug === '' || slug.includes('/')) return null;
    const host = url.host.toLowerCase();
    const bare = url.hostname.toLowerCase();
    let domainId: string | null;
    if (host === this.d.defaultHost || bare === this.d.defaultHost) domainId = DEFAULT_DOMAIN_ID;
    else {
      const domain = await this.d.db.collection<{ _id: string }>('domains').findOne({ hostname: bare, status: 'active' }, { projection: { _id: 1 } });
      domainId = domain?._id ?? null;
    }
    return domainId === null ? null : this.d.links.findBySlug(domainId, slug);
  }

  shortUrlOf(link: LinkDoc): string {
    return link.domain_id === DEFAULT_DOMAIN_ID ? `${this.d.shortLinkBaseUrl}/${link.slug}` : `https://${link.domain}/${link.slug}`;
  }
}

/** The link's moderation after resolving `report` with `action`; undefined when it does not change. */
function nextModeration(current: LinkModeration | null, report: ReportDoc, action: ReportResolve['action'], now: Date): LinkModeration | null | undefined {
  if (action === 'dismiss') return current !== null && current.report_id === report._id ? null : undefined;
  const state = action === 'warn' ? 'warned' : 'disabled';
  if (current !== null && current.state === state && current.report_id === report._id) return undefined;
  return { state, reason: report.reason, report_id: report._id, at: now };
}

function moderationView(m: LinkModeration | null): Record<string, unknown> | null {
  return m === null ? null : { state: m.state, reason: m.reason, report_id: m.report_id, at: m.at.toISOString() };
}

export function reportView(doc: ReportDoc): Report {
  return {
    id: doc._id,
    link_id: doc.link_id,
    short_url: doc.short_url,
    destination: doc.destination,
    reason: doc.reason,
    details: doc.details,
    reporter_contact: doc.reporter_contact,
    source: doc.source,
    status: doc.status,
    resolution: doc.resolution === null ? null : { action: doc.resolution.action, note: doc.resolution.note, resolved_at: doc.resolution.resolved_at.toISOString() },
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}
