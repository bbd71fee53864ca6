import { Type, type Static } from '@sinclair/typebox';
import { closed, DateTime, Integer, Nullable, PaginationSchema, StringEnum, Text } from '../platform/schema.ts';
import { Currency, MinorUnits } from './plan.schemas.ts';

const PERIOD = Type.String({
  pattern: '^\\d{4}-(0[1-9]|1[0-2])$',
  description: 'A calendar month in UTC, `YYYY-MM` (e.g. `2026-11`); in a query, the current month when omitted',
});
const Cursor = Type.String({ minLength: 1, maxLength: 500 });
const Limit = Type.Integer({ minimum: 1, maximum: 100, default: 100, description: 'At most 100 rows per request' });
const ClientId = Text(3, 64);

export const PaymentListQuerySchema = Type.Object(
  { period: Type.Optional(PERIOD), client_id: Type.Optional(ClientId), cursor: Type.Optional(Cursor), limit: Limit },
  closed,
);
export const PayoutListQuerySchema = Type.Object({ period: Type.Optional(PERIOD), cursor: Type.Optional(Cursor), limit: Limit }, closed);

const FEE_RULE =
  'gross = processor_fee + platform_fee + partner_share, in integer minor units. processor_fee: the processor\'s own ' +
  "figure when its event carries one (an expanded balance transaction), else the partner's `processor_fee` schedule; " +
  "platform_fee: the partner's `platform_fee_bps` of the gross, rounded down; partner_share: the rest.";

export const PaymentSchema = Type.Object(
  {
    id: Type.String(),
    status: StringEnum(['succeeded', 'partially_refunded', 'refunded'] as const),
    client_id: Type.String(),
    plan_id: Nullable(Type.String()),
    source: StringEnum(['stripe', 'manual'] as const, { description: 'A processor event, or recorded through the API' }),
    gross: MinorUnits(),
    processor_fee: MinorUnits(),
    platform_fee: MinorUnits(),
    partner_share: MinorUnits(),
    refunded: MinorUnits({ description: 'Refunded so far (part of the gross)' }),
    currency: Currency,
    period: PERIOD,
    paid_at: DateTime(),
    payout_id: Nullable(Type.String({ description: 'The payout that carried the partner share, once computed' })),
    external_ids: Type.Object(
      {
        invoice_id: Nullable(Type.String()),
        charge_id: Nullable(Type.String()),
        customer_id: Nullable(Type.String()),
        subscription_id: Nullable(Type.String()),
        reference: Nullable(Type.String()),
      },
      closed,
    ),
    created_at: DateTime(),
  },
  { ...closed, $id: 'Payment', description: FEE_RULE },
);
export type Payment = Static<typeof PaymentSchema>;

export const PaymentListSchema = Type.Object({ data: Type.Array(PaymentSchema), pagination: PaginationSchema }, { ...closed, $id: 'PaymentList' });

export const PaymentCreateSchema = Type.Object(
  {
    client_id: ClientId,
    amount: Integer(1, 1_000_000_000_000, { description: 'Gross amount paid, in minor units' }),
    currency: Currency,
    processor_fee: Type.Optional(MinorUnits({ description: 'What the partner paid to collect it; default 0' })),
    paid_at: Type.Optional(DateTime({ description: 'Default: now; not in the future' })),
    reference: Type.Optional(Text(1, 255, { description: "The partner's own reference (a bank transfer id), unique per partner" })),
  },
  { ...closed, $id: 'PaymentCreate' },
);
export type PaymentCreate = Static<typeof PaymentCreateSchema>;

export const RefundCreateSchema = Type.Object(
  { amount: Integer(1, 1_000_000_000_000, { description: 'Minor units to refund; at most what is left of the payment' }) },
  { ...closed, $id: 'RefundCreate' },
);

export const RefundSchema = Type.Object(
  {
    id: Type.String(),
    payment_id: Type.String(),
    amount: MinorUnits(),
    platform_fee_returned: MinorUnits({ description: 'The platform fee returned pro rata (rounded down)' }),
    partner_share_reversed: MinorUnits({ description: "Taken from the partner's share (the processor keeps its fee)" }),
    currency: Currency,
    refunded_at: DateTime(),
  },
  { ...closed, $id: 'Refund' },
);

export const PaymentWithRefundSchema = Type.Object({ payment: PaymentSchema, refund: RefundSchema }, { ...closed, $id: 'PaymentRefunded' });

export const PayoutSchema = Type.Object(
  {
    id: Type.String(),
    period: PERIOD,
    currency: Currency,
    status: StringEnum(['pending', 'paid'] as const, { description: 'pending → paid (POST /partner/payouts/{id}/pay with a reference)' }),
    payments: Integer(0, Number.MAX_SAFE_INTEGER, { description: 'Payments carried' }),
    gross: MinorUnits(),
    processor_fees: MinorUnits(),
    platform_fees: MinorUnits(),
    partner_shares: MinorUnits(),
    refunds: MinorUnits({ description: 'Refunded amounts carried (refunds made after an earlier payout land in the next one)' }),
    refunded_partner_shares: MinorUnits(),
    amount: Type.Integer({ description: 'partner_shares − refunded_partner_shares; negative when refunds exceed the period\'s shares (owed to the platform)' }),
    reference: Nullable(Type.String()),
    paid_at: Nullable(DateTime()),
    created_at: DateTime(),
  },
  { ...closed, $id: 'Payout' },
);
export type Payout = Static<typeof PayoutSchema>;

export const PayoutListSchema = Type.Object({ data: Type.Array(PayoutSchema), pagination: PaginationSchema }, { ...closed, $id: 'PayoutList' });

export const PayoutPaySchema = Type.Object(
  { reference: Text(1, 255, { description: 'The transfer reference (bank or processor payout id)' }) },
  { ...closed, $id: 'PayoutPay' },
);

export const IngestResultSchema = Type.Object(
  {
    received: Type.Boolean(),
    duplicate: Type.Boolean({ description: 'The event id was processed before; nothing changed' }),
    outcome: Type.String({ description: 'What the event did (`applied`, `ignored: …`)' }),
  },
  { ...closed, $id: 'BillingIngestResult' },
);
