// Billing: processor events in Stripe's webhook format, payments and refunds recorded by hand, and the ledger they
// write. Every change to money or state is one transaction with its outbox events.
//
// Processor event rules (published in docs/partners.md and the OpenAPI document):
// - a client is found by the object's `customer` (the client's billing_customer_id), else by
//   `metadata.linkplane_client_id` on the object; an event for no client of the partner is acknowledged and ignored;
// - each event id is applied once: the id is written in the same transaction as what the event changed, so a retry
//   (or a concurrent duplicate) changes nothing;
// - money is order-independent: one payment per invoice id; `charge.refunded` carries the charge's cumulative
//   `amount_refunded`, so only the increase over what the ledger holds is refunded, and a refund that arrives before
//   its payment waits and is applied when the payment lands;
// - state follows the newest event: an event whose `created` is older than the last one applied to the client's
//   subscription records its money but does not move the state; `invoice.payment_failed` for an invoice the ledger
//   already holds as paid is ignored (a paid invoice cannot fail afterwards).
import Stripe from 'stripe';
import type { ClientSession, MongoClient } from 'mongodb';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../platform/logger.ts';
import { isCurrencyCode } from '../platform/money.ts';
import { newId } from '../platform/ids.ts';
import { ConflictError, InvalidRequestError, isDuplicateKey, NotConfiguredError, NotFoundError, ValidationError } from '../platform/errors.ts';
import type { EventStore } from '../events/event.store.ts';
import { inTransaction } from '../platform/mongo.ts';
import { decodeCursor, pageOf, type Pagination } from '../http/cursor.ts';
import type { WorkspaceDoc, WorkspaceStore } from '../tenancy/workspace.store.ts';
import { DEFAULT_PROCESSOR_FEE, type PartnerDoc, type PartnerStore } from '../tenancy/partner.store.ts';
import type { PartnerService } from './partner.service.ts';
import type { ExternalIds, LedgerStore, PaymentDoc, PayoutDoc, RefundDoc } from './ledger.store.ts';
import { estimateProcessorFee, periodKey, splitPayment, splitRefund } from './fees.ts';
import type { Applied, SubscriptionWriter } from './subscription.service.ts';
import type { Trigger } from '../tenancy/subscription.ts';
import type { Payment, PaymentCreate, Payout } from './billing.schemas.ts';
import { checkStripeEvent, type ProcessorEvent, type StripeObject } from './processor-event.ts';

/** Stripe's default, and what the spec asks of our own signatures: five minutes. */
export const SIGNATURE_TOLERANCE_S = 300;

/** Attempts of a refund recorded by hand while other refunds of the same payment commit (see recordRefund). */
const REFUND_ATTEMPTS = 10;

/** The payment's refunded amount moved between reading it and writing the refund: nothing was written. */
class PaymentChangedError extends ConflictError {
  constructor() {
    super('The payment changed while the refund was being recorded (another refund of it); retry.');
  }
}

export interface IngestResult {
  received: true;
  duplicate: boolean;
  outcome: string;
}

interface Work {
  outcome: string;
  applied: Applied[];
}

export interface BillingServiceDeps {
  client: MongoClient;
  ledger: LedgerStore;
  workspaces: WorkspaceStore;
  partners: PartnerStore;
  partnerService: PartnerService;
  subscriptions: SubscriptionWriter;
  events: EventStore;
  /** Where an event that fails validation is logged (with its reason), and the registry its counter joins. */
  logger?: Logger;
  registry?: Registry;
  onEvent?: () => void;
  now?: () => Date;
}

export function paymentView(p: PaymentDoc): Payment {
  return {
    id: p._id,
    status: p.status,
    client_id: p.workspace_id,
    plan_id: p.plan_id,
    source: p.source,
    gross: p.gross,
    processor_fee: p.processor_fee,
    platform_fee: p.platform_fee,
    partner_share: p.partner_share,
    refunded: p.refunded,
    currency: p.currency,
    period: p.period,
    paid_at: p.paid_at.toISOString(),
    payout_id: p.payout_id,
    external_ids: { ...p.external },
    created_at: p.created_at.toISOString(),
  };
}

export function refundView(r: RefundDoc) {
  return {
    id: r._id,
    payment_id: r.payment_id,
    amount: r.amount,
    platform_fee_returned: r.platform_fee_returned,
    partner_share_reversed: r.partner_share_reversed,
    currency: r.currency,
    refunded_at: r.refunded_at.toISOString(),
  };
}

export function payoutView(p: PayoutDoc): Payout {
  return {
    id: p._id,
    period: p.period,
    currency: p.currency,
    status: p.status,
    payments: p.payments,
    gross: p.gross,
    processor_fees: p.processor_fees,
    platform_fees: p.platform_fees,
    partner_shares: p.partner_shares,
    refunds: p.refunds,
    refunded_partner_shares: p.refunded_partner_shares,
    amount: p.amount,
    reference: p.reference,
    paid_at: p.paid_at?.toISOString() ?? null,
    created_at: p.created_at.toISOString(),
  };
}

function idOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string') return (value as { id: string }).id;
  return null;
}

function integer(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

function metadataClientId(object: StripeObject): string | null {
  const metadata = object.metadata as Record<string, unknown> | undefined;
  return typeof metadata?.linkplane_client_id === 'string' ? metadata.linkplane_client_id : null;
}

/** An invoice's subscription id: `subscription` (API versions before 2025-03) or `parent.subscription_details`. */
function invoiceSubscription(invoice: StripeObject): string | null {
  const parent = invoice.parent as { subscription_details?: { subscription?: unknown } } | undefined;
  return idOf(invoice.subscription) ?? idOf(parent?.subscription_details?.subscription);
}

/** The processor's own fee, when the invoice carries its charge expanded down to the balance transaction. */
function statedFee(invoice: StripeObject): number | null {
  const charge = invoice.charge as { balance_transaction?: { fee?: unknown } } | string | null | undefined;
  if (!charge || typeof charge === 'string') return null;
  return integer(charge.balance_transaction?.fee);
}

export class BillingService {
  private readonly d: BillingServiceDeps;
  private readonly now: () => Date;
  private readonly refusedEvents: Counter<'reason'>;

  constructor(deps: BillingServiceDeps) {
    this.d = deps;
    this.now = deps.now ?? (() => new Date());
    this.refusedEvents = new Counter({
      name: 'linkplane_billing_events_ignored_total',
      help: 'Correctly signed processor events ignored because they failed validation (envelope, amount, currency, field)',
      labelNames: ['reason'],
      registers: deps.registry ? [deps.registry] : [],
    });
  }

  // ----- processor events -----

  /** Verifies the `Stripe-Signature` header with the official package, then applies the event once. */
  async ingestStripe(partnerId: string, raw: Buffer, signature: string | undefined): Promise<IngestResult> {
    const partner = await this.d.partners.findById(partnerId);
    if (!partner) throw new NotFoundError('billing endpoint');
    const secret = this.d.partnerService.stripeSecret(partner);
    if (secret === null) throw new NotConfiguredError("This partner's Stripe ingestion (set stripe_endpoint_secret with PATCH /partner)");
    let verified: unknown;
    try {
      verified = Stripe.webhooks.constructEvent(raw, signature ?? '', secret, SIGNATURE_TOLERANCE_S);
    } catch (error) {
      throw new InvalidRequestError('The Stripe-Signature header does not verify (wrong secret, altered body, or older than 300 seconds).', { cause: error });
    }
    const checked = checkStripeEvent(verified);
    if (!checked.ok) {
      // Acknowledged (a retry would carry the same bytes), so the processor stops sending it; nothing is recorded.
      this.refusedEvents.inc({ reason: checked.kind });
      this.d.logger?.warn({ partner_id: partnerId, reason: checked.reason }, 'processor event ignored: it fails validation');
      return { received: true, duplicate: false, outcome: `ignored: ${checked.reason}` };
    }
    const event = checked.event;
    const key = `${partnerId}:${event.id}`;
    if (await this.d.ledger.billingEvents.findOne({ _id: key }, { projection: { _id: 1 } })) return { received: true, duplicate: true, outcome: 'duplicate' };
    let work: Work;
    try {
      work = await inTransaction(this.d.client, async (session) => {
        const result = await this.applyEvent(partner, event, session);
        // Written with what the event changed: both commit, or neither.
        await this.d.ledger.billingEvents.insertOne(
          { _id: key, partner_id: partnerId, type: event.type, created: event.created, outcome: result.outcome, received_at: this.now() },
          { session },
        );
        return result;
      });
    } catch (error) {
      // A concurrent delivery of the same event committed first.
      if (isDuplicateKey(error)) return { received: true, duplicate: true, outcome: 'duplicate' };
      throw error;
    }
    await this.afterCommit(work.applied);
    return { received: true, duplicate: false, outcome: work.outcome };
  }

  private async applyEvent(partner: PartnerDoc, event: ProcessorEvent, session: ClientSession): Promise<Work> {
    const object = event.object;
    switch (event.type) {
      case 'invoice.paid':
      case 'invoice.payment_succeeded':
        return this.invoicePaid(partner, object, event.created, session);
      case 'invoice.payment_failed':
        return this.invoiceFailed(partner, object, event.created, session);
      case 'charge.refunded':
        return this.chargeRefunded(partner, object, event.created, session);
      case 'customer.subscription.updated':
        return this.subscriptionChanged(partner, object, { kind: 'processor_status', status: String(object.status) }, event.created, session);
      case 'customer.subscription.deleted':
        return this.subscriptionChanged(partner, object, { kind: 'canceled' }, event.created, session);
      default:
        return { outcome: `ignored: ${event.type} is not used`, applied: [] };
    }
  }

  private async clientFor(partner: PartnerDoc, object: StripeObject, session: ClientSession): Promise<WorkspaceDoc | null> {
    const customer = idOf(object.customer);
    if (customer) {
      const byCustomer = await this.d.workspaces.collection.findOne({ partner_id: partner._id, billing_customer_id: customer }, { session });
      if (byCustomer) return byCustomer;
    }
    const metadataId = metadataClientId(object);
    return metadataId ? this.d.workspaces.collection.findOne({ _id: metadataId, partner_id: partner._id }, { session }) : null;
  }

  private async invoicePaid(partner: PartnerDoc, invoice: StripeObject, created: number, session: ClientSession): Promise<Work> {
    const client = await this.clientFor(partner, invoice, session);
    if (!client) return { outcome: `ignored: no client with billing customer id ${idOf(invoice.customer) ?? '(none)'}`, applied: [] };
    const invoiceId = idOf(invoice.id);
    // Both checked by checkStripeEvent: integer minor units, and an ISO 4217 code (Stripe spells it lower case).
    const gross = invoice.amount_paid as number;
    const currency = (invoice.currency as string).toUpperCase();
    const transitions = invoice.status_transitions as { paid_at?: unknown } | undefined;
    const paidAt = new Date((integer(transitions?.paid_at) ?? created) * 1000);
    let outcome = 'applied';
    if (gross > 0) {
      const existing = invoiceId ? await this.d.ledger.payments.findOne({ 'external.invoice_id': invoiceId, partner_id: partner._id }, { session }) : null;
      if (existing) outcome = 'applied: payment already recorded';
      else {
        const fee = statedFee(invoice) ?? estimateProcessorFee(gross, partner.processor_fee ?? DEFAULT_PROCESSOR_FEE);
        await this.createPayment(partner, client, {
          gross,
          processorFee: fee,
          currency,
          paidAt,
          source: 'stripe',
          external: { invoice_id: invoiceId, charge_id: idOf(invoice.charge), customer_id: idOf(invoice.customer), subscription_id: invoiceSubscription(invoice), reference: null },
        }, session);
      }
    }
    const applied = await this.d.subscriptions.apply(client, partner, { kind: 'paid' }, session, {
      now: this.now(),
      processorEventAt: created,
      externalSubscriptionId: invoiceSubscription(invoice),
    });
    return { outcome, applied: [applied] };
  }

  private async invoiceFailed(partner: PartnerDoc, invoice: StripeObject, created: number, session: ClientSession): Promise<Work> {
    const client = await this.clientFor(partner, invoice, session);
    if (!client) return { outcome: `ignored: no client with billing customer id ${idOf(invoice.customer) ?? '(none)'}`, applied: [] };
    const invoiceId = idOf(invoice.id);
    if (invoiceId && (await this.d.ledger.payments.findOne({ 'external.invoice_id': invoiceId, partner_id: partner._id }, { session, projection: { _id: 1 } }))) {
      return { outcome: 'ignored: the invoice is already paid', applied: [] };
    }
    const applied = await this.d.subscriptions.apply(client, partner, { kind: 'payment_failed' }, session, {
      now: this.now(),
      processorEventAt: created,
      externalSubscriptionId: invoiceSubscription(invoice),
    });
    return { outcome: applied.transition ? 'applied' : 'applied: state unchanged', applied: [applied] };
  }

  private async chargeRefunded(partner: PartnerDoc, charge: StripeObject, created: number, session: ClientSession): Promise<Work> {
    const cumulative = charge.amount_refunded as number;
    const invoiceId = idOf(charge.invoice);
    const chargeId = idOf(charge.id);
    const payment = await this.d.ledger.findByExternal(partner._id, { invoiceId, chargeId }, session);
    const refundedAt = new Date(created * 1000);
    if (!payment) {
      // The payment has not arrived yet (events out of order): keep the highest cumulative amount seen.
      const ref = invoiceId ?? chargeId;
      if (!ref) return { outcome: 'ignored: the charge names no invoice', applied: [] };
      await this.d.ledger.pendingRefunds.updateOne(
        { _id: `${partner._id}:${ref}` },
        { $max: { amount_refunded: cumulative }, $set: { partner_id: partner._id, refunded_at: refundedAt } },
        { upsert: true, session },
      );
      return { outcome: 'deferred: waiting for the payment', applied: [] };
    }
    // Validated as an ISO 4217 code already; a refund in another currency than the payment's is no refund of it.
    const currency = (charge.currency as string).toUpperCase();
    if (currency !== payment.currency) return { outcome: `ignored: the refund is in ${currency}, the payment in ${payment.currency}`, applied: [] };
    const refund = await this.refundUpTo(partner, payment, cumulative, refundedAt, 'stripe', session);
    return { outcome: refund ? 'applied' : 'applied: refund already recorded', applied: [] };
  }

  private async subscriptionChanged(partner: PartnerDoc, sub: StripeObject, trigger: Trigger, created: number, session: ClientSession): Promise<Work> {
    const client = await this.clientFor(partner, sub, session);
    if (!client) return { outcome: `ignored: no client with billing customer id ${idOf(sub.customer) ?? '(none)'}`, applied: [] };
    const applied = await this.d.subscriptions.apply(client, partner, trigger, session, { now: this.now(), processorEventAt: created, externalSubscriptionId: idOf(sub.id) });
    return { outcome: applied.transition ? 'applied' : 'applied: state unchanged', applied: [applied] };
  }

  // ----- the ledger -----

  private async createPayment(
    partner: PartnerDoc,
    client: WorkspaceDoc,
    input: { gross: number; processorFee: number; currency: string; paidAt: Date; source: 'stripe' | 'manual'; external: ExternalIds },
    session: ClientSession,
  ): Promise<PaymentDoc> {
    const split = splitPayment(input.gross, input.processorFee, this.d.partnerService.platformFeeBps(partner));
    const payment: PaymentDoc = {
      _id: newId('pmt'),
      partner_id: partner._id,
      workspace_id: client._id,
      plan_id: client.partner_plan_id ?? null,
      status: 'succeeded',
      source: input.source,
      ...split,
      refunded: 0,
      currency: input.currency,
      period: periodKey(input.paidAt),
      paid_at: input.paidAt,
      external: input.external,
      created_at: this.now(),
      payout_id: null,
    };
    await this.d.ledger.payments.insertOne(payment, { session });
    await this.d.events.append({ type: 'payment.succeeded', workspaceId: client._id, partnerId: partner._id, data: paymentView(payment) }, session);
    // A refund that arrived first is applied now.
    for (const ref of [input.external.invoice_id, input.external.charge_id]) {
      if (!ref) continue;
      const pending = await this.d.ledger.pendingRefunds.findOneAndDelete({ _id: `${partner._id}:${ref}` }, { session });
      if (pending) await this.refundUpTo(partner, payment, pending.amount_refunded, pending.refunded_at, input.source, session);
    }
    return payment;
  }

  /** Brings the payment's refunded amount up to `cumulative` (never down); null when nothing was left to add. */
  private async refundUpTo(partner: PartnerDoc, payment: PaymentDoc, cumulative: number, refundedAt: Date, source: 'stripe' | 'manual', session: ClientSession): Promise<RefundDoc | null> {
    const current = (await this.d.ledger.payments.findOne({ _id: payment._id }, { session })) ?? payment;
    const amount = Math.min(cumulative, current.gross) - current.refunded;
    if (amount <= 0) return null;
    return (await this.refundOnTop(partner, current, amount, refundedAt, source, session)).refund;
  }

  /**
   * Refunds `amount` on top of what `current` says is refunded, written only if the payment still says so: a refund
   * committed in between (reads in a transaction are not a snapshot everywhere) makes it a PaymentChangedError, and
   * nothing is written.
   */
  private async refundOnTop(
    partner: PartnerDoc,
    current: PaymentDoc,
    amount: number,
    refundedAt: Date,
    source: 'stripe' | 'manual',
    session: ClientSession,
  ): Promise<{ payment: PaymentDoc; refund: RefundDoc }> {
    const target = current.refunded + amount;
    const split = splitRefund(current, current.refunded, amount);
    const refund: RefundDoc = {
      _id: newId('rfd'),
      partner_id: partner._id,
      payment_id: current._id,
      workspace_id: current.workspace_id,
      ...split,
      currency: current.currency,
      period: periodKey(refundedAt),
      refunded_at: refundedAt,
      created_at: this.now(),
      source,
      payout_id: null,
    };
    const status = target >= current.gross ? 'refunded' : 'partially_refunded';
    const updated = await this.d.ledger.payments.findOneAndUpdate(
      { _id: current._id, refunded: current.refunded },
      { $set: { refunded: target, status } },
      { session, returnDocument: 'after' },
    );
    if (!updated) throw new PaymentChangedError();
    await this.d.ledger.refunds.insertOne(refund, { session });
    await this.d.events.append(
      { type: 'payment.refunded', workspaceId: current.workspace_id, partnerId: partner._id, data: { ...paymentView(updated), refund: refundView(refund) } },
      session,
    );
    return { payment: updated, refund };
  }

  /** A payment recorded by the partner (no processor): it moves the subscription like a paid invoice. */
  async recordPayment(partnerId: string, input: PaymentCreate): Promise<Payment> {
    const partner = await this.d.partners.findById(partnerId);
    if (!partner) throw new NotFoundError('partner');
    const now = this.now();
    const paidAt = input.paid_at ? new Date(input.paid_at) : now;
    if (paidAt.getTime() > now.getTime() + 60_000) throw new ValidationError([{ path: 'paid_at', message: 'must not be in the future' }]);
    if (!isCurrencyCode(input.currency)) throw new ValidationError([{ path: 'currency', message: 'must be an ISO 4217 currency code' }]);
    if (input.processor_fee !== undefined && input.processor_fee > input.amount) throw new ValidationError([{ path: 'processor_fee', message: 'must not exceed amount' }]);
    let result: { payment: PaymentDoc; applied: Applied };
    try {
      result = await inTransaction(this.d.client, async (session) => {
        const client = await this.d.workspaces.collection.findOne({ _id: input.client_id, partner_id: partnerId }, { session });
        if (!client) throw new ValidationError([{ path: 'client_id', message: 'no such client of the partner' }]);
        const payment = await this.createPayment(partner, client, {
          gross: input.amount,
          processorFee: input.processor_fee ?? 0,
          currency: input.currency,
          paidAt,
          source: 'manual',
          external: { invoice_id: null, charge_id: null, customer_id: client.billing_customer_id ?? null, subscription_id: null, reference: input.reference ?? null },
        }, session);
        const applied = await this.d.subscriptions.apply(client, partner, { kind: 'paid' }, session, { now });
        return { payment, applied };
      });
    } catch (error) {
      if (isDuplicateKey(error)) throw new ConflictError(`A payment with the reference "${input.reference}" is already recorded.`, { cause: error });
      throw error;
    }
    await this.afterCommit([result.applied]);
    return paymentView(result.payment);
  }

  /**
   * A refund recorded by hand: `amount` on top of what the payment has refunded when it is read. Concurrent refunds of
   * one payment are serialised by reading again and retrying (each attempt fails only because another refund
   * committed); past REFUND_ATTEMPTS the answer is 409 conflict, never a partial write.
   */
  async recordRefund(partnerId: string, paymentId: string, amount: number): Promise<{ payment: Payment; refund: ReturnType<typeof refundView> }> {
    const partner = await this.d.partners.findById(partnerId);
    if (!partner) throw new NotFoundError('partner');
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await inTransaction(this.d.client, async (session) => {
          const payment = await this.d.ledger.findPayment(partnerId, paymentId, session);
          if (!payment) throw new NotFoundError('payment');
          const left = payment.gross - payment.refunded;
          if (amount > left) throw new ValidationError([{ path: 'amount', message: `must be at most ${left}, what is left of the payment` }]);
          return this.refundOnTop(partner, payment, amount, this.now(), 'manual', session);
        });
        this.d.onEvent?.();
        return { payment: paymentView(result.payment), refund: refundView(result.refund) };
      } catch (error) {
        if (!(error instanceof PaymentChangedError) || attempt >= REFUND_ATTEMPTS) throw error;
      }
    }
  }

  async getPayment(partnerId: string, id: string): Promise<Payment> {
    const payment = await this.d.ledger.findPayment(partnerId, id);
    if (!payment) throw new NotFoundError('payment');
    return paymentView(payment);
  }

  /** Newest first by (paid_at, id): payments arriving while a client pages land before its position, never inside it. */
  async listPayments(partnerId: string, query: { period?: string; client_id?: string; cursor?: string; limit: number }): Promise<{ data: Payment[]; pagination: Pagination }> {
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor, { t: 'number', id: 'string' });
    const rows = await this.d.ledger.paymentPage(
      partnerId,
      query.period ?? periodKey(this.now()),
      query.client_id ? { workspaceId: query.client_id } : {},
      after ? { paid_at: new Date(after.t), id: after.id as string } : null,
      query.limit + 1,
    );
    const { page, pagination } = pageOf(rows, query.limit, (p) => ({ t: p.paid_at.getTime(), id: p._id }));
    return { data: page.map(paymentView), pagination };
  }

  async listPayouts(partnerId: string, query: { period?: string; cursor?: string; limit: number }): Promise<{ data: Payout[]; pagination: Pagination }> {
    const after = query.cursor === undefined ? null : (decodeCursor(query.cursor, { id: 'string' }).id as string);
    const rows = await this.d.ledger.payoutPage(partnerId, query.period ?? periodKey(this.now()), after, query.limit + 1);
    const { page, pagination } = pageOf(rows, query.limit, (p) => ({ id: p._id }));
    return { data: page.map(payoutView), pagination };
  }

  async getPayout(partnerId: string, id: string): Promise<Payout> {
    const payout = await this.d.ledger.payouts.findOne({ _id: id, partner_id: partnerId });
    if (!payout) throw new NotFoundError('payout');
    return payoutView(payout);
  }

  /** pending → paid, once: a second call is 409 conflict (the first reference stands). */
  async markPayoutPaid(partnerId: string, id: string, reference: string): Promise<Payout> {
    const updated = await this.d.ledger.payouts.findOneAndUpdate(
      { _id: id, partner_id: partnerId, status: 'pending' },
      { $set: { status: 'paid', reference, paid_at: this.now() } },
      { returnDocument: 'after' },
    );
    if (updated) return payoutView(updated);
    const existing = await this.d.ledger.payouts.findOne({ _id: id, partner_id: partnerId });
    if (!existing) throw new NotFoundError('payout');
    throw new ConflictError(`The payout is already paid (reference "${existing.reference}").`);
  }

  private async afterCommit(applied: Applied[]): Promise<void> {
    for (const a of applied) await this.d.subscriptions.announce(a);
    this.d.onEvent?.();
  }
}
