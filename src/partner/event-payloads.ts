// The `data` of the partner-only events (spec 6.1), published in the OpenAPI document's `webhooks`.
import { Type } from '@sinclair/typebox';
import type { EventPayloadSpec } from '../http/openapi.ts';
import { closed, DateTime, Nullable, StringEnum } from '../platform/schema.ts';
import { PaymentSchema, RefundSchema } from './billing.schemas.ts';
import { SUBSCRIPTION_STATES, SUSPEND_REASONS } from '../tenancy/subscription.ts';

const SubscriptionEventSchema = Type.Object(
  {
    client_id: Type.String(),
    name: Type.String(),
    plan_id: Nullable(Type.String()),
    billing_customer_id: Nullable(Type.String()),
    state: StringEnum(SUBSCRIPTION_STATES),
    previous_state: StringEnum(SUBSCRIPTION_STATES),
    reason: Type.Unsafe<string | null>({ type: ['string', 'null'], enum: [...SUSPEND_REASONS, null], description: 'Why it was suspended (`workspace.suspended` only)' }),
    changed_at: DateTime(),
  },
  { ...closed, $id: 'SubscriptionEventData' },
);

const PaymentRefundedEventSchema = Type.Object(
  { ...PaymentSchema.properties, refund: RefundSchema },
  { ...closed, $id: 'PaymentRefundedEventData', description: 'The payment after the refund, and the refund with its breakdown' },
);

export const PARTNER_EVENT_PAYLOADS: readonly EventPayloadSpec[] = [
  { type: 'workspace.subscribed', summary: 'A client paid (its first invoice, or again after past_due or suspended), or was reactivated', data: SubscriptionEventSchema },
  { type: 'workspace.past_due', summary: 'A client payment failed; the grace period starts', data: SubscriptionEventSchema },
  { type: 'workspace.suspended', summary: 'A client was suspended: dunning (grace elapsed), the processor, or by hand', data: SubscriptionEventSchema },
  { type: 'payment.succeeded', summary: 'A client payment settled; the payment with its fee breakdown', data: PaymentSchema },
  { type: 'payment.refunded', summary: 'A payment was (partly) refunded', data: PaymentRefundedEventSchema },
];
