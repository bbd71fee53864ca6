import { Type, type Static } from '@sinclair/typebox';
import { closed, DateTime, DisplayName, Integer, Nullable, PaginationSchema, StringEnum, Text } from '../platform/schema.ts';
import { ALL_SCOPES } from '../tenancy/scopes.ts';
import { CAPABILITIES } from '../tenancy/plans.ts';
import { PlanId } from './plan.schemas.ts';
import { SUBSCRIPTION_STATES, SUSPEND_REASONS } from '../tenancy/subscription.ts';
import { SUSPENDED_LINKS } from '../tenancy/partner.store.ts';

const CLIENT_NAME = DisplayName(120);
const BillingCustomerId = Text(1, 255, {
  description: "The client's customer id at the partner's payment processor (Stripe `cus_…`); processor events whose `customer` is this id apply to the client. Unique among the partner's clients",
});
const Metadata = Type.Record(Type.String({ minLength: 1, maxLength: 40 }), Type.String({ maxLength: 500 }), {
  maxProperties: 50,
  description: 'Free key-value strings for the partner (at most 50 keys of 40 characters, values of 500)',
});

export const ClientCreateSchema = Type.Object(
  {
    name: CLIENT_NAME,
    plan: Type.Optional({ ...PlanId, description: 'An active plan of the partner; without one the client waits on the free platform plan' }),
    billing_customer_id: Type.Optional(BillingCustomerId),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false, $id: 'ClientCreate' },
);
export type ClientCreate = Static<typeof ClientCreateSchema>;

export const ClientUpdateSchema = Type.Object(
  {
    name: Type.Optional(CLIENT_NAME),
    plan: Type.Optional({ ...PlanId, description: "Moves the client to another active plan of the partner: its limits and capabilities apply at once" }),
    billing_customer_id: Type.Optional(Nullable(BillingCustomerId)),
    metadata: Type.Optional({ ...Metadata, description: 'Replaces the stored metadata' }),
  },
  { additionalProperties: false, minProperties: 1, $id: 'ClientUpdate' },
);
export type ClientUpdate = Static<typeof ClientUpdateSchema>;

const STATE_DESCRIPTION =
  'pending (no invoice paid yet) → subscribed (an invoice paid: workspace.subscribed) → past_due (a payment failed: ' +
  "workspace.past_due) → subscribed (paid) or suspended (the partner's grace period ran out, the processor gave up, or " +
  'by hand: workspace.suspended) → subscribed again on payment (unless suspended by hand) or reactivation; canceled ' +
  'when the subscription ends. A suspended or canceled client\'s keys are refused on writes (403 forbidden).';

export const SubscriptionSchema = Type.Object(
  {
    state: StringEnum(SUBSCRIPTION_STATES, { description: STATE_DESCRIPTION }),
    changed_at: DateTime(),
    past_due_since: Nullable(DateTime(), { description: 'When the grace period started; null unless past_due or suspended by dunning' }),
    suspended_reason: Type.Unsafe<(typeof SUSPEND_REASONS)[number] | null>({ type: ['string', 'null'], enum: [...SUSPEND_REASONS, null], description: "Why it is suspended: the grace period ran out (`dunning`), the processor marked it unpaid (`processor`), or by hand (`manual`)" }),
    external_subscription_id: Nullable(Type.String()),
  },
  closed,
);

export const ClientSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    plan: Nullable(Type.String(), { description: 'The partner plan the client is on (`pln_…`), or null' }),
    platform_plan: Type.Object(
      { id: Type.String(), name: Type.String() },
      { additionalProperties: false, description: 'The platform plan of the workspace (`free`, `pro`, `business`…): its limits and capabilities when `plan` is null' },
    ),
    status: StringEnum(SUBSCRIPTION_STATES, { description: 'The subscription state (as subscription.state)' }),
    subscription: SubscriptionSchema,
    billing_customer_id: Nullable(Type.String()),
    metadata: Type.Record(Type.String(), Type.String()),
    created_at: DateTime(),
  },
  { additionalProperties: false, $id: 'Client' },
);
export type Client = Static<typeof ClientSchema>;

export const ClientListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  },
  { additionalProperties: false },
);

export const ClientListSchema = Type.Object(
  { data: Type.Array(ClientSchema), pagination: PaginationSchema },
  { additionalProperties: false, $id: 'ClientList' },
);

const WORKSPACE_SCOPES = ALL_SCOPES.filter((s) => !/^(clients|plans|billing):/.test(s));

export const ClientKeyCreateSchema = Type.Object(
  {
    name: Type.Optional(Nullable(Text(1, 120))),
    scopes: Type.Optional(
      Type.Array(StringEnum(WORKSPACE_SCOPES), { minItems: 1, uniqueItems: true, description: 'Workspace scopes; default: every workspace scope' }),
    ),
    expires_at: Type.Optional(Nullable(DateTime())),
  },
  { ...closed, $id: 'ClientKeyCreate' },
);
export type ClientKeyCreate = Static<typeof ClientKeyCreateSchema>;
export const CLIENT_KEY_DEFAULT_SCOPES = WORKSPACE_SCOPES;

const FeeScheduleSchema = Type.Object(
  {
    percent_bps: Integer(0, 10_000, { description: 'Basis points of the gross, rounded half up' }),
    fixed: Integer(0, 1_000_000, { description: 'Minor units added per payment' }),
  },
  { ...closed, description: "The processor's fees, used when a processor event does not state the fee (default 290 bps + 30)" },
);

const SUSPENDED_LINKS_DESCRIPTION =
  "What a suspended or canceled client's short links do: keep redirecting (`redirect`, the default) or answer a " +
  '503 page saying the link is unavailable (`suspended_page`); redirect pods apply a change within a second';

export const PartnerUpdateSchema = Type.Object(
  {
    suspended_links: Type.Optional(StringEnum(SUSPENDED_LINKS, { description: SUSPENDED_LINKS_DESCRIPTION })),
    grace_period_days: Type.Optional(Integer(0, 60, { description: 'Days a past_due client keeps working before it is suspended' })),
    processor_fee: Type.Optional(FeeScheduleSchema),
    stripe_endpoint_secret: Type.Optional(
      Nullable(Type.String({ pattern: '^whsec_[A-Za-z0-9_+/=-]{8,200}$', description: "The signing secret of the partner's Stripe webhook endpoint (`whsec_…`); stored encrypted, never shown again; null removes it" })),
    ),
  },
  { ...closed, minProperties: 1, $id: 'PartnerUpdate' },
);
export type PartnerUpdate = Static<typeof PartnerUpdateSchema>;

export const PartnerProfileSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    platform_plan: Type.Object(
      {
        id: Type.String(),
        limits: Type.Object(
          { links: Integer(0, Number.MAX_SAFE_INTEGER), domains: Integer(0, Number.MAX_SAFE_INTEGER), tracked_clicks_per_month: Integer(0, Number.MAX_SAFE_INTEGER), rate_limit_per_minute: Integer(1, Number.MAX_SAFE_INTEGER) },
          closed,
        ),
        capabilities: Type.Array(StringEnum(CAPABILITIES)),
      },
      { ...closed, description: 'The ceiling of every plan the partner sells' },
    ),
    clients: Type.Object({ count: Integer(0, Number.MAX_SAFE_INTEGER), quota: Integer(0, Number.MAX_SAFE_INTEGER) }, closed),
    platform_fee_bps: Integer(0, 10_000, { description: "The platform's fee: basis points of each payment's gross, rounded down" }),
    suspended_links: StringEnum(SUSPENDED_LINKS, { description: SUSPENDED_LINKS_DESCRIPTION }),
    grace_period_days: Integer(0, 60),
    processor_fee: FeeScheduleSchema,
    billing: Type.Object(
      {
        stripe_ingestion_url: Type.String({ format: 'uri', description: 'Where to point the Stripe webhook endpoint' }),
        stripe_endpoint_secret_set: Type.Boolean(),
      },
      closed,
    ),
    created_at: DateTime(),
  },
  { ...closed, $id: 'PartnerProfile' },
);
export type PartnerProfile = Static<typeof PartnerProfileSchema>;
