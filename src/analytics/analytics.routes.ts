import { Type } from '@sinclair/typebox';
import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import type { ApiContext } from '../http/context.ts';
import { PlanRestrictedError } from '../platform/errors.ts';
import type { AnalyticsScope, AnalyticsService } from './analytics.service.ts';
import { exportClicks, EXPORT_COLUMNS, type ExportOptions } from './export.ts';
import {
  BreakdownQuerySchema,
  BreakdownSchema,
  ERROR_BOUNDS,
  ExportQuerySchema,
  SummaryQuerySchema,
  SummarySchema,
  TimeseriesQuerySchema,
  TimeseriesSchema,
  TopLinksQuerySchema,
  TopLinksSchema,
} from './analytics.schemas.ts';

const read = { kind: 'workspace', scope: 'analytics:read' } as const;
const CsvSchema = Type.String({ description: 'RFC 4180 CSV: a header row, then one row per click' });
const TAG = 'Analytics';
const ERRORS = ['plan_restricted'];

const pct = (x: number) => `${(x * 100).toFixed(2)} %`;

const COMMON =
  'Answered from rollups (per UTC quarter-hour, hour and day), never from raw clicks. The range is cut into the largest ' +
  'rollup buckets it wholly contains, so every zone (offsets of 30 or 45 minutes included) is answered exactly. ' +
  'One exception: a link\'s figures per dimension value (a link filter with a breakdown or a visitor filter) are rolled up ' +
  'per UTC day, and the partial UTC days at the edges of the range are counted from the raw clicks, which are kept for the ' +
  'plan\'s raw click retention. ' +
  'Filters: link filters (`link_id`, `domain_id`, `tag`, `folder_id`) combine with everything; one visitor dimension may be ' +
  'filtered per request (`country`, `device`, `os`, `browser`, `referer`, `visitor_type`, `utm_*`; a second one answers 422), ' +
  `and it combines with summary, time series, top links and breakdowns by that same dimension or by link. ` +
  `Unique visitors are HyperLogLog estimates: relative standard error ${pct(ERROR_BOUNDS.totals)} for totals, ` +
  `${pct(ERROR_BOUNDS.values)} per dimension value (and for totals under a visitor filter). ` +
  'A range starting before the plan\'s analytics retention answers 403 `plan_restricted`. A partner key answers 403 `forbidden`.';

function scopeOf(ctx: ApiContext): AnalyticsScope {
  const p = workspaceOf(ctx);
  return { workspaceId: p.workspace._id, workspaceZone: p.workspace.timezone ?? null, plan: p.plan };
}

export function analyticsRoutes(service: AnalyticsService, exports: ExportOptions): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/analytics/summary',
      operationId: 'getAnalyticsSummary',
      tag: TAG,
      summary: 'Clicks, human and bot clicks, unique visitors, conversions and revenue per currency of a range, with the previous period of equal length',
      description: COMMON,
      auth: read,
      query: SummaryQuerySchema,
      errors: ERRORS,
      responses: [{ status: 200, description: 'The figures of the range and of the period before', schema: SummarySchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await service.summary(scopeOf(ctx), query);
      },
    }),
    route({
      method: 'GET',
      path: '/analytics/timeseries',
      operationId: 'getAnalyticsTimeseries',
      tag: TAG,
      summary: 'Clicks and unique visitors per hour, day, ISO week or month, zero-filled, in the requested time zone',
      description:
        `${COMMON} Buckets follow the zone's calendar: a day bucket on a DST change lasts 23 or 25 hours (its \`hours\` says so). ` +
        'The first and last buckets are cut by the range. More than 1,000 buckets answer 422 naming `granularity`.',
      auth: read,
      query: TimeseriesQuerySchema,
      errors: ERRORS,
      responses: [{ status: 200, description: 'One entry per bucket, oldest first', schema: TimeseriesSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await service.timeseries(scopeOf(ctx), query);
      },
    }),
    route({
      method: 'GET',
      path: '/analytics/breakdown',
      operationId: 'getAnalyticsBreakdown',
      tag: TAG,
      summary: 'Clicks, unique visitors and share per value of a dimension, most clicks first',
      description: `${COMMON} \`referer\` is the referring host (without \`www.\`), \`referer_url\` the full URL; \`asn\` and \`ab_variant\` values are numbers as text; a null value groups the clicks without one.`,
      auth: read,
      query: BreakdownQuerySchema,
      errors: ERRORS,
      responses: [{ status: 200, description: 'The rows, most clicks first', schema: BreakdownSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await service.breakdown(scopeOf(ctx), query);
      },
    }),
    route({
      method: 'GET',
      path: '/analytics/links/top',
      operationId: 'getAnalyticsTopLinks',
      tag: TAG,
      summary: 'Top links by clicks or by unique visitors, with their short URL and destination',
      description: COMMON,
      auth: read,
      query: TopLinksQuerySchema,
      errors: ERRORS,
      responses: [{ status: 200, description: 'The links, best first', schema: TopLinksSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await service.topLinks(scopeOf(ctx), query);
      },
    }),
    route({
      method: 'GET',
      path: '/analytics/export.csv',
      operationId: 'exportAnalyticsCsv',
      tag: TAG,
      summary: 'The raw clicks of a range as CSV, streamed',
      description:
        'RFC 4180 CSV (`text/csv`, chunked), a header row then one row per click, oldest first, with the same range and filters as ' +
        `the other analytics endpoints. Columns: ${EXPORT_COLUMNS.map((c) => `\`${c}\``).join(', ')}. \`ip\` is only what was stored ` +
        '(a truncated address or a keyed hash, per the deployment\'s IP_STORAGE; empty when none): never the address. `conversions` is the ' +
        'number of conversions attributed to the click; `revenue` their amounts per currency, `EUR 1250;USD 300` (ISO 4217 code and ' +
        'integer minor units, `;`-separated in code order; empty when none). Cells starting ' +
        'with `=`, `+`, `-`, `@`, a tab or a carriage return are prefixed with `\'` so a spreadsheet shows them as text. Raw clicks are ' +
        'kept for the plan\'s raw click retention. At most two exports of a workspace run at once: a third answers 429 `rate_limited` ' +
        'with Retry-After. Needs the `analytics_export` plan capability.',
      auth: read,
      query: ExportQuerySchema,
      errors: ['plan_restricted', 'rate_limited'],
      responses: [{ status: 200, description: 'The clicks as CSV', contentType: 'text/csv', schema: CsvSchema }],
      handler: async (ctx, { query }) => {
        const scope = scopeOf(ctx);
        if (!scope.plan.capabilities.includes('analytics_export')) throw new PlanRestrictedError('analytics_export', scope.plan.id);
        const resolved = await service.resolve(scope, query);
        const stream = await exportClicks(exports, resolved);
        ctx.status = 200;
        ctx.type = 'text/csv; charset=utf-8';
        ctx.set('Content-Disposition', `attachment; filename="clicks-${resolved.workspaceId}.csv"`);
        ctx.set('Cache-Control', 'no-store');
        ctx.body = stream;
      },
    }),
  ];
}
