import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, startWorker, type RunningApi, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectInvalid, expectRefused, type Json } from '../helpers/http.ts';
import { startKubeApiServer, type KubeApiServer, type KubeObject } from '../helpers/kube-apiserver.ts';

const NAMESPACE = 'linkplane-partner-domains';

describe('partner domains: owned by the partner, usable by every client, same Domain resources and operator', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let kube: KubeApiServer;
  let api: RunningApi;
  let worker: RunningWorker;
  let tenants: Tenants;

  before(async () => {
    mongo = await startTestMongo();
    kube = await startKubeApiServer();
    const env = testEnv(mongo, {
      SHORT_LINK_BASE_URL: 'https://lnk.linkplane.test',
      PUBLIC_API_URL: 'https://api.linkplane.test',
      DOMAINS_KUBE: 'kubeconfig',
      KUBECONFIG: kube.kubeconfigFile(),
      DOMAIN_NAMESPACE: NAMESPACE,
      DOMAIN_CNAME_TARGET: 'ingress.linkplane.test',
    });
    api = await startApi(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
  });

  after(async () => {
    await tenants.close();
    await worker.stop();
    await api.stop();
    await kube.stop();
    await mongo.stop();
  });

  async function aPartner(): Promise<{ id: string; key: string; call: (method: string, path: string, body?: unknown) => ReturnType<typeof callApi> }> {
    const id = await tenants.aPartner();
    const key = (await tenants.aPartnerKey(id)).key;
    return { id, key, call: (method, path, body) => callApi(api.url, method, path, { key, ...(body === undefined ? {} : { body }) }) };
  }

  async function aClientKey(partner: Awaited<ReturnType<typeof aPartner>>): Promise<{ id: string; key: string }> {
    const plan = await partner.call('POST', '/partner/plans', {
      name: 'With domains',
      price: { amount: 1000, currency: 'EUR', interval: 'month' },
      limits: { links: 100, domains: 2, tracked_clicks_per_month: 1000, rate_limit_per_minute: 600 },
      capabilities: ['custom_domains'],
    });
    const client = await partner.call('POST', '/partner/clients', { name: 'Client', plan: plan.body.id });
    const key = await partner.call('POST', `/partner/clients/${client.body.id as string}/keys`, {});
    return { id: client.body.id as string, key: key.body.key as string };
  }

  it('connects a partner domain through the same Domain resource, its events go to the partner, and every client may put links on it', async () => {
    const partner = await aPartner();
    const created = await partner.call('POST', '/partner/domains', { hostname: 'go.agency-one.com' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.deep.include({ hostname: 'go.agency-one.com', status: 'pending_verification', owner: { kind: 'partner', client_id: null } });
    const object = kube.get<KubeObject & { spec: { tenant: string; domainId: string } }>('Domain', NAMESPACE, 'go.agency-one.com');
    expect(object!.spec).to.deep.include({ tenant: partner.id, domainId: created.body.id });

    // The operator reports it active: the event is the partner's (no workspace on it).
    const applied = await worker.worker.domainEvents.apply({
      domain_id: created.body.id as string,
      hostname: 'go.agency-one.com',
      tenant: partner.id,
      type: 'domain.activated',
      phase: 'Active',
      generation: 1,
      reason: null,
      message: null,
      at: new Date().toISOString(),
    });
    expect(applied).to.equal('applied');
    const event = await api.infra.mongo.db.collection('events').findOne({ type: 'domain.activated', 'data.id': created.body.id });
    expect(event).to.deep.include({ workspace_id: null, partner_id: partner.id });

    const first = await aClientKey(partner);
    const second = await aClientKey(partner);
    for (const client of [first, second]) {
      const domains = await callApi(api.url, 'GET', '/domains', { key: client.key });
      expect((domains.body.data as Json[]).find((d) => d.id === created.body.id)).to.deep.include({ partner_domain: true, status: 'active' });
      const link = await callApi(api.url, 'POST', '/links', { key: client.key, body: { url: 'https://example.com/x', domain_id: created.body.id } });
      expect(link.status, JSON.stringify(link.body)).to.equal(201);
      expect(link.body.short_url).to.match(/^https:\/\/go\.agency-one\.com\//);
      // Read-only for the client: it cannot delete the partner's domain.
      expectRefused(await callApi(api.url, 'DELETE', `/domains/${created.body.id as string}`, { key: client.key }), 404, 'not_found');
    }

    // Another partner's client cannot use it.
    const other = await aPartner();
    const stranger = await aClientKey(other);
    const refused = await callApi(api.url, 'POST', '/links', { key: stranger.key, body: { url: 'https://example.com/x', domain_id: created.body.id } });
    expectInvalid(refused, 'domain_id');
    expectRefused(await other.call('GET', `/partner/domains/${created.body.id as string}`), 404, 'not_found');
    expectRefused(await other.call('DELETE', `/partner/domains/${created.body.id as string}`), 404, 'not_found');
  });

  it('GET /partner/domains lists the partner domains with every client domain, each with its owner', async () => {
    const partner = await aPartner();
    const own = await partner.call('POST', '/partner/domains', { hostname: 'links.agency-two.com' });
    const client = await aClientKey(partner);
    const clientDomain = await callApi(api.url, 'POST', '/domains', { key: client.key, body: { hostname: 'go.client-two.com' } });
    expect(clientDomain.status, JSON.stringify(clientDomain.body)).to.equal(201);
    const foreign = await aClientKey(await aPartner());
    await callApi(api.url, 'POST', '/domains', { key: foreign.key, body: { hostname: 'go.not-theirs.com' } });

    const list = await partner.call('GET', '/partner/domains');
    expect(list.status).to.equal(200);
    expect(list.body.pagination).to.deep.equal({ next_cursor: null, has_more: false });
    const rows = (list.body.data as Json[]).map((d) => [d.hostname, d.owner]);
    expect(rows).to.deep.equal([
      ['links.agency-two.com', { kind: 'partner', client_id: null }],
      ['go.client-two.com', { kind: 'client', client_id: client.id }],
    ]);
    expect((await partner.call('DELETE', `/partner/domains/${own.body.id as string}`)).status).to.equal(204);
    expect(kube.get('Domain', NAMESPACE, 'links.agency-two.com')).to.equal(undefined);
    // A client's domain is not the partner's to delete here.
    expectRefused(await partner.call('DELETE', `/partner/domains/${clientDomain.body.id as string}`), 404, 'not_found');
  });

  it('a workspace key on /partner/domains is 403 forbidden', async () => {
    const ws = await tenants.aWorkspace();
    const key = (await tenants.aWorkspaceKey(ws._id)).key;
    expectRefused(await callApi(api.url, 'GET', '/partner/domains', { key }), 403, 'forbidden');
  });
});
