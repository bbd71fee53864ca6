// A custom domain from end to end: connected through the API, verified by the real operator against a real DNS
// server on loopback, certified (the test plays cert-manager on the in-process Kubernetes API server), activated by
// the worker from the DOMAINS stream, and then serving links on the redirect process; deleted, it stops serving.
import { expect } from 'chai';
import { get } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { NATS_URL, shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, startWorker, type RunningApi, type RunningRedirect, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Reply } from '../helpers/http.ts';
import { startKubeApiServer, type KubeApiServer, type KubeObject } from '../helpers/kube-apiserver.ts';
import { TestDns } from '../helpers/dns-server.ts';
import { loadOperatorConfig } from '../../src/config/operator.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { connectNats, type Nats } from '../../src/platform/nats.ts';
import { buildOperator, type Operator } from '../../operator/operator.ts';
import { NatsDomainEventPublisher } from '../../operator/publisher.ts';
import type { Domain } from '../../operator/domain.ts';

const NAMESPACE = 'linkplane';
const CNAME_TARGET = 'ingress.linkplane.test';
const HOSTNAME = 'links.acme-shop.example';

/** GET with a Host header of our choosing (fetch will not send one), answered with status and Location. */
function visitHost(base: string, host: string, path: string): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    get(`${base}${path}`, { headers: { Host: host } }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, location: res.headers.location });
    }).on('error', reject);
  });
}

async function eventually<T>(probe: () => Promise<T | false | undefined> | T | false | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== false && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('Custom domain: API → operator → worker → redirect', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let kube: KubeApiServer;
  let kubeConfig: KubeConfig;
  let dns: TestDns;
  let api: RunningApi;
  let worker: RunningWorker;
  let redirect: RunningRedirect;
  let operatorNats: Nats;
  let operator: Operator;
  let tenants: Tenants;
  let key: string;
  let base: string;

  before(async () => {
    mongo = await startTestMongo();
    kube = await startKubeApiServer();
    kubeConfig = kube.kubeConfig();
    dns = await TestDns.start();
    let env: Record<string, string>;
    ({ env, base } = await shortLinkEnv(mongo, {
      DOMAINS_KUBE: 'kubeconfig',
      KUBECONFIG: kube.kubeconfigFile(),
      DOMAIN_NAMESPACE: NAMESPACE,
      DOMAIN_CNAME_TARGET: CNAME_TARGET,
    }));
    api = await startApi(env);
    worker = await startWorker(env);
    redirect = await startRedirect(env);
    const { logger } = createLogger({ level: 'silent', name: 'operator' });
    operatorNats = await connectNats({ url: NATS_URL, prefix: env.NATS_PREFIX!, name: 'operator-e2e', logger });
    operator = buildOperator({
      config: loadOperatorConfig({
        POD_NAME: 'operator-e2e',
        POD_NAMESPACE: NAMESPACE,
        NATS_URL,
        NATS_PREFIX: env.NATS_PREFIX!,
        INGRESS_SERVICE_NAME: 'linkplane-redirect',
        DOMAIN_CNAME_TARGET: CNAME_TARGET,
        DNS_RESOLVERS: `127.0.0.1:${dns.port}`,
        DNS_CHECK_BACKOFF: '50ms',
        LEASE_DURATION_MS: '1000',
        LEASE_RENEW_MS: '150',
        OPERATOR_METRICS_PORT: '0',
        HOST: '127.0.0.1',
      }),
      logger,
      kubeConfig,
      nats: operatorNats,
      publisher: new NatsDomainEventPublisher(operatorNats),
      queue: { baseDelayMs: 20, maxDelayMs: 500 },
      serveOps: false,
    });
    await operator.start();
    tenants = await Tenants.open(mongo);
    key = (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'business' }))._id)).key;
  });

  after(async () => {
    await operator.stop({ release: true });
    await operatorNats.drain();
    await tenants.close();
    await redirect.stop();
    await worker.stop();
    await api.stop();
    await dns.stop();
    await kube.stop();
    await mongo.stop();
  });

  const call = (method: string, path: string, body?: unknown): Promise<Reply> => callApi(api.url, method, path, { key, ...(body === undefined ? {} : { body }) });
  const domainObject = (): (Domain & KubeObject) | undefined => kube.get<Domain & KubeObject>('Domain', NAMESPACE, HOSTNAME);

  it('serves links on the domain once DNS is set and the certificate is issued, and stops when it is deleted', async () => {
    const created = await call('POST', '/domains', { hostname: HOSTNAME });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const id = created.body.id as string;
    expect(created.body.status).to.equal('pending_verification');
    const records = created.body.records as Array<{ type: string; name: string; value: string }>;
    const txt = records.find((r) => r.type === 'TXT')!;
    const cname = records.find((r) => r.type === 'CNAME')!;
    expect(cname).to.deep.include({ name: HOSTNAME, value: CNAME_TARGET });

    // Not ours yet: the host serves nothing, and a link cannot be put on it.
    expect((await visitHost(base, HOSTNAME, '/promo')).status).to.equal(404);
    expect((await call('POST', '/links', { url: 'https://shop.example/sale', domain_id: id, slug: 'promo' })).status).to.not.equal(201);

    // The customer sets the records; the operator verifies them and asks cert-manager for a certificate.
    dns.zone.set(txt.name, { TXT: [txt.value] });
    dns.zone.set(HOSTNAME, { CNAME: CNAME_TARGET });
    const pending = await eventually(() => (domainObject()?.status?.phase === 'PendingSSL' ? domainObject() : undefined), 'PendingSSL');
    await eventually(async () => ((await call('GET', `/domains/${id}`)).body.status === 'pending_ssl' ? true : undefined), 'pending_ssl in the API');

    // cert-manager issues it.
    kube.patchStatus('Certificate', NAMESPACE, pending.status!.certificateName!, {
      conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'Certificate is up to date and has not expired', lastTransitionTime: new Date().toISOString() }],
    });
    await eventually(async () => ((await call('GET', `/domains/${id}`)).body.status === 'active' ? true : undefined), 'active in the API');

    const link = await call('POST', '/links', { url: 'https://shop.example/sale', domain_id: id, slug: 'promo' });
    expect(link.status, JSON.stringify(link.body)).to.equal(201);
    expect(link.body.short_url).to.equal(`https://${HOSTNAME}/promo`);
    const served = await visitHost(base, HOSTNAME, '/promo');
    expect(served).to.deep.equal({ status: 302, location: 'https://shop.example/sale' });

    const events = await call('GET', '/events?limit=100');
    const types = (events.body.data as Array<{ type: string }>).map((e) => e.type).filter((t) => t.startsWith('domain.'));
    expect(types).to.deep.equal(['domain.activated', 'domain.pending_ssl']);

    expect((await call('DELETE', `/domains/${id}`)).status).to.equal(204);
    expect((await visitHost(base, HOSTNAME, '/promo')).status).to.equal(404);
    await eventually(() => (domainObject() === undefined ? true : undefined), 'the Domain object removed after cleanup');
    expect(kube.list('Certificate', NAMESPACE)).to.deep.equal([]);
    expect(kube.list('Ingress', NAMESPACE)).to.deep.equal([]);
  });
});
