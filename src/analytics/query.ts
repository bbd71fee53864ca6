// Resolving an analytics request: the range (interval presets or start/end) in the time zone, the plan's retention,
// and the filters, split into link filters (answered by reading the chosen links' link-level rollups) and one visitor
// dimension filter (answered from that dimension's cells).
import type { Collection } from 'mongodb';
import { AppError, ValidationError } from '../platform/errors.ts';
import { DEVICES, OPERATING_SYSTEMS } from '../platform/schema.ts';
import { VISITOR_TYPES } from '../visitor/visitor-profile.ts';
import type { LinkDoc } from '../links/link.store.ts';
import type { Plan } from '../tenancy/plans.ts';
import { FILTER_PARAMS, type AnalyticsQuery, type BotsMode, type Interval } from './analytics.schemas.ts';
import { VISITOR_FILTERS, cellKey, type VisitorFilter } from './dimensions.ts';
import { DAY_MS, QUARTER_MS, canonicalZone, isoInZone, localParts, zonedTime } from './time.ts';

export class RetentionExceededError extends AppError {
  constructor(planId: string, days: number) {
    super('plan_restricted', `The "${planId}" plan keeps analytics for ${days} days; the range starts earlier.`);
  }
}

export interface Resolved {
  workspaceId: string;
  /** The workspaces read: [workspaceId], or a partner's chosen clients. */
  workspaces: readonly string[];
  zone: string;
  start: number;
  end: number;
  interval: Interval | null;
  bots: BotsMode;
  /** null: no link filter; else the links the clicks must belong to. */
  links: string[] | null;
  /** A filter on one visitor dimension: its name and the cell keys of its values. */
  visitor: { dim: VisitorFilter; keys: Set<string>; values: Set<string> } | null;
}

export function rangeView(r: Resolved) {
  return { start: isoInZone(r.start, r.zone), end: isoInZone(r.end, r.zone), timezone: r.zone, interval: r.interval };
}

const fail = (path: string, message: string): never => {
  throw new ValidationError([{ path, message }]);
};

function values(raw: string): string[] {
  return [...new Set(raw.split(',').map((v) => v.trim()))].filter((v) => v.length > 0);
}

const ENUMS: Partial<Record<VisitorFilter, readonly string[]>> = { device: DEVICES, os: OPERATING_SYSTEMS, visitor_type: VISITOR_TYPES };

function visitorValues(dim: VisitorFilter, raw: string): string[] {
  const list = values(raw);
  if (list.length === 0) fail(dim, 'must hold at least one value');
  for (const v of list) {
    if (v.length > 512) fail(dim, 'values are at most 512 characters');
    if (dim === 'country' && !/^[A-Z]{2}$/.test(v)) fail(dim, `"${v}" is not an ISO 3166-1 alpha-2 code (two uppercase letters)`);
    const allowed = ENUMS[dim];
    if (allowed && !allowed.includes(v)) fail(dim, `"${v}" is not one of ${allowed.join(', ')}`);
  }
  return dim === 'referer' ? list.map((v) => v.toLowerCase().replace(/^www\./, '')) : list;
}

const floorQuarter = (ms: number) => Math.floor(ms / QUARTER_MS) * QUARTER_MS;
const ceilQuarter = (ms: number) => Math.ceil(ms / QUARTER_MS) * QUARTER_MS;

export interface ResolveContext {
  workspaceId: string;
  /** Read across these workspaces instead of workspaceId alone (a partner's clients). */
  workspaceIds?: readonly string[];
  workspaceZone: string | null | undefined;
  plan: Plan;
  links: Collection<LinkDoc>;
  firstBucket: () => Promise<Date | null>;
  now?: number;
}

export async function resolve(query: AnalyticsQuery, ctx: ResolveContext): Promise<Resolved> {
  const zoneName = query.timezone ?? ctx.workspaceZone ?? 'UTC';
  const zone = canonicalZone(zoneName);
  if (zone === null) return fail('timezone', `"${zoneName}" is not an IANA time zone name`);
  const now = ctx.now ?? Date.now();

  let start: number;
  let end: number;
  let interval: Interval | null = null;
  if (query.start !== undefined || query.end !== undefined) {
    if (query.interval !== undefined) fail('interval', 'give either `interval` or `start` and `end`, not both');
    const from = query.start;
    const to = query.end;
    if (from === undefined) return fail('start', 'is required with `end`');
    if (to === undefined) return fail('end', 'is required with `start`');
    start = floorQuarter(Date.parse(from));
    end = ceilQuarter(Date.parse(to));
    if (!Number.isFinite(start)) fail('start', 'is not a date-time');
    if (!Number.isFinite(end)) fail('end', 'is not a date-time');
    if (end <= start) fail('end', 'must be after start');
  } else {
    interval = query.interval ?? '30d';
    const today = localParts(now, zone);
    const tomorrow = zonedTime(zone, today.year, today.month, today.day + 1);
    switch (interval) {
      case '24h':
        end = ceilQuarter(now);
        start = end - DAY_MS;
        break;
      case '7d':
      case '30d':
      case '90d':
        end = tomorrow;
        start = zonedTime(zone, today.year, today.month, today.day - (Number.parseInt(interval, 10) - 1));
        break;
      case '12mo':
        end = zonedTime(zone, today.year, today.month + 1, 1);
        start = zonedTime(zone, today.year, today.month - 11, 1);
        break;
      case 'all': {
        end = tomorrow;
        const earliest = now - ctx.plan.retention.analytics_days * DAY_MS;
        const first = (await ctx.firstBucket())?.getTime() ?? now;
        const from = localParts(Math.max(first, earliest), zone);
        start = zonedTime(zone, from.year, from.month, from.day);
        if (start < earliest) start = zonedTime(zone, from.year, from.month, from.day + 1);
        if (start >= end) start = zonedTime(zone, today.year, today.month, today.day);
        break;
      }
    }
  }
  // One day of slack: a preset starts at a local midnight, up to a day before "N days ago".
  if (start < now - (ctx.plan.retention.analytics_days + 1) * DAY_MS) throw new RetentionExceededError(ctx.plan.id, ctx.plan.retention.analytics_days);

  // Visitor filters: one dimension per request.
  let visitor: Resolved['visitor'] = null;
  for (const dim of VISITOR_FILTERS) {
    const raw = query[dim];
    if (raw === undefined) continue;
    if (visitor) fail(dim, `filters on two visitor dimensions (${visitor.dim} and ${dim}) cannot be combined; filter on one`);
    const list = visitorValues(dim, raw);
    visitor = { dim, values: new Set(list), keys: new Set(list.map(cellKey)) };
  }

  return { workspaceId: ctx.workspaceId, workspaces: ctx.workspaceIds ?? [ctx.workspaceId], zone, start, end, interval, bots: query.bots ?? 'exclude', links: await linkFilter(query, ctx), visitor };
}

async function linkFilter(query: AnalyticsQuery, ctx: ResolveContext): Promise<string[] | null> {
  const ids = query.link_id === undefined ? null : values(query.link_id);
  const byLink: Record<string, unknown> = {};
  if (query.domain_id !== undefined) byLink.domain_id = { $in: values(query.domain_id) };
  if (query.tag !== undefined) byLink.tag_ids = { $in: values(query.tag) };
  if (query.folder_id !== undefined) byLink.folder_id = { $in: values(query.folder_id) };
  if (Object.keys(byLink).length === 0) return ids;
  if (ids) byLink._id = { $in: ids };
  const docs = await ctx.links.find({ workspace_id: ctx.workspaceIds ? { $in: [...ctx.workspaceIds] } : ctx.workspaceId, ...byLink }, { projection: { _id: 1 } }).toArray();
  return docs.map((d) => d._id);
}

/** Names of every filter parameter (for the export and the OpenAPI description). */
export const FILTER_NAMES = Object.keys(FILTER_PARAMS);
