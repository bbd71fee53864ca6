import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi } from '../helpers/http.ts';
import { anEvent, anInvoice, deliver, deliverPayload, ENDPOINT_SECRET, type IngestReply } from '../helpers/stripe-events.ts';

const PER_ADDRESS = 5;
const PER_PARTNER = 8;

describe('public Stripe ingestion: refused signatures throttled per address and per partner, partners not told apart', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let ipCounter = 0;
  /** Each request states its client address (one trusted proxy hop), so a test picks where its posts come from. */
  const freshIp = () => `198.51.100.${++ipCounter}`;
  const from = (ip: string) => ({ headers: { 'X-Forwarded-For': ip } });
  const unsigned = (partnerId: string, ip: string) => deliverPayload(api.url, partnerId, '{"id":"evt_x","type":"invoice.paid"}', ENDPOINT_SECRET, { signature: 't=1,v1=00', ...from(ip) });

  /** A partner with its Stripe signing secret set. */
  async function aConfiguredPartner(): Promise<string> {
    const partnerId = await tenants.aPartner();
    const { key } = await tenants.aPartnerKey(partnerId);
    expect((await callApi(api.url, 'PATCH', '/partner', { key, body: { stripe_endpoint_secret: ENDPOINT_SECRET } })).status).to.equal(200);
    return partnerId;
  }

  function expectThrottled(reply: IngestReply): void {
    expect(reply.status, JSON.stringify(reply.body)).to.equal(429);
    expect(reply.body.error!.code).to.equal('rate_limited');
    expect(Number(reply.retryAfter)).to.be.within(1, 60);
  }

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(
      testEnv(mongo, { TRUSTED_PROXY_HOPS: '1', BILLING_INGEST_REFUSED_PER_MIN_PER_IP: String(PER_ADDRESS), BILLING_INGEST_REFUSED_PER_MIN_PER_PARTNER: String(PER_PARTNER) }),
    );
    tenants = await Tenants.open(mongo);
  });

  after(async () => {
    await tenants?.close();
    await api?.stop();
    await mongo?.stop();
  });

  it('an unknown partner id is answered exactly like a partner without a secret (same status, same body)', async () => {
    const bare = await tenants.aPartner();
    const event = anEvent('invoice.paid', anInvoice('cus_x'));
    for (const options of [{}, { signature: 't=1,v1=00' }, { signature: '' }]) {
      const ip = freshIp();
      const known = await deliver(api.url, bare, event, ENDPOINT_SECRET, { ...options, ...from(ip) });
      const unknown = await deliver(api.url, 'ptr_doesnotexist0000000', event, ENDPOINT_SECRET, { ...options, ...from(ip) });
      expect(known.status).to.equal(503);
      expect(known.body.error!.code).to.equal('not_configured');
      expect(unknown).to.deep.equal(known);
    }
  });

  it(`past ${PER_ADDRESS} refused signatures a minute from one address, its refusals are 429 with Retry-After; correct signatures still apply`, async () => {
    const partnerId = await aConfiguredPartner();
    const ip = freshIp();
    for (let i = 0; i < PER_ADDRESS; i++) expect((await unsigned(partnerId, ip)).status).to.equal(400);
    expectThrottled(await unsigned(partnerId, ip));
    // An unknown partner from that address is throttled the same way.
    expectThrottled(await unsigned('ptr_doesnotexist0000000', ip));
    // The processor's own, correctly signed deliveries are never held back by someone else's refusals.
    const ok = await deliver(api.url, partnerId, anEvent('customer.created', { id: 'cus_1', object: 'customer' }), ENDPOINT_SECRET, from(ip));
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    // Another address is not affected.
    expect((await unsigned(partnerId, freshIp())).status).to.equal(400);
  });

  it(`past ${PER_PARTNER} refused signatures a minute for one partner, from any addresses, its refusals are 429`, async () => {
    const partnerId = await aConfiguredPartner();
    for (let i = 0; i < PER_PARTNER; i++) expect((await unsigned(partnerId, freshIp())).status).to.equal(400);
    expectThrottled(await unsigned(partnerId, freshIp()));
    // Another partner, from a fresh address, is not affected; the partner's signed events still apply.
    expect((await unsigned(await aConfiguredPartner(), freshIp())).status).to.equal(400);
    const ok = await deliver(api.url, partnerId, anEvent('customer.created', { id: 'cus_2', object: 'customer' }), ENDPOINT_SECRET, from(freshIp()));
    expect(ok.status).to.equal(200);
  });

  it('an unknown partner id is throttled per partner like a known one', async () => {
    const unknownId = 'ptr_neverissued000000000';
    for (let i = 0; i < PER_PARTNER; i++) expect((await unsigned(unknownId, freshIp())).status).to.equal(503);
    expectThrottled(await unsigned(unknownId, freshIp()));
  });

  it('fifty parallel unsigned posts from one address: the first refusals are 400, the rest 429, never anything else', async () => {
    const partnerId = await aConfiguredPartner();
    const ip = freshIp();
    const replies = await Promise.all(Array.from({ length: 50 }, () => unsigned(partnerId, ip)));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 400)).to.have.length(PER_ADDRESS);
    expect(statuses.filter((s) => s === 429)).to.have.length(50 - PER_ADDRESS);
    for (const r of replies.filter((x) => x.status === 429)) expectThrottled(r);
  });
});
