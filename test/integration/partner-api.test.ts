import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectInvalid, expectRefused, type Json } from '../helpers/http.ts';

const aPlan = (overrides: Json = {}): Json => ({
  name: 'Starter',
  price: { amount: 4900, currency: 'USD', interval: 'month' },
  limits: { links: 500, domains: 1, tracked_clicks_per_month: 10_000, rate_limit_per_minute: 300 },
  capabilities: ['password', 'webhooks'],
  ...overrides,
});

describe('partner API: plans, clients, settings (api over HTTP)', function () {
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let partnerId: string;
  let partnerKey: string;
  let otherKey: string;
  const call = (method: string, path: string, body?: unknown, key = partnerKey) => callApi(api.url, method, path, { key, ...(body === undefined ? {} : { body }) });

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo, { PARTNER_CLIENT_QUOTA: '3' }));
    tenants = await Tenants.open(mongo);
    partnerId = await tenants.aPartner();
    await tenants.partners.collection.updateOne({ _id: partnerId }, { $set: { client_quota: 100 } });
    partnerKey = (await tenants.aPartnerKey(partnerId)).key;
    const other = await tenants.aPartner();
    await tenants.partners.collection.updateOne({ _id: other }, { $set: { client_quota: 100 } });
    otherKey = (await tenants.aPartnerKey(other)).key;
  });

  after(async () => {
    await tenants.close();
    await api.stop();
    await mongo.stop();
  });

  describe('plans', () => {
    it('creates, reads, lists in a single page, updates and archives a plan', async () => {
      const created = await call('POST', '/partner/plans', aPlan());
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body).to.include({ name: 'Starter', status: 'active', clients: 0 });
      const id = created.body.id as string;
      expect((await call('GET', `/partner/plans/${id}`)).body).to.deep.equal(created.body);
      const list = await call('GET', '/partner/plans');
      expect(list.body.pagination).to.deep.equal({ next_cursor: null, has_more: false });
      expect((list.body.data as Json[]).map((p) => p.id)).to.include(id);
      const updated = await call('PATCH', `/partner/plans/${id}`, { name: 'Starter+', price: { amount: 5900, currency: 'EUR', interval: 'year' } });
      expect(updated.body).to.deep.include({ name: 'Starter+', price: { amount: 5900, currency: 'EUR', interval: 'year' } });
      const archived = await call('POST', `/partner/plans/${id}/archive`);
      expect(archived.body.status).to.equal('archived');
    });

    it("refuses limits and capabilities beyond the partner's platform plan, naming each field", async () => {
      const res = await call('POST', '/partner/plans', aPlan({ limits: { links: 1_000_001, domains: 1, tracked_clicks_per_month: 10, rate_limit_per_minute: 3_001 } }));
      expectInvalid(res, 'limits.links');
      expectInvalid(res, 'limits.rate_limit_per_minute');
    });

    it('refuses a price that is not integer minor units of an ISO 4217 currency', async () => {
      expectInvalid(await call('POST', '/partner/plans', aPlan({ price: { amount: 49.5, currency: 'USD', interval: 'month' } })), 'price.amount');
      expectInvalid(await call('POST', '/partner/plans', aPlan({ price: { amount: 4900, currency: 'XYZ', interval: 'month' } })), 'price.currency');
    });

    it('a plan in use cannot be deleted (409), an unused one can', async () => {
      const plan = (await call('POST', '/partner/plans', aPlan({ name: 'Used' }))).body.id as string;
      const client = await call('POST', '/partner/clients', { name: 'On plan', plan });
      expect(client.status).to.equal(201);
      expectRefused(await call('DELETE', `/partner/plans/${plan}`), 409, 'conflict');
      expect((await call('GET', `/partner/plans/${plan}`)).body.clients).to.equal(1);
      const unused = (await call('POST', '/partner/plans', aPlan({ name: 'Unused' }))).body.id as string;
      expect((await call('DELETE', `/partner/plans/${unused}`)).status).to.equal(204);
      expectRefused(await call('GET', `/partner/plans/${unused}`), 404, 'not_found');
    });

    it("another partner's plan is 404 and a workspace key is 403 forbidden", async () => {
      const plan = (await call('POST', '/partner/plans', aPlan({ name: 'Mine' }))).body.id as string;
      expectRefused(await call('GET', `/partner/plans/${plan}`, undefined, otherKey), 404, 'not_found');
      expectRefused(await call('PATCH', `/partner/plans/${plan}`, { name: 'x' }, otherKey), 404, 'not_found');
      const ws = await tenants.aWorkspace();
      const wsKey = (await tenants.aWorkspaceKey(ws._id)).key;
      expectRefused(await call('GET', '/partner/plans', undefined, wsKey), 403, 'forbidden');
    });
  });

  describe('clients', () => {
    it('reads and updates a client: name, plan change, billing customer id, metadata', async () => {
      const plan = (await call('POST', '/partner/plans', aPlan({ name: 'A' }))).body.id as string;
      const bigger = (await call('POST', '/partner/plans', aPlan({ name: 'B', capabilities: ['password', 'webhooks', 'targeting'] }))).body.id as string;
      const created = await call('POST', '/partner/clients', { name: 'Client', plan, billing_customer_id: 'cus_update', metadata: { crm: '42' } });
      expect(created.body).to.deep.include({ name: 'Client', plan, status: 'pending', billing_customer_id: 'cus_update', metadata: { crm: '42' } });
      const id = created.body.id as string;
      const updated = await call('PATCH', `/partner/clients/${id}`, { name: 'Renamed', plan: bigger, billing_customer_id: null, metadata: {} });
      expect(updated.body).to.deep.include({ name: 'Renamed', plan: bigger, billing_customer_id: null, metadata: {} });
      expect((await call('GET', `/partner/clients/${id}`)).body).to.deep.equal(updated.body);
      // The client's own key now sees the new plan's capabilities.
      const key = await call('POST', `/partner/clients/${id}/keys`, { name: 'ops' });
      expect(key.status).to.equal(201);
      expect(key.body.key).to.match(/^lp_live_/);
      const profile = await callApi(api.url, 'GET', '/workspace', { key: key.body.key as string });
      expect((profile.body.plan as Json).capabilities).to.deep.equal(['targeting', 'password', 'webhooks']);
      expect(((profile.body.plan as Json).limits as Json).links).to.equal(500);
    });

    it('a billing customer id is unique among the partner\'s clients (409)', async () => {
      await call('POST', '/partner/clients', { name: 'One', billing_customer_id: 'cus_dup' });
      expectRefused(await call('POST', '/partner/clients', { name: 'Two', billing_customer_id: 'cus_dup' }), 409, 'conflict');
    });

    it('an archived or foreign plan cannot be given to a client (422 naming plan)', async () => {
      const plan = (await call('POST', '/partner/plans', aPlan({ name: 'Old' }))).body.id as string;
      await call('POST', `/partner/plans/${plan}/archive`);
      expectInvalid(await call('POST', '/partner/clients', { name: 'Late', plan }), 'plan');
      const foreign = (await call('POST', '/partner/plans', aPlan(), otherKey)).body.id as string;
      expectInvalid(await call('POST', '/partner/clients', { name: 'Late', plan: foreign }), 'plan');
    });

    it('suspends and reactivates by hand; a suspended client\'s keys may read but not write', async () => {
      const id = (await call('POST', '/partner/clients', { name: 'Hand' }, otherKey)).body.id as string;
      const key = (await call('POST', `/partner/clients/${id}/keys`, {}, otherKey)).body.key as string;
      expect((await callApi(api.url, 'POST', '/links', { key, body: { url: 'https://example.com/a' } })).status).to.equal(201);
      const suspended = await call('POST', `/partner/clients/${id}/suspend`, undefined, otherKey);
      expect(suspended.body.subscription).to.deep.include({ state: 'suspended', suspended_reason: 'manual' });
      expectRefused(await call('POST', `/partner/clients/${id}/suspend`, undefined, otherKey), 409, 'conflict');
      const refused = await callApi(api.url, 'POST', '/links', { key, body: { url: 'https://example.com/b' } });
      expectRefused(refused, 403, 'forbidden');
      expect(refused.body.error!.message).to.match(/suspended by its partner/);
      expect((await callApi(api.url, 'GET', '/links', { key })).status).to.equal(200);
      const back = await call('POST', `/partner/clients/${id}/reactivate`, undefined, otherKey);
      expect(back.body.status).to.equal('subscribed');
      expect((await callApi(api.url, 'POST', '/links', { key, body: { url: 'https://example.com/c' } })).status).to.equal(201);
      expectRefused(await call('POST', `/partner/clients/${id}/reactivate`, undefined, otherKey), 409, 'conflict');
    });

    it("another partner's client is 404 on every client route", async () => {
      const id = (await call('POST', '/partner/clients', { name: 'Private' }, otherKey)).body.id as string;
      expectRefused(await call('GET', `/partner/clients/${id}`), 404, 'not_found');
      expectRefused(await call('PATCH', `/partner/clients/${id}`, { name: 'x' }), 404, 'not_found');
      expectRefused(await call('POST', `/partner/clients/${id}/suspend`), 404, 'not_found');
      expectRefused(await call('POST', `/partner/clients/${id}/keys`, {}), 404, 'not_found');
    });

    it("the partner's client quota is 422 quota_exceeded", async () => {
      const quota = await tenants.aPartner();
      const key = (await tenants.aPartnerKey(quota)).key;
      for (const name of ['a', 'b', 'c']) expect((await call('POST', '/partner/clients', { name }, key)).status).to.equal(201);
      expectRefused(await call('POST', '/partner/clients', { name: 'd' }, key), 422, 'quota_exceeded');
      expect(((await call('GET', '/partner', undefined, key)).body.clients)).to.deep.equal({ count: 3, quota: 3 });
    });
  });

  describe('settings', () => {
    it('shows the ingestion URL and stores the Stripe endpoint secret encrypted, never showing it', async () => {
      const res = await call('PATCH', '/partner', { stripe_endpoint_secret: 'whsec_abcdefghijklmnop', suspended_links: 'suspended_page', grace_period_days: 3 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ suspended_links: 'suspended_page', grace_period_days: 3 });
      expect(res.body.billing).to.deep.equal({ stripe_ingestion_url: `${api.infra.config.publicApiUrl}/v1/billing/stripe/${partnerId}`, stripe_endpoint_secret_set: true });
      expect(JSON.stringify(res.body)).not.to.include('whsec_');
      const stored = await tenants.partners.findById(partnerId);
      expect(stored!.stripe_secret_sealed).to.be.a('string').and.not.include('abcdefghijklmnop');
    });

    it('refuses unknown settings and out-of-range values', async () => {
      expectInvalid(await call('PATCH', '/partner', { grace_period_days: 61 }), 'grace_period_days');
      expectInvalid(await call('PATCH', '/partner', { suspended_links: 'hide' }), 'suspended_links');
      expectInvalid(await call('PATCH', '/partner', { platform_fee_bps: 0 }), 'platform_fee_bps');
    });
  });
});
