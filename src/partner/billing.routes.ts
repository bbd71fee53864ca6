import { route, type RouteSpec } from '../http/route-table.ts';
import { InvalidRequestError } from '../platform/errors.ts';
import {
  IngestResultSchema,
  PaymentCreateSchema,
  PaymentListQuerySchema,
  PaymentListSchema,
  PaymentSchema,
  PaymentWithRefundSchema,
  PayoutListQuerySchema,
  PayoutListSchema,
  PayoutPaySchema,
  PayoutSchema,
  RefundCreateSchema,
} from './billing.schemas.ts';
import type { BillingService } from './billing.service.ts';
import { partnerIdOf } from './partner.routes.ts';

const read = { kind: 'partner', scope: 'billing:read' } as const;
const write = { kind: 'partner', scope: 'billing:write' } as const;

/** The path prefix of processor ingestion: public (the signature is the credential), outside the key gate. */
export const BILLING_INGEST_PREFIX = '/v1/billing/';

const INGEST_DESCRIPTION =
  'Point the partner\'s Stripe webhook endpoint here (the URL is in GET /partner) and give its signing secret to ' +
  'PATCH /partner as `stripe_endpoint_secret`. No API key: the `Stripe-Signature` header is verified with the official ' +
  '`stripe` package against that secret, with a 300-second tolerance; a missing, forged or stale signature is 400 and ' +
  'changes nothing. Used: `invoice.paid` (and `invoice.payment_succeeded`): a payment in the ledger and `subscribed`; ' +
  '`invoice.payment_failed`: `past_due`; `charge.refunded`: a refund of the increase of `amount_refunded`; ' +
  '`customer.subscription.updated`: its `status` (active/trialing → subscribed, past_due → past_due, unpaid → ' +
  'suspended, canceled → canceled); `customer.subscription.deleted`: canceled. Other types are acknowledged and ' +
  'ignored. A client is found by the object\'s `customer` (its billing_customer_id) or `metadata.linkplane_client_id`. ' +
  'Each event id is applied once (a retry answers 200 with `duplicate: true`); events may arrive in any order: money ' +
  'is recorded whatever the order, and a state change older (by `created`) than the last applied is not applied. ' +
  'A correctly signed event that is not an event object with `id`, `type`, `created` and `data.object`, or whose ' +
  'amounts are not integer minor units from 0 to 10^12, or whose currency is not an ISO 4217 code (the list ' +
  '`POST /conversions` accepts), is answered 200 with `outcome: "ignored: <reason>"` and changes nothing.';

export function billingRoutes(billing: BillingService): RouteSpec[] {
  return [
    route({
      method: 'POST',
      path: '/billing/stripe/:partner_id',
      operationId: 'ingestStripeEvent',
      tag: 'Partner billing',
      summary: "A partner's processor events, in Stripe's webhook format (per-partner URL, signed, no API key)",
      description: INGEST_DESCRIPTION,
      auth: null,
      errors: ['not_configured'],
      responses: [{ status: 200, description: 'Received (applied, ignored, or a duplicate)', schema: IngestResultSchema }],
      handler: async (ctx, { params }) => {
        const raw = ctx.state.rawBody;
        if (!raw || raw.length === 0) throw new InvalidRequestError('The event body is empty.');
        ctx.body = await billing.ingestStripe(params.partner_id!, raw, ctx.get('Stripe-Signature') || undefined);
      },
    }),
    route({
      method: 'GET',
      path: '/partner/payments',
      operationId: 'listPartnerPayments',
      tag: 'Partner billing',
      summary: "Client payments of one period, newest first, at most 100 per request, cursor-paginated",
      description:
        'All money in integer minor units: gross = processor_fee + platform_fee + partner_share for every row. Payments ' +
        'recorded while a client pages never shift the rows it has still to read.',
      auth: read,
      query: PaymentListQuerySchema,
      responses: [{ status: 200, description: 'A page of payments', schema: PaymentListSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await billing.listPayments(partnerIdOf(ctx), query);
      },
    }),
    route({
      method: 'POST',
      path: '/partner/payments',
      operationId: 'recordPartnerPayment',
      tag: 'Partner billing',
      summary: 'Record a payment a client made outside a processor; it moves the subscription like a paid invoice',
      auth: write,
      body: PaymentCreateSchema,
      errors: ['conflict'],
      responses: [{ status: 201, description: 'The payment (payment.succeeded is emitted)', schema: PaymentSchema }],
      handler: async (ctx, { body }) => {
        const payment = await billing.recordPayment(partnerIdOf(ctx), body);
        ctx.status = 201;
        ctx.set('Location', `/v1/partner/payments/${payment.id}`);
        ctx.body = payment;
      },
    }),
    route({
      method: 'GET',
      path: '/partner/payments/:id',
      operationId: 'getPartnerPayment',
      tag: 'Partner billing',
      summary: 'Read one payment',
      auth: read,
      responses: [{ status: 200, description: 'The payment', schema: PaymentSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await billing.getPayment(partnerIdOf(ctx), params.id!);
      },
    }),
    route({
      method: 'POST',
      path: '/partner/payments/:id/refunds',
      operationId: 'refundPartnerPayment',
      tag: 'Partner billing',
      summary: 'Record a refund of (part of) a payment; payment.refunded carries the breakdown',
      description:
        'The platform fee is returned pro rata (rounded down); the rest is taken from the partner share. A refund made after the period was paid out is carried by the next payout. ' +
        'Concurrent refunds of one payment are applied one after another (each on top of the others); 409 conflict only if the payment kept changing through every retry.',
      auth: write,
      body: RefundCreateSchema,
      errors: ['conflict'],
      responses: [{ status: 201, description: 'The payment and the refund', schema: PaymentWithRefundSchema }],
      handler: async (ctx, { body, params }) => {
        ctx.status = 201;
        ctx.body = await billing.recordRefund(partnerIdOf(ctx), params.id!, body.amount);
      },
    }),
    route({
      method: 'GET',
      path: '/partner/payouts',
      operationId: 'listPartnerPayouts',
      tag: 'Partner billing',
      summary: 'Payouts of one period (one per currency), at most 100 per request, cursor-paginated',
      description:
        'A payout is computed once, by the worker, after the period closes (the first day of the next UTC month): the ' +
        'partner shares of payments not yet paid out, minus the partner share of refunds not yet carried. pending → paid.',
      auth: read,
      query: PayoutListQuerySchema,
      responses: [{ status: 200, description: 'A page of payouts', schema: PayoutListSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await billing.listPayouts(partnerIdOf(ctx), query);
      },
    }),
    route({
      method: 'GET',
      path: '/partner/payouts/:id',
      operationId: 'getPartnerPayout',
      tag: 'Partner billing',
      summary: 'Read one payout',
      auth: read,
      responses: [{ status: 200, description: 'The payout', schema: PayoutSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await billing.getPayout(partnerIdOf(ctx), params.id!);
      },
    }),
    route({
      method: 'POST',
      path: '/partner/payouts/:id/pay',
      operationId: 'markPartnerPayoutPaid',
      tag: 'Partner billing',
      summary: 'Mark a pending payout paid, with the transfer reference; a paid payout is 409 conflict',
      auth: write,
      body: PayoutPaySchema,
      errors: ['conflict'],
      responses: [{ status: 200, description: 'The paid payout', schema: PayoutSchema }],
      handler: async (ctx, { body, params }) => {
        ctx.body = await billing.markPayoutPaid(partnerIdOf(ctx), params.id!, body.reference);
      },
    }),
  ];
}
