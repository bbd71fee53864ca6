// Builders for processor events in Stripe's webhook format, signed with the official package's test helper, and a
// sender that posts them to a partner's ingestion URL as Stripe would (raw body, Stripe-Signature header).
import Stripe from 'stripe';
import { randomBase62 } from '../../src/platform/ids.ts';

export interface StripeEvent {
  id: string;
  object: 'event';
  type: string;
  created: number;
  api_version: string;
  livemode: false;
  data: { object: Record<string, unknown> };
}

let clock = Math.floor(Date.now() / 1000);
/** Strictly increasing `created` seconds, so tests state their order explicitly. */
export function nextCreated(): number {
  clock += 1;
  return clock;
}

export function anEvent(type: string, object: Record<string, unknown>, overrides: Partial<StripeEvent> = {}): StripeEvent {
  return { id: `evt_${randomBase62(24)}`, object: 'event', type, created: nextCreated(), api_version: '2025-01-27.acacia', livemode: false, data: { object }, ...overrides };
}

export function anInvoice(customer: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const id = `in_${randomBase62(24)}`;
  return {
    id,
    object: 'invoice',
    customer,
    subscription: 'sub_test',
    amount_paid: 4900,
    amount_due: 4900,
    currency: 'usd',
    charge: `ch_${randomBase62(24)}`,
    status_transitions: { paid_at: null },
    metadata: {},
    ...overrides,
  };
}

export function aCharge(invoice: Record<string, unknown>, amountRefunded: number): Record<string, unknown> {
  return {
    id: invoice.charge,
    object: 'charge',
    customer: invoice.customer,
    invoice: invoice.id,
    amount: invoice.amount_paid,
    amount_refunded: amountRefunded,
    currency: invoice.currency,
    refunded: amountRefunded >= (invoice.amount_paid as number),
  };
}

export function sign(payload: string, secret: string, timestamp?: number): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp === undefined ? {} : { timestamp }) });
}

export interface IngestReply {
  status: number;
  body: { received?: boolean; duplicate?: boolean; outcome?: string; error?: { code: string; message: string } };
}

/** Posts an event as Stripe does: the exact bytes signed, with a `Stripe-Signature` header (or the one given). */
export async function deliver(apiUrl: string, partnerId: string, event: StripeEvent, secret: string, options: { signature?: string; timestamp?: number } = {}): Promise<IngestReply> {
  return deliverPayload(apiUrl, partnerId, JSON.stringify(event), secret, options);
}

/** Posts any payload, correctly signed unless a signature is given: for bodies no processor would send. */
export async function deliverPayload(apiUrl: string, partnerId: string, payload: string, secret: string, options: { signature?: string; timestamp?: number } = {}): Promise<IngestReply> {
  const res = await fetch(`${apiUrl}/v1/billing/stripe/${partnerId}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Stripe-Signature': options.signature ?? sign(payload, secret, options.timestamp) },
    body: payload,
  });
  return { status: res.status, body: (await res.json()) as IngestReply['body'] };
}

export const ENDPOINT_SECRET = 'whsec_testsecretforlinkplanebillingxx';
