// The partner lifecycle end to end, over HTTP, with processor events signed by the official stripe package and
// every partner event received by a real webhook receiver that checks its signature (spec 6.3, written here from
// the spec with node:crypto).
import { expect } from 'chai';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, startWorker, type RunningApi, type RunningRedirect, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectRefused, type Json } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import { aCharge, anEvent, anInvoice, deliver, ENDPOINT_SECRET } from '../helpers/stripe-events.ts';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  valid: boolean;
}

function signatureValid(rawBody: string, header: string | undefined, secret: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!match) return false;
  if (Math.abs(Date.now() / 1000 - Number(match[1])) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${rawBody}`, 'utf8').digest();
  return timingSafeEqual(Buffer.from(match[2]!, 'hex'), expected);
}

const PARTNER_EVENTS = ['workspace.subscribed', 'workspace.past_due', 'workspace.suspended', 'payment.succeeded', 'payment.refunded'];

describe('partner lifecycle end to end: plan → client → paid → past_due → suspended → paid → refund → payout', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let worker: RunningWorker;
  let redirect: RunningRedirect;
  let tenants: Tenants;
  let receiver: Server;
  let secret = '';
  const received: Received[] = [];

  before(async () => {
    mongo = await startTestMongo();
    const { env } = await shortLinkEnv(mongo, {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      // One "day" of grace is 300 ms here, and the worker looks every 50 ms.
      BILLING_GRACE_DAY_MS: '300',
      BILLING_SWEEP_INTERVAL_MS: '50',
      PARTNER_PLATFORM_FEE_BPS: '1500',
    });
    api = await startApi(env);
    worker = await startWorker(env);
    redirect = await startRedirect(env);
    tenants = await Tenants.open(mongo);
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        received.push({ headers: req.headers, body, valid: signatureValid(body, req.headers['x-service-signature'] as string | undefined, secret) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });

  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await tenants.close();
    await redirect.stop();
    await worker.stop();
    await api.stop();
    await mongo.stop();
  });

  const events = (type: string) => received.filter((r) => r.headers['x-service-event'] === type).map((r) => JSON.parse(r.body) as { id: string; type: string; data: Json });
  const waitFor = (type: string, count: number) => until(() => events(type).length >= count && events(type), 10_000, `${count} × ${type}`);

  it('runs the whole lifecycle, every partner event delivered and signed', async () => {
    const partnerId = await tenants.aPartner();
    const pk = (await tenants.aPartnerKey(partnerId)).key;
    const p = (method: string, path: string, body?: unknown) => callApi(api.url, method, path, { key: pk, ...(body === undefined ? {} : { body }) });

    // The partner's webhook endpoint, for its own events and its clients' link events.
    const port = (receiver.address() as AddressInfo).port;
    const endpoint = await p('POST', '/webhooks', { url: `http://127.0.0.1:${port}/hooks`, events: [...PARTNER_EVENTS, 'link.created'] });
    expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);
    secret = endpoint.body.secret as string;
    expect((await p('PATCH', '/partner', { stripe_endpoint_secret: ENDPOINT_SECRET, grace_period_days: 1 })).status).to.equal(200);

    // Plan → client → a key for the client → a short link.
    const plan = await p('POST', '/partner/plans', {
      name: 'Growth',
      price: { amount: 10_000, currency: 'USD', interval: 'month' },
      limits: { links: 1000, domains: 2, tracked_clicks_per_month: 100_000, rate_limit_per_minute: 600 },
      capabilities: ['password', 'webhooks', 'targeting'],
    });
    expect(plan.status).to.equal(201);
    const created = await p('POST', '/partner/clients', { name: 'Bakery', plan: plan.body.id, billing_customer_id: 'cus_bakery' });
    expect(created.body).to.deep.include({ status: 'pending', plan: plan.body.id });
    const clientId = created.body.id as string;
    const ck = (await p('POST', `/partner/clients/${clientId}/keys`, { name: 'partner ops' })).body.key as string;
    const link = await callApi(api.url, 'POST', '/links', { key: ck, body: { url: 'https://bakery.example/menu' } });
    expect(link.status).to.equal(201);
    const shortUrl = link.body.short_url as string;
    const visit = () => fetch(shortUrl, { redirect: 'manual' });
    expect((await visit()).status).to.equal(302);
    await waitFor('link.created', 1);

    // First invoice paid → subscribed (workspace.subscribed) and a payment (payment.succeeded with the breakdown).
    const first = anInvoice('cus_bakery', { amount_paid: 10_000 });
    expect((await deliver(api.url, partnerId, anEvent('invoice.paid', first), ENDPOINT_SECRET)).status).to.equal(200);
    expect((await p('GET', `/partner/clients/${clientId}`)).body.status).to.equal('subscribed');
    const [subscribed] = await waitFor('workspace.subscribed', 1);
    expect(subscribed!.data).to.deep.include({ client_id: clientId, state: 'subscribed', previous_state: 'pending', plan_id: plan.body.id });
    const [succeeded] = await waitFor('payment.succeeded', 1);
    // 10 000: processor 290 bps + 30 = 320, platform 15 % = 1500, partner 8180.
    expect(succeeded!.data).to.deep.include({ client_id: clientId, gross: 10_000, processor_fee: 320, platform_fee: 1500, partner_share: 8180, currency: 'USD' });

    // The next invoice fails → past_due; the grace period runs out → suspended by dunning.
    const second = anInvoice('cus_bakery', { amount_paid: 10_000 });
    await deliver(api.url, partnerId, anEvent('invoice.payment_failed', second), ENDPOINT_SECRET);
    const [pastDue] = await waitFor('workspace.past_due', 1);
    expect(pastDue!.data).to.deep.include({ client_id: clientId, state: 'past_due', previous_state: 'subscribed' });
    const [suspended] = await waitFor('workspace.suspended', 1);
    expect(suspended!.data).to.deep.include({ client_id: clientId, state: 'suspended', previous_state: 'past_due', reason: 'dunning' });
    const client = (await p('GET', `/partner/clients/${clientId}`)).body;
    expect(client.subscription).to.deep.include({ state: 'suspended', suspended_reason: 'dunning' });

    // Suspended: writes refused with a reason, reads allowed; links keep redirecting (the default setting) …
    const refused = await callApi(api.url, 'POST', '/links', { key: ck, body: { url: 'https://bakery.example/cakes' } });
    expectRefused(refused, 403, 'forbidden');
    expect(refused.body.error!.message).to.include('suspended');
    expect((await callApi(api.url, 'GET', '/links', { key: ck })).status).to.equal(200);
    expect((await visit()).status).to.equal(302);
    // … until the partner chooses the suspended page: the redirect applies it on the broadcast, not its cache TTL.
    await p('PATCH', '/partner', { suspended_links: 'suspended_page' });
    const page = await until(async () => {
      const res = await visit();
      return res.status === 503 && res;
    }, 5_000, 'the suspended page');
    expect(await page.text()).to.include('Link unavailable');

    // The failed invoice is paid → subscribed again; writes and redirects are back.
    await deliver(api.url, partnerId, anEvent('invoice.paid', second), ENDPOINT_SECRET);
    const resubscribed = await waitFor('workspace.subscribed', 2);
    expect(resubscribed[1]!.data).to.deep.include({ state: 'subscribed', previous_state: 'suspended' });
    await until(async () => (await visit()).status === 302, 5_000, 'the link redirecting again');
    expect((await callApi(api.url, 'POST', '/links', { key: ck, body: { url: 'https://bakery.example/cakes' } })).status).to.equal(201);

    // A refund of part of the first payment → payment.refunded with the breakdown.
    await deliver(api.url, partnerId, anEvent('charge.refunded', aCharge(first, 2000)), ENDPOINT_SECRET);
    const [refunded] = await waitFor('payment.refunded', 1);
    expect(refunded!.data).to.deep.include({ refunded: 2000, status: 'partially_refunded', gross: 10_000 });
    expect(refunded!.data.refund).to.deep.include({ amount: 2000, platform_fee_returned: 300, partner_share_reversed: 1700 });

    // The period closes: the payout is the partner shares minus the refunded share, computed once.
    const payments = await p('GET', '/partner/payments');
    expect(payments.body.data).to.have.length(2);
    const now = new Date();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 5));
    await worker.worker.billing.computePayouts(nextMonth);
    await worker.worker.billing.computePayouts(nextMonth);
    const period = now.toISOString().slice(0, 7);
    const payouts = (await p('GET', `/partner/payouts?period=${period}`)).body.data as Json[];
    expect(payouts).to.have.length(1);
    expect(payouts[0]).to.deep.include({ status: 'pending', payments: 2, partner_shares: 16_360, refunds: 2000, refunded_partner_shares: 1700, amount: 14_660 });
    const paid = await p('POST', `/partner/payouts/${payouts[0]!.id as string}/pay`, { reference: 'tr_2026_11' });
    expect(paid.body).to.deep.include({ status: 'paid', reference: 'tr_2026_11' });

    // Every partner event arrived signed with the endpoint's secret, and each at most once per event.
    await waitFor('payment.succeeded', 2);
    expect(received.length).to.be.greaterThan(0);
    for (const r of received) expect(r.valid, `signature of ${r.headers['x-service-event'] as string}`).to.equal(true);
    const ids = received.map((r) => JSON.parse(r.body).id as string);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(events('workspace.suspended')).to.have.length(1);
    expect(events('workspace.past_due')).to.have.length(1);
  });
});
