import type { ClientSession, Collection, Db, Filter } from 'mongodb';

export interface ExternalIds {
  invoice_id: string | null;
  charge_id: string | null;
  customer_id: string | null;
  subscription_id: string | null;
  /** The reference a partner gave a payment it recorded by hand. */
  reference: string | null;
}

export type PaymentStatus = 'succeeded' | 'partially_refunded' | 'refunded';

export interface PaymentDoc {
  _id: string;
  partner_id: string;
  workspace_id: string;
  plan_id: string | null;
  status: PaymentStatus;
  source: 'stripe' | 'manual';
  gross: number;
  processor_fee: number;
  platform_fee: number;
  partner_share: number;
  refunded: number;
  currency: string;
  /** `YYYY-MM` of paid_at (UTC): the period the payment belongs to. */
  period: string;
  paid_at: Date;
  external: ExternalIds;
  created_at: Date;
  /** The payout that carried its partner share; null until one did. */
  payout_id: string | null;
}

export interface RefundDoc {
  _id: string;
  partner_id: string;
  payment_id: string;
  workspace_id: string;
  amount: number;
  platform_fee_returned: number;
  partner_share_reversed: number;
  currency: string;
  period: string;
  refunded_at: Date;
  created_at: Date;
  source: 'stripe' | 'manual';
  payout_id: string | null;
}

export type PayoutStatus = 'pending' | 'paid';

export interface PayoutDoc {
  _id: string;
  partner_id: string;
  period: string;
  currency: string;
  status: PayoutStatus;
  payments: number;
  gross: number;
  processor_fees: number;
  platform_fees: number;
  partner_shares: number;
  refunds: number;
  refunded_partner_shares: number;
  amount: number;
  reference: string | null;
  paid_at: Date | null;
  created_at: Date;
}

/** A processor event applied (or ignored): its id makes every retry of it a no-op. */
export interface BillingEventDoc {
  /** `<partner id>:<event id>` */
  _id: string;
  partner_id: string;
  type: string;
  created: number;
  outcome: string;
  received_at: Date;
}

/** A refund that arrived before the payment it refunds: applied when the payment lands. */
export interface PendingRefundDoc {
  /** `<partner id>:<invoice or charge id>` */
  _id: string;
  partner_id: string;
  amount_refunded: number;
  refunded_at: Date;
}

/** The ledger: payments, refunds, payouts, and the processor events applied. Every query carries the partner id. */
export class LedgerStore {
  readonly payments: Collection<PaymentDoc>;
  readonly refunds: Collection<RefundDoc>;
  readonly payouts: Collection<PayoutDoc>;
  readonly billingEvents: Collection<BillingEventDoc>;
  readonly pendingRefunds: Collection<PendingRefundDoc>;

  constructor(db: Db) {
    this.payments = db.collection<PaymentDoc>('payments');
    this.refunds = db.collection<RefundDoc>('refunds');
    this.payouts = db.collection<PayoutDoc>('payouts');
    this.billingEvents = db.collection<BillingEventDoc>('billing_events');
    this.pendingRefunds = db.collection<PendingRefundDoc>('pending_refunds');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.payments.createIndexes([
        // GET /partner/payments: one period, newest first.
        { key: { partner_id: 1, period: 1, paid_at: -1, _id: -1 }, name: 'partner_period' },
        // One payment per processor invoice (invoice.paid and a retry of it, or invoice.payment_succeeded).
        { key: { partner_id: 1, 'external.invoice_id': 1 }, name: 'partner_invoice', unique: true, partialFilterExpression: { 'external.invoice_id': { $type: 'string' } } },
        // Plain (not partial) lookups by processor ids: every store's planner can use them.
        { key: { 'external.invoice_id': 1, partner_id: 1 }, name: 'invoice_lookup' },
        { key: { 'external.charge_id': 1, partner_id: 1 }, name: 'charge_lookup' },
        // A payment recorded by hand carries the partner's own reference, once.
        { key: { partner_id: 1, 'external.reference': 1 }, name: 'partner_reference', unique: true, partialFilterExpression: { 'external.reference': { $type: 'string' } } },
        // The payout job: a partner's shares not yet paid out, of closed periods (a bounded range, usually empty).
        { key: { partner_id: 1, payout_id: 1, paid_at: 1 }, name: 'partner_unpaid_out' },
      ]),
      this.refunds.createIndexes([
        { key: { partner_id: 1, payout_id: 1, refunded_at: 1 }, name: 'partner_unpaid_out' },
        { key: { payment_id: 1 }, name: 'payment' },
      ]),
      this.payouts.createIndexes([
        // Never computed twice: one payout per partner, period and currency.
        { key: { partner_id: 1, period: 1, currency: 1 }, name: 'partner_period_currency', unique: true },
      ]),
    ]);
  }

  /** One page of a period's payments, newest first by (paid_at, _id). */
  paymentPage(partnerId: string, period: string, filters: { workspaceId?: string }, after: { paid_at: Date; id: string } | null, limit: number): Promise<PaymentDoc[]> {
    const filter: Filter<PaymentDoc> = { partner_id: partnerId, period };
    if (filters.workspaceId) filter.workspace_id = filters.workspaceId;
    if (after) filter.$or = [{ paid_at: { $lt: after.paid_at } }, { paid_at: after.paid_at, _id: { $lt: after.id } }];
    return this.payments.find(filter).sort({ paid_at: -1, _id: -1 }).limit(limit).toArray();
  }

  payoutPage(partnerId: string, period: string, afterId: string | null, limit: number): Promise<PayoutDoc[]> {
    const filter: Filter<PayoutDoc> = { partner_id: partnerId, period };
    if (afterId !== null) filter._id = { $gt: afterId };
    return this.payouts.find(filter).sort({ _id: 1 }).limit(limit).toArray();
  }

  findPayment(partnerId: string, id: string, session?: ClientSession): Promise<PaymentDoc | null> {
    return this.payments.findOne({ _id: id, partner_id: partnerId }, session ? { session } : {});
  }

  /** The payment of a processor invoice, or of a charge when the refund names no invoice (two lookups, each indexed). */
  async findByExternal(partnerId: string, ids: { invoiceId: string | null; chargeId: string | null }, session: ClientSession): Promise<PaymentDoc | null> {
    const byInvoice = ids.invoiceId ? await this.payments.findOne({ 'external.invoice_id': ids.invoiceId, partner_id: partnerId }, { session }) : null;
    if (byInvoice || !ids.chargeId) return byInvoice;
    return this.payments.findOne({ 'external.charge_id': ids.chargeId, partner_id: partnerId }, { session });
  }
}
