import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import type { ConversionService } from './conversion.service.ts';
import { ConversionCreateSchema, ConversionListQuerySchema, ConversionListSchema, ConversionSchema, MAX_METADATA_KEYS } from './conversion.schemas.ts';

const read = { kind: 'workspace', scope: 'conversions:read' } as const;
const write = { kind: 'workspace', scope: 'conversions:write' } as const;

export function conversionRoutes(conversions: ConversionService, clickWaitMs: number): RouteSpec[] {
  return [
    route({
      method: 'POST',
      path: '/conversions',
      operationId: 'createConversion',
      tag: 'Conversions',
      summary: 'Record a conversion (order, signup or custom goal) attributed to a click',
      description:
        'Send the `lp_click_id` your destination received (the workspace needs `conversion_tracking` on). The id is signed: a forged or ' +
        'altered id, or one issued by another workspace, is 422 `invalid_click_id`; a click older than the workspace\'s ' +
        '`attribution_window_days` at `occurred_at` is 422 `attribution_expired`. `order` needs `amount` (integer minor units) and ' +
        '`currency`; `custom` needs `goal`; `metadata` holds at most ' +
        `${MAX_METADATA_KEYS} scalar values. The same \`external_id\` again answers the first conversion with 200 and records nothing. ` +
        `A click posted within moments of the visit may not be recorded yet: it is waited for up to ${clickWaitMs} ms, then the answer is ` +
        '504 `internal` with Retry-After (retry with the same external_id or Idempotency-Key). Emits `conversion.created`; a conversion ' +
        'of an A/B variant updates the link\'s `ab_test.auto.samples` and may declare the winner.',
      auth: write,
      body: ConversionCreateSchema,
      errors: ['invalid_click_id', 'attribution_expired', 'plan_restricted'],
      responses: [
        { status: 201, description: 'The conversion, recorded now', schema: ConversionSchema },
        { status: 200, description: 'The conversion recorded earlier with this external_id', schema: ConversionSchema },
      ],
      handler: async (ctx, { body }) => {
        const { conversion, created } = await conversions.create(workspaceOf(ctx), body);
        ctx.status = created ? 201 : 200;
        ctx.set('Location', `/v1/conversions/${conversion.id}`);
        ctx.body = conversion;
      },
    }),
    route({
      method: 'GET',
      path: '/conversions',
      operationId: 'listConversions',
      tag: 'Conversions',
      summary: 'Conversions, newest first, cursor-paginated; filter by link, type and occurred_at range',
      auth: read,
      query: ConversionListQuerySchema,
      responses: [{ status: 200, description: 'A page of conversions', schema: ConversionListSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await conversions.list(workspaceOf(ctx), query);
      },
    }),
    route({
      method: 'GET',
      path: '/conversions/:id',
      operationId: 'getConversion',
      tag: 'Conversions',
      summary: 'Read one conversion',
      auth: read,
      responses: [{ status: 200, description: 'The conversion', schema: ConversionSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await conversions.get(workspaceOf(ctx), params.id!);
      },
    }),
  ];
}
