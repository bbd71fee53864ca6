import { Type, type Static } from '@sinclair/typebox';
import { CAPABILITIES } from '../tenancy/plans.ts';
import { closed, DateTime, Integer, Nullable, PaginationSchema, StringEnum, Text } from '../platform/schema.ts';
import { MAX_MINOR_UNITS } from '../platform/money.ts';

/** Money in integer minor units of an ISO 4217 currency (cents for USD, yen for JPY): never a float. */
export const MinorUnits = (options: { description?: string } = {}) => Integer(0, MAX_MINOR_UNITS, options);
export const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code, upper case' });
export const PlanId = Type.String({ pattern: '^pln_[A-Za-z0-9]{1,40}$', description: 'A plan of the partner (`pln_…`)' });

const PLAN_NAME = Text(1, 120);
const INTERVALS = ['month', 'year'] as const;
const PLAN_STATUSES = ['active', 'archived'] as const;

const PriceSchema = Type.Object(
  {
    amount: MinorUnits({ description: 'Price per interval in minor units' }),
    currency: Currency,
    interval: StringEnum(INTERVALS),
  },
  closed,
);

const LIMITS_DESCRIPTION = "Each at most the partner's own platform plan allows (422 naming the field beyond it)";
const PlanLimitsInput = Type.Object(
  {
    links: Integer(0, 100_000_000),
    domains: Integer(0, 10_000),
    tracked_clicks_per_month: Integer(0, 1_000_000_000),
    rate_limit_per_minute: Integer(1, 100_000, { description: 'Requests per sliding minute for each key of a client' }),
  },
  { ...closed, description: LIMITS_DESCRIPTION },
);

const CapabilityList = Type.Array(StringEnum(CAPABILITIES), {
  uniqueItems: true,
  maxItems: CAPABILITIES.length,
  description: "Capabilities the plan includes; each must be in the partner's platform plan",
});

export const PlanCreateSchema = Type.Object(
  {
    name: PLAN_NAME,
    price: PriceSchema,
    limits: PlanLimitsInput,
    capabilities: CapabilityList,
    external_price_id: Type.Optional(Nullable(Text(1, 255), { description: "The processor's price id (Stripe `price_…`), for the partner's reference" })),
  },
  { ...closed, $id: 'PartnerPlanCreate' },
);
export type PlanCreate = Static<typeof PlanCreateSchema>;

export const PlanUpdateSchema = Type.Object(
  {
    name: Type.Optional(PLAN_NAME),
    price: Type.Optional(PriceSchema),
    limits: Type.Optional(PlanLimitsInput),
    capabilities: Type.Optional(CapabilityList),
    external_price_id: Type.Optional(Nullable(Text(1, 255))),
  },
  { ...closed, minProperties: 1, $id: 'PartnerPlanUpdate' },
);
export type PlanUpdate = Static<typeof PlanUpdateSchema>;

export const PartnerPlanSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: StringEnum(PLAN_STATUSES, { description: '`archived`: kept by the clients on it, offered to no new client' }),
    price: PriceSchema,
    limits: PlanLimitsInput,
    capabilities: CapabilityList,
    external_price_id: Nullable(Type.String()),
    clients: Integer(0, Number.MAX_SAFE_INTEGER, { description: 'Client workspaces on the plan' }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { ...closed, $id: 'PartnerPlan' },
);
export type PartnerPlan = Static<typeof PartnerPlanSchema>;

export const PartnerPlanListSchema = Type.Object(
  { data: Type.Array(PartnerPlanSchema), pagination: PaginationSchema },
  { ...closed, $id: 'PartnerPlanList' },
);
