import { expect } from 'chai';
import fc from 'fast-check';
import { estimateProcessorFee, nextPeriod, periodBounds, splitPayment, splitRefund } from '../../src/partner/fees.ts';
import { eventFor, transition, type SubscriptionState, type SuspendReason } from '../../src/tenancy/subscription.ts';

const at = (state: SubscriptionState, suspended_reason: SuspendReason | null = null) => ({ state, suspended_reason });

describe('partner billing arithmetic (integer minor units)', () => {
  it('gross = processor fee + platform fee + partner share, none negative, for any amounts and rates', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000_000_000 }), fc.integer({ min: 0, max: 2_000_000_000_000 }), fc.integer({ min: 0, max: 10_000 }), (gross, fee, bps) => {
        const s = splitPayment(gross, fee, bps);
        expect(s.processor_fee + s.platform_fee + s.partner_share).to.equal(gross);
        for (const v of [s.processor_fee, s.platform_fee, s.partner_share]) expect(Number.isSafeInteger(v) && v >= 0).to.equal(true);
      }),
    );
  });

  it('rounds the platform fee down and the estimated processor fee half up', () => {
    expect(splitPayment(999, 0, 1000).platform_fee).to.equal(99);
    expect(estimateProcessorFee(1000, { percent_bps: 290, fixed: 30 })).to.equal(59);
    expect(estimateProcessorFee(50, { percent_bps: 100, fixed: 0 })).to.equal(1);
    expect(estimateProcessorFee(10, { percent_bps: 290, fixed: 30 }), 'never more than the gross').to.equal(10);
  });

  it('refunds in many parts return the same platform fee as one refund of their total', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 0, max: 10_000 }), fc.array(fc.integer({ min: 1, max: 1_000_000 }), { maxLength: 10 }), (gross, bps, parts) => {
        const payment = splitPayment(gross, 0, bps);
        let refunded = 0;
        let returned = 0;
        for (const part of parts) {
          const amount = Math.min(part, gross - refunded);
          if (amount <= 0) break;
          const r = splitRefund(payment, refunded, amount);
          expect(r.platform_fee_returned + r.partner_share_reversed).to.equal(amount);
          refunded += amount;
          returned += r.platform_fee_returned;
        }
        expect(returned).to.equal(refunded === 0 ? 0 : splitRefund(payment, 0, refunded).platform_fee_returned);
        expect(returned).to.be.at.most(payment.platform_fee);
      }),
    );
  });

  it('periods are YYYY-MM calendar months in UTC', () => {
    expect(periodBounds('2026-12')).to.deep.equal({ start: new Date('2026-12-01T00:00:00Z'), end: new Date('2027-01-01T00:00:00Z') });
    expect(nextPeriod('2026-12')).to.equal('2027-01');
    for (const bad of ['2026-13', '2026-00', '2026-1', '26-01', '2026-01-01']) expect(periodBounds(bad)).to.equal(null);
  });
});

describe('subscription state machine', () => {
  it('pending → subscribed → past_due → suspended → subscribed, each with its event', () => {
    expect(transition(at('pending'), { kind: 'paid' })).to.deep.equal({ from: 'pending', to: 'subscribed', reason: null });
    expect(transition(at('subscribed'), { kind: 'payment_failed' })).to.deep.equal({ from: 'subscribed', to: 'past_due', reason: null });
    expect(transition(at('past_due'), { kind: 'grace_elapsed' })).to.deep.equal({ from: 'past_due', to: 'suspended', reason: 'dunning' });
    expect(transition(at('suspended', 'dunning'), { kind: 'paid' })).to.deep.equal({ from: 'suspended', to: 'subscribed', reason: null });
    expect(['subscribed', 'past_due', 'suspended'].map((s) => eventFor(s as SubscriptionState))).to.deep.equal(['workspace.subscribed', 'workspace.past_due', 'workspace.suspended']);
    expect(eventFor('canceled')).to.equal(null);
  });

  it('a payment does not lift a suspension made by hand; reactivation does', () => {
    expect(transition(at('suspended', 'manual'), { kind: 'paid' })).to.equal(null);
    expect(transition(at('suspended', 'manual'), { kind: 'reactivate' })).to.deep.include({ to: 'subscribed' });
  });

  it('refuses moves the machine does not have', () => {
    expect(transition(at('subscribed'), { kind: 'grace_elapsed' })).to.equal(null);
    expect(transition(at('subscribed'), { kind: 'reactivate' })).to.equal(null);
    expect(transition(at('suspended', 'dunning'), { kind: 'payment_failed' })).to.equal(null);
    expect(transition(at('canceled'), { kind: 'paid' })).to.equal(null);
    expect(transition(at('canceled'), { kind: 'suspend' })).to.equal(null);
    expect(transition(at('subscribed'), { kind: 'paid' }), 'no change, no event').to.equal(null);
  });

  it('reads Stripe subscription statuses', () => {
    expect(transition(at('past_due'), { kind: 'processor_status', status: 'active' })).to.deep.include({ to: 'subscribed' });
    expect(transition(at('subscribed'), { kind: 'processor_status', status: 'past_due' })).to.deep.include({ to: 'past_due' });
    expect(transition(at('past_due'), { kind: 'processor_status', status: 'unpaid' })).to.deep.include({ to: 'suspended', reason: 'processor' });
    expect(transition(at('subscribed'), { kind: 'processor_status', status: 'canceled' })).to.deep.include({ to: 'canceled' });
    expect(transition(at('pending'), { kind: 'processor_status', status: 'incomplete' })).to.equal(null);
  });
});
