import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, startWorker, type RunningApi, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectInvalid, expectRefused, type Json } from '../helpers/http.ts';
import { aCharge, anEvent, anInvoice, deliver, deliverPayload, ENDPOINT_SECRET, nextCreated, sign, type StripeEvent } from '../helpers/stripe-events.ts';

describe('partner billing: Stripe-format ingestion, ledger, payouts (api and worker over real protocols)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let worker: RunningWorker;
  let tenants: Tenants;
  let partnerId: string;
  let key: string;
  const call = (method: string, path: string, body?: unknown) => callApi(api.url, method, path, { key, ...(body === undefined ? {} : { body }) });
  let counter = 0;

  /** A client with its own billing customer id, on a fresh plan. */
  async function aClient(): Promise<{ id: string; customer: string }> {
    const customer = `cus_${++counter}_${Date.now()}`;
    const res = await call('POST', '/partner/clients', { name: `Client ${counter}`, billing_customer_id: customer });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { id: res.body.id as string, customer };
  }

  const ledger = () => ({
    payments: api.infra.mongo.db.collection('payments'),
    refunds: api.infra.mongo.db.collection('refunds'),
  });
  const client = async (id: string) => (await call('GET', `/partner/clients/${id}`)).body;

  before(async () => {
    mongo = await startTestMongo();
    // The worker's own sweep is slowed right down: these tests run its jobs at chosen instants.
    const env = testEnv(mongo, { PARTNER_PLATFORM_FEE_BPS: '1000', BILLING_SWEEP_INTERVAL_MS: '3600000' });
    api = await startApi(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
    partnerId = await tenants.aPartner();
    key = (await tenants.aPartnerKey(partnerId)).key;
    expect((await call('PATCH', '/partner', { stripe_endpoint_secret: ENDPOINT_SECRET, processor_fee: { percent_bps: 290, fixed: 30 } })).status).to.equal(200);
  });

  after(async () => {
    await tenants.close();
    await worker.stop();
    await api.stop();
    await mongo.stop();
  });

  describe('signatures', () => {
    it('a forged, stale, missing or mismatched signature is 400 and changes nothing', async () => {
      const { id, customer } = await aClient();
      const event = anEvent('invoice.paid', anInvoice(customer));
      const payload = JSON.stringify(event);
      const forged = await deliver(api.url, partnerId, event, 'whsec_notthepartnerssecret');
      expect(forged.status).to.equal(400);
      expect(forged.body.error!.code).to.equal('invalid_request');
      const stale = await deliver(api.url, partnerId, event, ENDPOINT_SECRET, { timestamp: Math.floor(Date.now() / 1000) - 301 });
      expect(stale.status).to.equal(400);
      expect((await deliver(api.url, partnerId, event, ENDPOINT_SECRET, { signature: '' })).status).to.equal(400);
      // Signed for other bytes.
      const other = sign(payload.replace('4900', '4901'), ENDPOINT_SECRET);
      expect((await deliver(api.url, partnerId, event, ENDPOINT_SECRET, { signature: other })).status).to.equal(400);
      expect(await ledger().payments.countDocuments({ workspace_id: id })).to.equal(0);
      expect((await client(id)).status).to.equal('pending');
      // The same event, signed properly, still applies: the failures recorded nothing about its id.
      const ok = await deliver(api.url, partnerId, event, ENDPOINT_SECRET);
      expect(ok).to.deep.equal({ status: 200, body: { received: true, duplicate: false, outcome: 'applied' } });
    });

    it('a signature 299 seconds old is accepted (300-second tolerance)', async () => {
      const { customer } = await aClient();
      const res = await deliver(api.url, partnerId, anEvent('invoice.paid', anInvoice(customer)), ENDPOINT_SECRET, { timestamp: Math.floor(Date.now() / 1000) - 299 });
      expect(res.status).to.equal(200);
    });

    it('an unknown partner is 404, a partner without a secret is 503 not_configured', async () => {
      const event = anEvent('invoice.paid', anInvoice('cus_x'));
      expect((await deliver(api.url, 'ptr_doesnotexist0000000', event, ENDPOINT_SECRET)).status).to.equal(404);
      const bare = await tenants.aPartner();
      const res = await deliver(api.url, bare, event, ENDPOINT_SECRET);
      expect(res.status).to.equal(503);
      expect(res.body.error!.code).to.equal('not_configured');
    });
  });

  describe('exactly once, in any order', () => {
    it('the same event delivered twice changes the ledger once', async () => {
      const { id, customer } = await aClient();
      const event = anEvent('invoice.paid', anInvoice(customer, { amount_paid: 10_000 }));
      const first = await deliver(api.url, partnerId, event, ENDPOINT_SECRET);
      const second = await deliver(api.url, partnerId, event, ENDPOINT_SECRET);
      const [third, fourth] = await Promise.all([deliver(api.url, partnerId, event, ENDPOINT_SECRET), deliver(api.url, partnerId, event, ENDPOINT_SECRET)]);
      expect(first.body.duplicate).to.equal(false);
      for (const r of [second, third, fourth]) expect(r).to.deep.equal({ status: 200, body: { received: true, duplicate: true, outcome: 'duplicate' } });
      const rows = await ledger().payments.find({ workspace_id: id }).toArray();
      expect(rows).to.have.length(1);
      // 10 000 gross: processor 290 bps + 30 = 320, platform 10 % = 1000, partner 8680.
      expect(rows[0]).to.include({ gross: 10_000, processor_fee: 320, platform_fee: 1000, partner_share: 8680, currency: 'USD', status: 'succeeded' });
      expect((await client(id)).status).to.equal('subscribed');
    });

    it('another event for an invoice already paid (invoice.payment_succeeded) adds no second payment', async () => {
      const { id, customer } = await aClient();
      const invoice = anInvoice(customer);
      await deliver(api.url, partnerId, anEvent('invoice.paid', invoice), ENDPOINT_SECRET);
      const again = await deliver(api.url, partnerId, anEvent('invoice.payment_succeeded', invoice), ENDPOINT_SECRET);
      expect(again.body.outcome).to.equal('applied: payment already recorded');
      expect(await ledger().payments.countDocuments({ workspace_id: id })).to.equal(1);
    });

    it('a payment failure older than the payment that followed it does not move the state back', async () => {
      const { id, customer } = await aClient();
      const failedInvoice = anInvoice(customer);
      const failed = anEvent('invoice.payment_failed', failedInvoice);
      const paid = anEvent('invoice.paid', anInvoice(customer), { created: nextCreated() });
      await deliver(api.url, partnerId, paid, ENDPOINT_SECRET);
      await deliver(api.url, partnerId, failed, ENDPOINT_SECRET);
      expect((await client(id)).status).to.equal('subscribed');
    });

    it('a payment failure for an invoice already paid is ignored, whatever its timestamp', async () => {
      const { id, customer } = await aClient();
      const invoice = anInvoice(customer);
      await deliver(api.url, partnerId, anEvent('invoice.paid', invoice, { created: nextCreated() }), ENDPOINT_SECRET);
      const late = await deliver(api.url, partnerId, anEvent('invoice.payment_failed', invoice, { created: nextCreated() }), ENDPOINT_SECRET);
      expect(late.body.outcome).to.equal('ignored: the invoice is already paid');
      expect((await client(id)).status).to.equal('subscribed');
    });

    it('a refund that arrives before its payment is applied when the payment lands, once', async () => {
      const { id, customer } = await aClient();
      const invoice = anInvoice(customer, { amount_paid: 10_000 });
      const refund = anEvent('charge.refunded', aCharge(invoice, 4000));
      expect((await deliver(api.url, partnerId, refund, ENDPOINT_SECRET)).body.outcome).to.equal('deferred: waiting for the payment');
      await deliver(api.url, partnerId, anEvent('invoice.paid', invoice), ENDPOINT_SECRET);
      await deliver(api.url, partnerId, refund, ENDPOINT_SECRET);
      const payment = await ledger().payments.findOne({ workspace_id: id });
      expect(payment).to.include({ refunded: 4000, status: 'partially_refunded' });
      const refunds = await ledger().refunds.find({ payment_id: payment!._id }).toArray();
      expect(refunds).to.have.length(1);
      // The platform returns 10 % of 4000 (its fee pro rata); the partner bears the rest.
      expect(refunds[0]).to.include({ amount: 4000, platform_fee_returned: 400, partner_share_reversed: 3600 });
    });

    it('cumulative refunds delivered in reverse order refund the larger amount once', async () => {
      const { id, customer } = await aClient();
      const invoice = anInvoice(customer, { amount_paid: 10_000 });
      await deliver(api.url, partnerId, anEvent('invoice.paid', invoice), ENDPOINT_SECRET);
      const small = anEvent('charge.refunded', aCharge(invoice, 1000));
      const full = anEvent('charge.refunded', aCharge(invoice, 10_000));
      await deliver(api.url, partnerId, full, ENDPOINT_SECRET);
      expect((await deliver(api.url, partnerId, small, ENDPOINT_SECRET)).body.outcome).to.equal('applied: refund already recorded');
      const payment = await ledger().payments.findOne({ workspace_id: id });
      expect(payment).to.include({ refunded: 10_000, status: 'refunded' });
      expect(await ledger().refunds.countDocuments({ payment_id: payment!._id })).to.equal(1);
    });

    it('subscription status events move the state; deleted cancels', async () => {
      const { id, customer } = await aClient();
      const sub = { id: 'sub_status', object: 'subscription', customer };
      await deliver(api.url, partnerId, anEvent('customer.subscription.updated', { ...sub, status: 'active' }), ENDPOINT_SECRET);
      expect((await client(id)).status).to.equal('subscribed');
      await deliver(api.url, partnerId, anEvent('customer.subscription.updated', { ...sub, status: 'past_due' }), ENDPOINT_SECRET);
      expect((await client(id)).status).to.equal('past_due');
      await deliver(api.url, partnerId, anEvent('customer.subscription.updated', { ...sub, status: 'unpaid' }), ENDPOINT_SECRET);
      expect((await client(id)).subscription).to.deep.include({ state: 'suspended', suspended_reason: 'processor', external_subscription_id: 'sub_status' });
      await deliver(api.url, partnerId, anEvent('customer.subscription.deleted', { ...sub, status: 'canceled' }), ENDPOINT_SECRET);
      expect((await client(id)).status).to.equal('canceled');
    });

    it('an event for no client of the partner, or of an unused type, is acknowledged and ignored', async () => {
      const unknown = await deliver(api.url, partnerId, anEvent('invoice.paid', anInvoice('cus_nobody')), ENDPOINT_SECRET);
      expect(unknown).to.deep.include({ status: 200 });
      expect(unknown.body.outcome).to.match(/^ignored: no client/);
      const other = await deliver(api.url, partnerId, anEvent('customer.created', { id: 'cus_new', object: 'customer' }), ENDPOINT_SECRET);
      expect(other.body.outcome).to.equal('ignored: customer.created is not used');
    });
  });

  describe('events that fail validation: acknowledged as ignored, counted, and nothing changes', () => {
    const ignoredCount = async (): Promise<number> => {
      const text = await (await fetch(`${api.url}/metrics`)).text();
      return text
        .split('\n')
        .filter((line) => line.startsWith('linkplane_billing_events_ignored_total{'))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    };

    /** Each case: the signed payload for a client's customer id (and, for refunds, an invoice already paid). */
    const invoiceCases: Array<[string, (customer: string) => unknown]> = [
      ['a float amount', (c) => anEvent('invoice.paid', anInvoice(c, { amount_paid: 4900.5 }))],
      ['a string amount', (c) => anEvent('invoice.paid', anInvoice(c, { amount_paid: '4900' }))],
      ['a negative amount', (c) => anEvent('invoice.paid', anInvoice(c, { amount_paid: -4900 }))],
      ['a null amount', (c) => anEvent('invoice.paid', anInvoice(c, { amount_paid: null }))],
      ['no amount', (c) => anEvent('invoice.paid', (({ amount_paid: _, ...rest }) => rest)(anInvoice(c)))],
      ['a huge amount', (c) => anEvent('invoice.paid', anInvoice(c, { amount_paid: 1e15 }))],
      ['an amount beyond safe integers', (c) => anEvent('invoice.payment_succeeded', anInvoice(c, { amount_paid: 2 ** 60 }))],
      ['currency "xyz"', (c) => anEvent('invoice.paid', anInvoice(c, { currency: 'xyz' }))],
      ['no currency', (c) => anEvent('invoice.paid', anInvoice(c, { currency: null }))],
      ['a float processor fee', (c) => anEvent('invoice.paid', anInvoice(c, { charge: { id: 'ch_fee', balance_transaction: { fee: 1.5 } } }))],
      ['a status change without a string status', (c) => anEvent('customer.subscription.updated', { id: 'sub_x', object: 'subscription', customer: c, status: 7 })],
      ['no data.object', (c) => ({ ...anEvent('invoice.paid', anInvoice(c)), data: {} })],
      ['data.object null', (c) => ({ ...anEvent('invoice.paid', anInvoice(c)), data: { object: null } })],
      ['data.object an array', (c) => ({ ...anEvent('invoice.paid', anInvoice(c)), data: { object: [anInvoice(c)] } })],
      ['no data', (c) => (({ data: _, ...rest }) => rest)(anEvent('invoice.paid', anInvoice(c)))],
      ['no event id', (c) => (({ id: _, ...rest }) => rest)(anEvent('invoice.paid', anInvoice(c)))],
      ['a string created', (c) => ({ ...anEvent('invoice.paid', anInvoice(c)), created: 'yesterday' })],
      ['an array body', (c) => [anEvent('invoice.paid', anInvoice(c))]],
      ['a string body', () => 'invoice.paid'],
      ['a null body', () => null],
    ];

    for (const [name, build] of invoiceCases) {
      it(`an event with ${name} answers 200 ignored and changes nothing`, async () => {
        const { id, customer } = await aClient();
        const before = await ignoredCount();
        const payload = build(customer);
        const res = await deliverPayload(api.url, partnerId, JSON.stringify(payload), ENDPOINT_SECRET);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body).to.include({ received: true, duplicate: false });
        expect(res.body.outcome).to.match(/^ignored: /);
        expect(await ledger().payments.countDocuments({ workspace_id: id })).to.equal(0);
        expect((await client(id)).status).to.equal('pending');
        const eventId = (payload as Partial<StripeEvent> | null)?.id;
        if (typeof eventId === 'string') expect(await api.infra.mongo.db.collection('billing_events').countDocuments({ _id: `${partnerId}:${eventId}` as never })).to.equal(0);
        expect(await ignoredCount()).to.equal(before + 1);
      });
    }

    const refundCases: Array<[string, Record<string, unknown>]> = [
      ['a float amount_refunded', { amount_refunded: 100.5 }],
      ['a string amount_refunded', { amount_refunded: '1000' }],
      ['a negative amount_refunded', { amount_refunded: -1000 }],
      ['a null amount_refunded', { amount_refunded: null }],
      ['a huge amount_refunded', { amount_refunded: 1e15 }],
      ['currency "xyz"', { currency: 'xyz' }],
    ];
    for (const [name, override] of refundCases) {
      it(`a charge.refunded with ${name} answers 200 ignored and refunds nothing`, async () => {
        const { id, customer } = await aClient();
        const invoice = anInvoice(customer, { amount_paid: 10_000 });
        expect((await deliver(api.url, partnerId, anEvent('invoice.paid', invoice), ENDPOINT_SECRET)).body.outcome).to.equal('applied');
        const before = await ignoredCount();
        const res = await deliver(api.url, partnerId, anEvent('charge.refunded', { ...aCharge(invoice, 1000), ...override }), ENDPOINT_SECRET);
        expect(res.status).to.equal(200);
        expect(res.body.outcome).to.match(/^ignored: /);
        expect(await ledger().payments.findOne({ workspace_id: id })).to.include({ refunded: 0, status: 'succeeded' });
        expect(await ledger().refunds.countDocuments({ workspace_id: id })).to.equal(0);
        expect(await api.infra.mongo.db.collection('pending_refunds').countDocuments({ partner_id: partnerId, amount_refunded: override.amount_refunded as never })).to.equal(0);
        expect(await ignoredCount()).to.equal(before + 1);
      });
    }

    it('a refund in another currency than its payment is ignored; a payment by hand in "XYZ" is refused like a conversion', async () => {
      const { id, customer } = await aClient();
      const invoice = anInvoice(customer, { amount_paid: 10_000 });
      await deliver(api.url, partnerId, anEvent('invoice.paid', invoice), ENDPOINT_SECRET);
      const res = await deliver(api.url, partnerId, anEvent('charge.refunded', { ...aCharge(invoice, 1000), currency: 'eur' }), ENDPOINT_SECRET);
      expect(res.body.outcome).to.equal('ignored: the refund is in EUR, the payment in USD');
      expect(await ledger().payments.findOne({ workspace_id: id })).to.include({ refunded: 0 });
      expectInvalid(await call('POST', '/partner/payments', { client_id: id, amount: 100, currency: 'XYZ' }), 'currency');
    });

    it('a lower-case ISO 4217 currency, as Stripe sends it, is accepted and stored upper case', async () => {
      const { id, customer } = await aClient();
      const res = await deliver(api.url, partnerId, anEvent('invoice.paid', anInvoice(customer, { currency: 'jpy', amount_paid: 500 })), ENDPOINT_SECRET);
      expect(res.body.outcome).to.equal('applied');
      expect(await ledger().payments.findOne({ workspace_id: id })).to.include({ currency: 'JPY', gross: 500 });
    });
  });

  describe('payments and payouts', () => {
    it('period is validated (422 naming period); limit is at most 100', async () => {
      for (const q of ['?period=2026-13', '?period=', '?period=2026-1', '?period=26-11', '?period=2026-11-01']) {
        expectInvalid(await call('GET', `/partner/payments${q}`), 'period');
        expectInvalid(await call('GET', `/partner/payouts${q}`), 'period');
      }
      expectInvalid(await call('GET', '/partner/payments?period=2026-11&limit=101'), 'limit');
      expectRefused(await call('GET', '/partner/payments?period=2026-11&cursor=bogus'), 400, 'invalid_request');
    });

    it('pages of at most 100 rows; the cursor is stable while payments arrive; gross = fees + share on every row', async () => {
      const { id } = await aClient();
      const period = '2025-03';
      const base = Date.UTC(2025, 2, 10);
      for (let i = 0; i < 150; i++) {
        const res = await call('POST', '/partner/payments', { client_id: id, amount: 1000 + i * 37, currency: 'EUR', processor_fee: i % 7, paid_at: new Date(base + i * 60_000).toISOString() });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
      }
      const first = await call('GET', `/partner/payments?period=${period}`);
      expect(first.body.data).to.have.length(100);
      expect((first.body.pagination as Json).has_more).to.equal(true);
      // Payments arriving meanwhile, newer and older than the position, do not shift what is still to read.
      for (const minutes of [500, -1]) {
        await call('POST', '/partner/payments', { client_id: id, amount: 999, currency: 'EUR', paid_at: new Date(base + minutes * 60_000).toISOString() });
      }
      const second = await call('GET', `/partner/payments?period=${period}&cursor=${(first.body.pagination as Json).next_cursor as string}`);
      const rows = [...(first.body.data as Json[]), ...(second.body.data as Json[])];
      const ids = rows.map((r) => r.id);
      expect(new Set(ids).size).to.equal(ids.length);
      const original = (rows as Array<{ gross: number; paid_at: string }>).filter((r) => r.gross !== 999);
      expect(original).to.have.length(150);
      for (const row of rows as Array<Record<string, number>>) {
        expect(row.gross).to.equal(row.processor_fee! + row.platform_fee! + row.partner_share!);
        for (const field of ['gross', 'processor_fee', 'platform_fee', 'partner_share', 'refunded']) expect(Number.isInteger(row[field])).to.equal(true);
      }
    });

    it('records refunds by hand, never beyond what is left', async () => {
      const { id } = await aClient();
      const payment = (await call('POST', '/partner/payments', { client_id: id, amount: 5000, currency: 'USD' })).body;
      const refund = await call('POST', `/partner/payments/${payment.id as string}/refunds`, { amount: 2000 });
      expect(refund.status).to.equal(201);
      expect(refund.body.payment).to.deep.include({ refunded: 2000, status: 'partially_refunded' });
      expectInvalid(await call('POST', `/partner/payments/${payment.id as string}/refunds`, { amount: 3001 }), 'amount');
      expectInvalid(await call('POST', '/partner/payments', { client_id: 'ws_notmine000', amount: 1, currency: 'USD' }), 'client_id');
    });

    it('ten parallel 100-unit refunds of a 1,000 payment all answer 201 (never 500), each in the ledger once', async () => {
      const { id } = await aClient();
      const payment = (await call('POST', '/partner/payments', { client_id: id, amount: 1000, currency: 'USD' })).body;
      const replies = await Promise.all(Array.from({ length: 10 }, () => call('POST', `/partner/payments/${payment.id as string}/refunds`, { amount: 100 })));
      // The ten fit the payment exactly, and an attempt is retried only when another of them committed: all ten land.
      expect(replies.map((r) => r.status), JSON.stringify(replies.map((r) => r.body))).to.deep.equal(Array(10).fill(201));
      const refunds = replies.map((r) => r.body.refund as Json);
      for (const refund of refunds) expect(refund.amount).to.equal(100);
      // Each answer saw its own cumulative amount: 100, 200, … 1000, once each.
      const seen = replies.map((r) => (r.body.payment as Json).refunded as number).sort((a, b) => a - b);
      expect(seen).to.deep.equal(Array.from({ length: 10 }, (_, i) => 100 * (i + 1)));
      const row = await ledger().payments.findOne({ workspace_id: id });
      expect(row).to.include({ refunded: 1000, status: 'refunded' });
      const rows = await ledger().refunds.find({ payment_id: payment.id }).toArray();
      expect(rows.map((r) => r._id).sort()).to.deep.equal(refunds.map((r) => r.id).sort());
      expect(rows.reduce((sum, r) => sum + (r.amount as number), 0)).to.equal(1000);
      // A further refund finds nothing left.
      expectInvalid(await call('POST', `/partner/payments/${payment.id as string}/refunds`, { amount: 1 }), 'amount');
    });

    it('payouts: computed once per closed period, a refund after a payout carried into the next, pending → paid once', async () => {
      // A partner of its own: the other tests' payments must not land in these payouts.
      partnerId = await tenants.aPartner();
      key = (await tenants.aPartnerKey(partnerId)).key;
      await call('PATCH', '/partner', { stripe_endpoint_secret: ENDPOINT_SECRET });
      const { id, customer } = await aClient();
      const paidAt = Math.floor(Date.UTC(2025, 5, 15) / 1000);
      const invoice = anInvoice(customer, { amount_paid: 20_000, currency: 'gbp', status_transitions: { paid_at: paidAt } });
      await deliver(api.url, partnerId, anEvent('invoice.paid', invoice), ENDPOINT_SECRET);
      const jobs = worker.worker.billing;
      await jobs.computePayouts(new Date(Date.UTC(2025, 5, 30)));
      expect((await call('GET', '/partner/payouts?period=2025-06')).body.data, 'June is still open on June 30').to.have.length(0);
      await jobs.computePayouts(new Date(Date.UTC(2025, 6, 2)));
      await jobs.computePayouts(new Date(Date.UTC(2025, 6, 3)));
      const june = (await call('GET', '/partner/payouts?period=2025-06')).body.data as Json[];
      const juneGbp = june;
      expect(juneGbp).to.have.length(1);
      // 20 000: processor 290 bps + 30 = 610, platform 10 % = 2000, partner 17 390.
      expect(juneGbp[0]).to.deep.include({ status: 'pending', payments: 1, gross: 20_000, partner_shares: 17_390, refunds: 0, amount: 17_390 });
      // Refunded in July, after June's payout: July's payout carries it.
      const refundAt = Math.floor(Date.UTC(2025, 6, 5) / 1000);
      await deliver(api.url, partnerId, anEvent('charge.refunded', aCharge(invoice, 5000), { created: refundAt }), ENDPOINT_SECRET);
      await jobs.computePayouts(new Date(Date.UTC(2025, 7, 1)));
      const july = (await call('GET', '/partner/payouts?period=2025-07')).body.data as Json[];
      expect(july).to.have.length(1);
      expect(july[0]).to.deep.include({ payments: 0, partner_shares: 0, refunds: 5000, refunded_partner_shares: 4500, amount: -4500 });
      expect(await ledger().payments.countDocuments({ workspace_id: id, payout_id: juneGbp[0]!.id as string })).to.equal(1);
      const payoutId = juneGbp[0]!.id as string;
      const paid = await call('POST', `/partner/payouts/${payoutId}/pay`, { reference: 'wire-2025-06' });
      expect(paid.body).to.deep.include({ status: 'paid', reference: 'wire-2025-06' });
      expectRefused(await call('POST', `/partner/payouts/${payoutId}/pay`, { reference: 'again' }), 409, 'conflict');
      // Running the job again computes nothing twice.
      await jobs.computePayouts(new Date(Date.UTC(2025, 7, 2)));
      expect((await call('GET', '/partner/payouts?period=2025-06')).body.data).to.have.length(1);
      expect((await call('GET', '/partner/payouts?period=2025-07')).body.data).to.have.length(1);
    });
  });
});
