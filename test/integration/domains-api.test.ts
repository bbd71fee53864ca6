import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Json, type Reply } from '../helpers/http.ts';
import { startKubeApiServer, type KubeApiServer, type KubeObject } from '../helpers/kube-apiserver.ts';
import type { DomainDoc } from '../../src/domains/domain.store.ts';
import type { CacheBus, Invalidation } from '../../src/platform/cache-bus.ts';
import { DomainDirectory } from '../../src/links/domains.ts';
import { until } from '../helpers/wait.ts';
import type { PlanLimits } from '../../src/tenancy/plans.ts';
import { DomainListSchema, DomainSchema } from '../../src/domains/domain.schemas.ts';

// ajv-formats is CommonJS with a default export; under NodeNext its callable sits on `.default`.
const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv2020) => Ajv2020 };

const NAMESPACE = 'linkplane-domains';
const SHORT_HOST = 'lnk.linkplane.test';

interface DomainObjectView extends KubeObject {
  spec: { hostname: string; tenant: string; domainId: string; verificationToken: string };
}

describe('Domains API over HTTP', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let kube: KubeApiServer;
  let running: RunningApi;
  let clusterless: RunningApi;
  /** Another replica of `running` (same database, same NATS prefix). */
  let replica: RunningApi;
  let tenants: Tenants;
  const invalidations: Invalidation[] = [];

  before(async () => {
    mongo = await startTestMongo();
    kube = await startKubeApiServer();
    const shared = { SHORT_LINK_BASE_URL: `https://${SHORT_HOST}`, PUBLIC_API_URL: 'https://api.linkplane.test' };
    const env = testEnv(mongo, {
      ...shared,
      DOMAINS_KUBE: 'kubeconfig',
      KUBECONFIG: kube.kubeconfigFile(),
      DOMAIN_NAMESPACE: NAMESPACE,
      DOMAIN_CNAME_TARGET: 'ingress.linkplane.test',
      DOMAIN_A_TARGETS: '203.0.113.10,203.0.113.11',
    });
    running = await startApi(env);
    replica = await startApi(env);
    clusterless = await startApi(testEnv(mongo, { ...shared, DOMAINS_KUBE: 'off' }));
    running.infra.bus.on((message) => invalidations.push(message));
    tenants = await Tenants.open(mongo);
  });

  after(async () => {
    await tenants.close();
    await clusterless.stop();
    await replica.stop();
    await running.stop();
    await kube.stop();
    await mongo.stop();
  });

  /** A workspace on the Pro plan (custom domains included) and a key with every scope. */
  async function aWorkspaceKey(overrides: { plan_id?: string; limits?: Partial<PlanLimits> } = {}): Promise<{ key: string; workspaceId: string }> {
    const workspace = await tenants.aWorkspace(overrides);
    return { key: (await tenants.aWorkspaceKey(workspace._id)).key, workspaceId: workspace._id };
  }

  const call = (key: string, method: string, path: string, body?: unknown, api: RunningApi = running): Promise<Reply> =>
    callApi(api.url, method, path, { key, body });
  const connect = (key: string, hostname: string, api: RunningApi = running) => call(key, 'POST', '/domains', { hostname }, api);
  const docs = () => tenants.client.db(mongo.dbName).collection<DomainDoc>('domains');
  const domainObject = (name: string) => kube.get<DomainObjectView>('Domain', NAMESPACE, name);
  let counter = 0;
  const uniqueHost = (label = 'links') => `${label}.acme${++counter}.com`;

  describe('connecting a domain', () => {
    it('answers 201 with the DNS records, and creates the record and the Domain object', async () => {
      const { key, workspaceId } = await aWorkspaceKey();
      const hostname = uniqueHost();
      const res = await connect(key, hostname);
      expect(res.status).to.equal(201);
      const domain = res.body;
      expect(domain.id).to.match(/^dom_/);
      expect(res.headers.get('location')).to.equal(`/v1/domains/${String(domain.id)}`);
      expect(domain).to.deep.include({ hostname, status: 'pending_verification', default: false, error: null, activated_at: null });

      const doc = await docs().findOne({ _id: domain.id as string });
      expect(doc).to.include({ workspace_id: workspaceId, hostname, status: 'pending_verification' });
      expect(domain.records).to.deep.equal([
        { type: 'TXT', name: `_linkplane.${hostname}`, value: `linkplane-verify=${doc!.verification_token}` },
        { type: 'CNAME', name: hostname, value: 'ingress.linkplane.test' },
      ]);

      const object = domainObject(hostname)!;
      expect(object.apiVersion).to.equal('linkplane.io/v1alpha1');
      expect(object.metadata!.labels).to.deep.equal({ 'linkplane.io/domain-id': domain.id });
      expect(object.spec).to.deep.equal({ hostname, tenant: workspaceId, domainId: domain.id, verificationToken: doc!.verification_token });
    });

    it('keeps the DNS records readable with GET /domains/{id}', async () => {
      const { key } = await aWorkspaceKey();
      const created = (await connect(key, uniqueHost())).body;
      const read = await call(key, 'GET', `/domains/${String(created.id)}`);
      expect(read.status).to.equal(200);
      expect(read.body).to.deep.equal(created);
    });

    it('gives an apex domain A records instead of a CNAME', async () => {
      const { key } = await aWorkspaceKey();
      const hostname = `acme${++counter}.com`;
      const res = await connect(key, hostname);
      expect(res.status).to.equal(201);
      expect((res.body.records as Json[]).filter((r) => r.type !== 'TXT')).to.deep.equal([
        { type: 'A', name: hostname, value: '203.0.113.10' },
        { type: 'A', name: hostname, value: '203.0.113.11' },
      ]);
    });

    it('stores an internationalised name in punycode, and names the Domain object after it', async () => {
      const { key } = await aWorkspaceKey();
      const res = await connect(key, 'Shop.Bücher.example.');
      expect(res.status).to.equal(201);
      const hostname = 'shop.xn--bcher-kva.example';
      expect(res.body.hostname).to.equal(hostname);
      expect(domainObject(hostname)?.spec.hostname).to.equal(hostname);
    });

    for (const [hostname, why] of [
      ['203.0.113.7', /IP address/],
      ['co.uk', /public suffix/],
      [`go.${SHORT_HOST}`, /our own/],
      ['api.linkplane.test', /our own/],
      ['bad_label.acme.com', /letters, digits/],
    ] as const) {
      it(`answers 422 naming hostname for "${hostname}", and creates nothing`, async () => {
        const { key, workspaceId } = await aWorkspaceKey();
        const res = await connect(key, hostname);
        expect(res.status).to.equal(422);
        expect(res.body.error!.code).to.equal('validation_failed');
        expect(res.body.error!.details).to.have.length(1);
        expect(res.body.error!.details![0]!.path).to.equal('hostname');
        expect(res.body.error!.details![0]!.message).to.match(why);
        expect(await docs().countDocuments({ workspace_id: workspaceId })).to.equal(0);
      });
    }

    it('answers 422 validation_failed for a body with extra properties', async () => {
      const { key } = await aWorkspaceKey();
      const res = await call(key, 'POST', '/domains', { hostname: uniqueHost(), tls: true });
      expect(res.status).to.equal(422);
      expect(res.body.error!.code).to.equal('validation_failed');
    });

    it('answers 422 quota_exceeded beyond the plan quota, leaving no extra record or object', async () => {
      const { key, workspaceId } = await aWorkspaceKey({ limits: { domains: 1 } });
      expect((await connect(key, uniqueHost())).status).to.equal(201);
      const refused = uniqueHost();
      const res = await connect(key, refused);
      expect(res.status).to.equal(422);
      expect(res.body.error!.code).to.equal('quota_exceeded');
      expect(await docs().countDocuments({ workspace_id: workspaceId })).to.equal(1);
      expect(domainObject(refused)).to.equal(undefined);
    });

    it('answers 409 conflict for a hostname another workspace connected, and leaves its object alone', async () => {
      const first = await aWorkspaceKey();
      const second = await aWorkspaceKey();
      const hostname = uniqueHost();
      const owner = (await connect(first.key, hostname)).body;
      const res = await connect(second.key, hostname.toUpperCase());
      expect(res.status).to.equal(409);
      expect(res.body.error!.code).to.equal('conflict');
      expect(await docs().countDocuments({ hostname })).to.equal(1);
      expect(domainObject(hostname)!.spec.domainId).to.equal(owner.id);
    });

    it('answers 409 conflict for a hostname the same workspace already connected', async () => {
      const { key } = await aWorkspaceKey();
      const hostname = uniqueHost();
      expect((await connect(key, hostname)).status).to.equal(201);
      const again = await connect(key, hostname);
      expect(again.status).to.equal(409);
      expect(again.body.error!.code).to.equal('conflict');
    });

    it('removes the record again when the cluster refuses the Domain object, so the hostname stays free', async () => {
      const { key, workspaceId } = await aWorkspaceKey();
      const hostname = uniqueHost();
      kube.failRequests({ method: 'POST', path: `/apis/linkplane.io/v1alpha1/namespaces/${NAMESPACE}/domains`, code: 500 });
      const res = await connect(key, hostname);
      expect(res.status).to.equal(502);
      expect(res.body.error!.code).to.equal('internal');
      expect(await docs().countDocuments({ workspace_id: workspaceId })).to.equal(0);
      expect(domainObject(hostname)).to.equal(undefined);
      expect((await connect(key, hostname)).status).to.equal(201);
    });

    it('replaces an orphaned Domain object whose record no longer exists', async () => {
      const { key } = await aWorkspaceKey();
      const hostname = uniqueHost();
      kube.create('Domain', {
        apiVersion: 'linkplane.io/v1alpha1',
        kind: 'Domain',
        metadata: { name: hostname, namespace: NAMESPACE, labels: { 'linkplane.io/domain-id': 'dom_gone' } },
        spec: { hostname, tenant: 'ws_gone', domainId: 'dom_gone', verificationToken: 'old' },
      });
      const res = await connect(key, hostname);
      expect(res.status).to.equal(201);
      expect(domainObject(hostname)!.spec.domainId).to.equal(res.body.id);
    });

    it('answers 403 plan_restricted when the plan lacks custom domains', async () => {
      const { key } = await aWorkspaceKey({ plan_id: 'free' });
      const res = await connect(key, uniqueHost());
      expect(res.status).to.equal(403);
      expect(res.body.error!.code).to.equal('plan_restricted');
      expect(res.body.error!.message).to.contain('custom_domains');
    });

    it('answers 403 forbidden to a partner key', async () => {
      const partnerKey = (await tenants.aPartnerKey(await tenants.aPartner())).key;
      for (const [method, path, body] of [['GET', '/domains', undefined], ['POST', '/domains', { hostname: uniqueHost() }]] as const) {
        const res = await call(partnerKey, method, path, body);
        expect(res.status, `${method} ${path}`).to.equal(403);
        expect(res.body.error!.code).to.equal('forbidden');
      }
    });

    it('answers 403 insufficient_scope to a key without domains:write', async () => {
      const workspace = await tenants.aWorkspace();
      const { key } = await tenants.aWorkspaceKey(workspace._id, ['domains:read']);
      const res = await connect(key, uniqueHost());
      expect(res.status).to.equal(403);
      expect(res.body.error!.code).to.equal('insufficient_scope');
    });
  });

  describe('listing and reading', () => {
    it('lists the default short domain first, then the custom domains oldest first, in a single page', async () => {
      const { key } = await aWorkspaceKey();
      const a = (await connect(key, uniqueHost('a'))).body;
      const b = (await connect(key, uniqueHost('b'))).body;
      const res = await call(key, 'GET', '/domains');
      expect(res.status).to.equal(200);
      expect(res.body.pagination).to.deep.equal({ next_cursor: null, has_more: false });
      const data = res.body.data as Json[];
      expect(data[0]).to.deep.equal({
        id: 'dom_default',
        hostname: SHORT_HOST,
        status: 'active',
        default: true,
        records: [],
        error: null,
        created_at: null,
        activated_at: null,
      });
      expect(data.slice(1)).to.deep.equal([a, b]);
    });

    it('reads the default domain by its id', async () => {
      const { key } = await aWorkspaceKey();
      const res = await call(key, 'GET', '/domains/dom_default');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ id: 'dom_default', hostname: SHORT_HOST, default: true });
    });

    it("answers 404 for another workspace's domain, and never lists it", async () => {
      const owner = await aWorkspaceKey();
      const stranger = await aWorkspaceKey();
      const created = (await connect(owner.key, uniqueHost())).body;
      expect((await call(stranger.key, 'GET', `/domains/${String(created.id)}`)).status).to.equal(404);
      const list = await call(stranger.key, 'GET', '/domains');
      expect((list.body.data as Json[]).map((d) => d.id)).to.deep.equal(['dom_default']);
      const del = await call(stranger.key, 'DELETE', `/domains/${String(created.id)}`);
      expect(del.status).to.equal(404);
      expect(del.body.error!.code).to.equal('not_found');
      expect(domainObject(created.hostname as string)).not.to.equal(undefined);
    });

    it('answers exactly the documented schemas, an errored and an apex domain included', async () => {
      const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
      const check = (schema: TSchema, reply: Reply) => {
        const validate = ajv.getSchema(String(schema.$id)) ?? ajv.compile(schema);
        expect(validate(reply.body), JSON.stringify(validate.errors)).to.equal(true);
      };
      const { key } = await aWorkspaceKey();
      const created = await connect(key, uniqueHost());
      check(DomainSchema, created);
      check(DomainSchema, await connect(key, `acme${++counter}.com`));
      await docs().updateOne({ _id: created.body.id as string }, { $set: { status: 'error', error: { reason: 'OrderFailed', message: 'CAA forbids the issuer' } } });
      const errored = await call(key, 'GET', `/domains/${String(created.body.id)}`);
      expect(errored.body).to.deep.include({ status: 'error', error: { reason: 'OrderFailed', message: 'CAA forbids the issuer' } });
      check(DomainSchema, errored);
      check(DomainListSchema, await call(key, 'GET', '/domains'));
    });

    it('publishes the state names in the OpenAPI document', async () => {
      const res = await fetch(`${running.url}/v1/openapi.json`);
      const doc = (await res.json()) as { components: { schemas: Record<string, { properties: Record<string, { enum?: string[]; description?: string }> }> } };
      const status = doc.components.schemas.Domain!.properties.status!;
      expect(status.enum).to.deep.equal(['pending_verification', 'pending_ssl', 'active', 'error']);
      expect(status.description).to.contain('pending_ssl');
    });
  });

  describe('links pointing at a connected domain (a redirect loop)', () => {
    const loop = { path: 'url', message: 'points at a short-link domain (a redirect loop)' };

    it('are refused on every replica once the domain is connected, and accepted again once it is removed', async () => {
      const { key } = await aWorkspaceKey();
      const hostname = uniqueHost();
      const linkTo = (api: RunningApi) => call(key, 'POST', '/links', { url: `https://${hostname}/x` }, api);
      // Both replicas have read our hostnames before this one is connected: nobody's short domain yet.
      expect((await linkTo(running)).status).to.equal(201);
      expect((await linkTo(replica)).status).to.equal(201);
      const created = (await connect(key, hostname)).body;
      // The replica that connected it knows at once; the other as soon as the broadcast reaches it.
      const here = await linkTo(running);
      expect(here.status).to.equal(422);
      expect(here.body.error!.details).to.deep.include(loop);
      const there = await until(async () => {
        const res = await linkTo(replica);
        return res.status === 422 ? res : false;
      }, 10_000, 'the other replica refuses the new short domain');
      expect(there.body.error!.details).to.deep.include(loop);
      expect((await call(key, 'DELETE', `/domains/${String(created.id)}`)).status).to.equal(204);
      expect((await linkTo(running)).status).to.equal(201);
      await until(async () => (await linkTo(replica)).status === 201, 10_000, 'the other replica accepts the freed host again');
    });

    it('are checked against hostnames read again after every invalidation, `all` (a NATS reconnect) included', async () => {
      const handlers: Array<(message: Invalidation) => void> = [];
      const bus = { on: (handler: (message: Invalidation) => void) => handlers.push(handler) } as unknown as CacheBus;
      const directory = new DomainDirectory(tenants.client.db(mongo.dbName), SHORT_HOST, `https://${SHORT_HOST}`);
      directory.subscribe(bus);
      const [first, second] = [uniqueHost(), uniqueHost()];
      expect(await directory.isShortDomain(`https://${first}/a`)).to.equal(false);
      // Written without a broadcast (a missed one): the hostnames held are those read before.
      const record = (hostname: string) => docs().insertOne({ _id: `dom_${hostname}`, workspace_id: 'ws_other', hostname, status: 'active' } as unknown as DomainDoc);
      await record(first);
      expect(await directory.isShortDomain(`https://${first}/a`)).to.equal(false);
      for (const h of handlers) h({ kind: 'all', id: '' });
      expect(await directory.isShortDomain(`https://${first}/a`)).to.equal(true);
      expect(await directory.shortDomainHosts([`https://${first}/a`])).to.satisfy((short: (url: string) => boolean) => short(`https://${first}/b`));
      await record(second);
      for (const h of handlers) h({ kind: 'domain', id: `dom_${second}`, keys: [second] });
      expect(await directory.isShortDomain(`https://${second}:8443/a`)).to.equal(true);
      expect(await directory.isShortDomain(`https://${SHORT_HOST}/a`)).to.equal(true);
      expect(await directory.isShortDomain('https://example.com/a')).to.equal(false);
    });
  });

  describe('deleting', () => {
    it('removes the record and the Domain object, and tells every pod to drop the host', async () => {
      const { key } = await aWorkspaceKey();
      const hostname = uniqueHost();
      const created = (await connect(key, hostname)).body;
      const res = await call(key, 'DELETE', `/domains/${String(created.id)}`);
      expect(res.status).to.equal(204);
      expect(domainObject(hostname)).to.equal(undefined);
      expect(await docs().countDocuments({ _id: created.id as string })).to.equal(0);
      expect((await call(key, 'GET', `/domains/${String(created.id)}`)).status).to.equal(404);
      expect(invalidations).to.deep.include({ kind: 'domain', id: created.id, keys: [hostname] });
      // The hostname is free again.
      expect((await connect(key, hostname)).status).to.equal(201);
    });

    it('deletes the record even when the Domain object is already gone', async () => {
      const { key } = await aWorkspaceKey();
      const hostname = uniqueHost();
      const created = (await connect(key, hostname)).body;
      kube.delete('Domain', NAMESPACE, hostname);
      expect((await call(key, 'DELETE', `/domains/${String(created.id)}`)).status).to.equal(204);
      expect(await docs().countDocuments({ _id: created.id as string })).to.equal(0);
    });

    it('keeps the record when the cluster fails to delete the object, so the delete can be retried', async () => {
      const { key } = await aWorkspaceKey();
      const hostname = uniqueHost();
      const created = (await connect(key, hostname)).body;
      kube.failRequests({ method: 'DELETE', path: `/apis/linkplane.io/v1alpha1/namespaces/${NAMESPACE}/domains/${hostname}`, code: 500 });
      const refused = await call(key, 'DELETE', `/domains/${String(created.id)}`);
      expect(refused.status).to.equal(502);
      expect(refused.body.error!.code).to.equal('internal');
      expect(await docs().countDocuments({ _id: created.id as string })).to.equal(1);
      expect((await call(key, 'DELETE', `/domains/${String(created.id)}`)).status).to.equal(204);
      expect(domainObject(hostname)).to.equal(undefined);
    });

    it('answers 400 invalid_request for the default short domain', async () => {
      const { key } = await aWorkspaceKey();
      const res = await call(key, 'DELETE', '/domains/dom_default');
      expect(res.status).to.equal(400);
      expect(res.body.error!.code).to.equal('invalid_request');
    });
  });

  describe('without a cluster', () => {
    it('answers 503 not_configured to a connect, and creates nothing', async () => {
      const { key, workspaceId } = await aWorkspaceKey();
      const res = await connect(key, uniqueHost(), clusterless);
      expect(res.status).to.equal(503);
      expect(res.body.error!.code).to.equal('not_configured');
      expect(await docs().countDocuments({ workspace_id: workspaceId })).to.equal(0);
    });

    for (const hostname of ['bad_label.acme.com', '203.0.113.7', 'co.uk']) {
      it(`answers a malformed hostname ("${hostname}") 422 naming hostname, as with a cluster, not 503`, async () => {
        const { key } = await aWorkspaceKey();
        const res = await connect(key, hostname, clusterless);
        expect(res.status, JSON.stringify(res.body)).to.equal(422);
        expect(res.body.error!.details!.map((d) => d.path)).to.deep.equal(['hostname']);
      });
    }

    it('still lists the default domain', async () => {
      const { key } = await aWorkspaceKey();
      const res = await call(key, 'GET', '/domains', undefined, clusterless);
      expect(res.status).to.equal(200);
      expect((res.body.data as Json[]).map((d) => d.id)).to.deep.equal(['dom_default']);
    });
  });
});
