// The worker's billing jobs, each a singleton under its own lease: the dunning sweep (past_due clients whose grace
// period ran out are suspended) and payouts (each closed period's partner shares, minus refunds, once).
import type { MongoClient } from 'mongodb';
import { Counter, type Registry } from 'prom-client';
import { newId } from '../platform/ids.ts';
import { inTransaction } from '../platform/mongo.ts';
import type { Logger } from '../platform/logger.ts';
import type { Lease } from '../platform/lease.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import { DEFAULT_GRACE_PERIOD_DAYS, type PartnerDoc, type PartnerStore } from '../tenancy/partner.store.ts';
import type { LedgerStore, PayoutDoc } from './ledger.store.ts';
import type { Applied, SubscriptionWriter } from './subscription.service.ts';
import { nextPeriod, periodBounds, periodKey } from './fees.ts';

export interface BillingJobsDeps {
  client: MongoClient;
  workspaces: WorkspaceStore;
  partners: PartnerStore;
  ledger: LedgerStore;
  subscriptions: SubscriptionWriter;
  dunningLease: Lease;
  payoutLease: Lease;
  logger: Logger;
  registry?: Registry;
  intervalMs: number;
  /** One day of a grace period, in ms (compressed in tests). */
  graceDayMs: number;
  onEvent?: () => void;
}

export class BillingJobs {
  private readonly d: BillingJobsDeps;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly suspended: Counter;
  private readonly payoutsComputed: Counter;

  constructor(deps: BillingJobsDeps) {
    this.d = deps;
    const registers = deps.registry ? [deps.registry] : [];
    this.suspended = new Counter({ name: 'linkplane_billing_dunning_suspensions_total', help: 'Clients suspended because their grace period ran out', registers });
    this.payoutsComputed = new Counter({ name: 'linkplane_billing_payouts_computed_total', help: 'Payouts computed for closed periods', registers });
  }

  start(): void {
    const tick = () => {
      this.running = this.runOnce()
        .catch((error: unknown) => this.d.logger.error({ err: error }, 'billing jobs failed; retrying at the next interval'))
        .finally(() => {
          this.running = null;
          if (this.timer !== null) this.timer = setTimeout(tick, this.d.intervalMs);
        });
    };
    // The first run waits one interval: a starting worker serves its consumers first.
    this.timer = setTimeout(tick, this.d.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    await Promise.all([this.d.dunningLease.release(), this.d.payoutLease.release()]);
  }

  async runOnce(now = new Date()): Promise<void> {
    if (await this.d.dunningLease.acquire(now)) await this.sweepDunning(now);
    if (await this.d.payoutLease.acquire(now)) await this.computePayouts(now);
  }

  /** Suspends every past_due client whose partner's grace period has run out since it became past_due. */
  async sweepDunning(now: Date): Promise<number> {
    const candidates = await this.d.workspaces.collection
      .find({ 'subscription.state': 'past_due', 'subscription.past_due_since': { $lte: now } } as never)
      .limit(1000)
      .toArray();
    const partners = new Map<string, PartnerDoc | null>();
    let count = 0;
    for (const client of candidates) {
      const partnerId = client.partner_id;
      if (!partnerId) continue;
      if (!partners.has(partnerId)) partners.set(partnerId, await this.d.partners.findById(partnerId));
      const partner = partners.get(partnerId);
      const since = client.subscription?.past_due_since;
      if (!partner || !since) continue;
      const graceMs = (partner.grace_period_days ?? DEFAULT_GRACE_PERIOD_DAYS) * this.d.graceDayMs;
      if (since.getTime() + graceMs > now.getTime()) continue;
      const applied: Applied = await inTransaction(this.d.client, async (session) => {
        const fresh = await this.d.workspaces.collection.findOne({ _id: client._id }, { session });
        if (!fresh) return { transition: null, client };
        return this.d.subscriptions.apply(fresh, partner, { kind: 'grace_elapsed' }, session, { now });
      });
      if (applied.transition) {
        count++;
        this.suspended.inc();
        await this.d.subscriptions.announce(applied);
      }
    }
    if (count > 0) this.d.onEvent?.();
    return count;
  }

  /**
   * For every closed period (before the current UTC month) with ledger rows not yet paid out: one payout per
   * partner, period and currency, computed once (a unique index), from the partner shares of payments made up to
   * the period's end and the refunds made up to it that no payout has carried yet. A row whose own period already
   * has a payout (a late event, a refund after the payout) is carried by the next closed period's payout.
   */
  async computePayouts(now: Date): Promise<number> {
    const current = periodKey(now);
    const closedBefore = periodBounds(current)!.start;
    const groups = new Map<string, { partnerId: string; currency: string; periods: Set<string> }>();
    const collect = (partnerId: string, rows: Array<{ _id: { currency: string; period: string } }>) => {
      for (const { _id } of rows) {
        const key = `${partnerId}\n${_id.currency}`;
        const group = groups.get(key) ?? { partnerId, currency: _id.currency, periods: new Set<string>() };
        group.periods.add(_id.period);
        groups.set(key, group);
      }
    };
    // Partner by partner, rows of closed periods only: each read is a bounded index range, empty once paid out.
    const byGroup = [{ $group: { _id: { currency: '$currency', period: '$period' } } }];
    for await (const partner of this.d.partners.collection.find({}, { projection: { _id: 1 } })) {
      collect(partner._id, await this.d.ledger.payments.aggregate<{ _id: { currency: string; period: string } }>([{ $match: { partner_id: partner._id, payout_id: null, paid_at: { $lt: closedBefore } } }, ...byGroup]).toArray());
      collect(partner._id, await this.d.ledger.refunds.aggregate<{ _id: { currency: string; period: string } }>([{ $match: { partner_id: partner._id, payout_id: null, refunded_at: { $lt: closedBefore } } }, ...byGroup]).toArray());
    }

    let computed = 0;
    for (const group of groups.values()) {
      const targets = new Set<string>();
      for (const period of group.periods) {
        // The first closed period at or after the row's own that has no payout yet.
        let target = period;
        while (target < current && (await this.d.ledger.payouts.countDocuments({ partner_id: group.partnerId, period: target, currency: group.currency }, { limit: 1 })) > 0) {
          target = nextPeriod(target);
        }
        if (target < current) targets.add(target);
      }
      for (const period of [...targets].sort()) {
        if (await this.computePayout(group.partnerId, group.currency, period, now)) computed++;
      }
    }
    return computed;
  }

  private async computePayout(partnerId: string, currency: string, period: string, now: Date): Promise<boolean> {
    const end = periodBounds(period)!.end;
    const payoutId = newId('po');
    try {
      await inTransaction(this.d.client, async (session) => {
        // Claim first, then sum what was claimed: a row written meanwhile is either claimed and counted, or neither.
        await this.d.ledger.payments.updateMany({ partner_id: partnerId, payout_id: null, paid_at: { $lt: end }, currency }, { $set: { payout_id: payoutId } }, { session });
        await this.d.ledger.refunds.updateMany({ partner_id: partnerId, payout_id: null, refunded_at: { $lt: end }, currency }, { $set: { payout_id: payoutId } }, { session });
        const [pay] = await this.d.ledger.payments
          .aggregate<{ n: number; gross: number; processor: number; platform: number; share: number }>(
            [
              { $match: { payout_id: payoutId } },
              { $group: { _id: null, n: { $sum: 1 }, gross: { $sum: '$gross' }, processor: { $sum: '$processor_fee' }, platform: { $sum: '$platform_fee' }, share: { $sum: '$partner_share' } } },
            ],
            { session },
          )
          .toArray();
        const [ref] = await this.d.ledger.refunds
          .aggregate<{ amount: number; reversed: number }>(
            [{ $match: { payout_id: payoutId } }, { $group: { _id: null, amount: { $sum: '$amount' }, reversed: { $sum: '$partner_share_reversed' } } }],
            { session },
          )
          .toArray();
        const shares = pay?.share ?? 0;
        const reversed = ref?.reversed ?? 0;
        const payout: PayoutDoc = {
          _id: payoutId,
          partner_id: partnerId,
          period,
          currency,
          status: 'pending',
          payments: pay?.n ?? 0,
          gross: pay?.gross ?? 0,
          processor_fees: pay?.processor ?? 0,
          platform_fees: pay?.platform ?? 0,
          partner_shares: shares,
          refunds: ref?.amount ?? 0,
          refunded_partner_shares: reversed,
          amount: shares - reversed,
          reference: null,
          paid_at: null,
          created_at: now,
        };
        await this.d.ledger.payouts.insertOne(payout, { session });
      });
    } catch (error) {
      // Another run computed it first (the unique index): nothing was claimed by this one.
      if ((error as { code?: unknown }).code === 11000) return false;
      throw error;
    }
    this.payoutsComputed.inc();
    this.d.logger.info({ partner_id: partnerId, period, currency, payout_id: payoutId }, 'payout computed');
    return true;
  }
}
