// Aggregated analytics of a partner across its client workspaces: the workspace analytics' query service reading the
// same rollups over the set of client workspaces (cells summed, unique-visitor sketches merged), plus a breakdown by
// client. The partner's platform plan sets the retention.
import { Type } from '@sinclair/typebox';
import { route, type RouteSpec } from '../http/route-table.ts';
import type { ApiContext } from '../http/context.ts';
import { NotFoundError } from '../platform/errors.ts';
import { StringEnum, Integer } from '../platform/schema.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import type { AnalyticsScope, AnalyticsService } from '../analytics/analytics.service.ts';
import { DIMENSIONS } from '../analytics/dimensions.ts';
import {
  ERROR_BOUNDS,
  GRANULARITIES,
  MAX_BUCKETS,
  MAX_FILTER_VALUES,
  SummarySchema,
  TimeseriesSchema,
  analyticsQuery,
  breakdownSchema,
} from '../analytics/analytics.schemas.ts';
import type { PartnerStore } from '../tenancy/partner.store.ts';
import { platformPlanOf } from './partner.service.ts';
import { partnerIdOf } from './partner.routes.ts';

const read = { kind: 'partner', scope: 'analytics:read' } as const;
const TAG = 'Partner';
const ERRORS = ['plan_restricted'];

const PARTNER_PARAMS = {
  client_id: Type.Optional(Type.String({
    minLength: 1,
    maxLength: MAX_FILTER_VALUES * 64,
    pattern: `^[^,]+(?:,[^,]+){0,${MAX_FILTER_VALUES - 1}}$`,
    description:
      `Client workspace ids: only these clients' clicks. Up to ${MAX_FILTER_VALUES} comma-separated ids. An id that is not one of ` +
      "the partner's clients (another partner's, or none) matches nothing, like an unknown link id: it is never an error.",
  })),
  timezone: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'IANA time zone the range, the buckets and the answer\'s timestamps are in (e.g. `America/New_York`); default UTC.',
  })),
};

const BREAKDOWN_DIMENSIONS = ['client', ...DIMENSIONS] as const;
type PartnerDimension = (typeof BREAKDOWN_DIMENSIONS)[number];

const SummaryQuerySchema = analyticsQuery(PARTNER_PARAMS);
const TimeseriesQuerySchema = analyticsQuery({
  ...PARTNER_PARAMS,
  granularity: Type.Optional(StringEnum(GRANULARITIES, {
    description: `Bucket size (weeks are ISO weeks starting Monday). Default: \`hour\` up to 2 days, \`day\` up to 92 days, else \`month\`. At most ${MAX_BUCKETS} buckets.`,
  })),
});
const BreakdownQuerySchema = analyticsQuery({
  ...PARTNER_PARAMS,
  dimension: StringEnum(BREAKDOWN_DIMENSIONS, { description: '`client`: one row per client workspace (its id as `value`); else a dimension as in GET /analytics/breakdown, across the clients.' }),
  limit: Type.Optional(Integer(1, 1000, { default: 100, description: 'Rows returned, most clicks first.' })),
});
const PartnerBreakdownSchema = breakdownSchema(BREAKDOWN_DIMENSIONS);

const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
const COMMON =
  "The partner's clients' traffic, answered from the same rollups as GET /analytics/* with the same parameters (range or " +
  '`interval`, `timezone`, `bots`, link and visitor filters, one visitor dimension per request), read across every client ' +
  'workspace of the partner, suspended and canceled ones included, or across the clients named by `client_id`. Other ' +
  "partners' workspaces never count. Unique visitors merge the clients' HyperLogLog sketches, so a visitor of two clients " +
  `counts once (relative standard error ${pct(ERROR_BOUNDS.totals)} for totals, ${pct(ERROR_BOUNDS.values)} per value). ` +
  "The analytics retention is the partner's platform plan's: a range starting earlier answers 403 `plan_restricted`. " +
  'Needs a partner key with `analytics:read`; a workspace key answers 403 `forbidden`.';

export interface PartnerAnalyticsOptions {
  partners: PartnerStore;
  workspaces: WorkspaceStore;
  defaultWorkspaceRatePerMinute: number;
}

function ids(raw: string | undefined): string[] | null {
  if (raw === undefined) return null;
  return [...new Set(raw.split(',').map((v) => v.trim()))].filter((v) => v.length > 0);
}

export function partnerAnalyticsRoutes(service: AnalyticsService, o: PartnerAnalyticsOptions): RouteSpec[] {
  async function scopeOf(ctx: ApiContext, clientIds: string | undefined): Promise<AnalyticsScope> {
    const partnerId = partnerIdOf(ctx);
    const partner = await o.partners.findById(partnerId);
    if (!partner) throw new NotFoundError('partner');
    const chosen = ids(clientIds);
    const clients = await o.workspaces.collection
      .find({ partner_id: partnerId, ...(chosen ? { _id: { $in: chosen } } : {}) }, { projection: { _id: 1 } })
      .toArray();
    return { workspaceId: partnerId, workspaceIds: clients.map((c) => c._id), workspaceZone: null, plan: platformPlanOf(partner, o.defaultWorkspaceRatePerMinute) };
  }

  return [
    route({
      method: 'GET',
      path: '/partner/analytics/summary',
      operationId: 'getPartnerAnalyticsSummary',
      tag: TAG,
      summary: "Clicks, human and bot clicks, unique visitors, conversions and revenue per currency across the partner's clients, with the previous period",
      description: COMMON,
      auth: read,
      query: SummaryQuerySchema,
      errors: ERRORS,
      responses: [{ status: 200, description: 'The figures of the range and of the period before', schema: SummarySchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await service.summary(await scopeOf(ctx, query.client_id), query);
      },
    }),
    route({
      method: 'GET',
      path: '/partner/analytics/timeseries',
      operationId: 'getPartnerAnalyticsTimeseries',
      tag: TAG,
      summary: "Clicks and unique visitors across the partner's clients per hour, day, ISO week or month, zero-filled, in the requested time zone",
      description: `${COMMON} Buckets follow the zone's calendar (a DST day lasts 23 or 25 hours); more than ${MAX_BUCKETS} buckets answer 422 naming \`granularity\`.`,
      auth: read,
      query: TimeseriesQuerySchema,
      errors: ERRORS,
      responses: [{ status: 200, description: 'One entry per bucket, oldest first', schema: TimeseriesSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await service.timeseries(await scopeOf(ctx, query.client_id), query);
      },
    }),
    route({
      method: 'GET',
      path: '/partner/analytics/breakdown',
      operationId: 'getPartnerAnalyticsBreakdown',
      tag: TAG,
      summary: "Clicks, unique visitors and share per client, or per value of a dimension across the partner's clients",
      description:
        `${COMMON} \`dimension=client\` gives one row per client workspace with clicks in the range (\`value\`: the client's id, ` +
        'as in GET /partner/clients/{id}); it combines with any visitor filter. Other dimensions answer as GET /analytics/breakdown does.',
      auth: read,
      query: BreakdownQuerySchema,
      errors: ERRORS,
      responses: [{ status: 200, description: 'The rows, most clicks first', schema: PartnerBreakdownSchema }],
      handler: async (ctx, { query }) => {
        const scope = await scopeOf(ctx, query.client_id);
        const asked: PartnerDimension = query.dimension;
        if (asked === 'client') {
          const answer = await service.breakdown(scope, { ...query, dimension: 'workspace' as const });
          ctx.body = { ...answer, dimension: 'client' };
        } else {
          ctx.body = await service.breakdown(scope, { ...query, dimension: asked });
        }
      },
    }),
  ];
}
