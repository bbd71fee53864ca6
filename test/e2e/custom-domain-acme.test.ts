// A custom domain from end to end without Kubernetes: connected through the API, its DNS verified by the worker
// against a real DNS server on loopback, a certificate ordered from Pebble (Let's Encrypt's ACME test server, which
// really validates HTTP-01 against our redirect's plain listener), stored, served by the redirect's TLS listener by
// SNI to a client that verifies the chain against Pebble's root, and renewed at a short part of its lifetime.
import { expect } from 'chai';
import { request as httpsRequest } from 'node:https';
import { connect, type PeerCertificate } from 'node:tls';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, startWorker, type RunningApi, type RunningRedirect, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Reply } from '../helpers/http.ts';
import { TestDns } from '../helpers/dns-server.ts';
import { startPebble, type Pebble } from '../helpers/pebble.ts';

const HOSTNAME = 'go.tls-shop.example';
const STRANGER = 'never-connected.tls-shop.example';
/** Pebble's certificates live this long; renewed at 10 % of it (TLS_RENEW_AT_PERCENT), about every 6 s. */
const VALIDITY_SECONDS = 60;

type Handshake = { ok: true; certificate: PeerCertificate } | { ok: false; error: string };

/** A real TLS client: connects by SNI and verifies the chain against `ca` only. */
function handshake(port: number, servername: string, ca: string): Promise<Handshake> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, servername, ca: [ca], rejectUnauthorized: true }, () => {
      const certificate = socket.getPeerCertificate();
      socket.end();
      resolve({ ok: true, certificate });
    });
    socket.once('error', (error) => resolve({ ok: false, error: error.message }));
  });
}

/** GET over HTTPS to the redirect's TLS port with SNI and Host set to the custom domain. */
function httpsGet(port: number, host: string, path: string, ca: string): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    httpsRequest({ host: '127.0.0.1', port, path, servername: host, headers: { Host: host }, ca: [ca] }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, location: res.headers.location });
    })
      .on('error', reject)
      .end();
  });
}

async function eventually<T>(probe: () => Promise<T | false | undefined> | T | false | undefined, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== false && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Custom domain with ACME: API → worker (DNS, Pebble) → redirect over TLS by SNI, then renewal', function () {
  this.timeout(240_000);
  let mongo: TestMongo;
  let dns: TestDns;
  let pebble: Pebble;
  let api: RunningApi;
  let worker: RunningWorker;
  let redirect: RunningRedirect;
  let tenants: Tenants;
  let key: string;

  before(async () => {
    mongo = await startTestMongo();
    dns = await TestDns.start();
    const { env: base } = await shortLinkEnv(mongo);
    pebble = await startPebble({ httpPort: Number(base.REDIRECT_PORT), dnsServer: `127.0.0.1:${dns.port}`, certificateValiditySeconds: VALIDITY_SECONDS });
    const env = {
      ...base,
      DOMAIN_A_TARGETS: '127.0.0.1',
      ACME_DIRECTORY_URL: pebble.directoryUrl,
      ACME_CA_FILE: pebble.caFile,
      ACME_CONTACT_EMAIL: 'ops@tls-shop.example',
      TLS_PORT: '0',
      TLS_SWEEP_INTERVAL_MS: '200',
      TLS_RENEW_AT_PERCENT: '10',
      DNS_RESOLVERS: `127.0.0.1:${dns.port}`,
      DNS_CHECK_BACKOFF: '50ms',
      TLS_ISSUANCE_BACKOFF: '300ms',
    };
    api = await startApi(env);
    redirect = await startRedirect(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
    key = (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'business' }))._id)).key;
  });

  after(async () => {
    await tenants?.close();
    await worker?.stop();
    await redirect?.stop();
    await api?.stop();
    await pebble?.stop();
    await dns?.stop();
    await mongo?.stop();
  });

  const call = (method: string, path: string, body?: unknown): Promise<Reply> => callApi(api.url, method, path, { key, ...(body === undefined ? {} : { body }) });
  const tlsPort = (): number => redirect.redirect.tlsPort()!;
  const stored = () => worker.infra.stores.domainTls.domains.findOne({ hostname: HOSTNAME });

  it('connects, verifies, obtains a Pebble certificate, serves it by SNI, and renews it', async () => {
    const created = await call('POST', '/domains', { hostname: HOSTNAME });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const id = created.body.id as string;
    expect(created.body.status).to.equal('pending_verification');
    expect(created.body.certificate).to.equal(null);
    const records = created.body.records as Array<{ type: string; name: string; value: string }>;
    const txt = records.find((r) => r.type === 'TXT')!;
    expect(records.find((r) => r.type === 'A')).to.deep.include({ name: HOSTNAME, value: '127.0.0.1' });

    // DNS not set: rounds pass, the domain stays pending, nothing is ordered, and no handshake succeeds for it.
    await worker.worker.tls!.runOnce();
    await worker.worker.tls!.runOnce();
    expect((await call('GET', `/domains/${id}`)).body.status).to.equal('pending_verification');
    expect((await stored())?.certificate ?? null).to.equal(null);
    expect((await stored())?.dns?.last_error).to.match(/TXT/);
    expect(await worker.infra.stores.domainTls.challenges.countDocuments({})).to.equal(0);
    expect(await worker.infra.stores.domainTls.accounts.countDocuments({})).to.equal(0);
    const root = await pebble.root();
    expect((await handshake(tlsPort(), HOSTNAME, root)).ok).to.equal(false);

    // The customer sets the records: verified, ordered, validated over HTTP-01 by Pebble, stored, active.
    dns.zone.set(txt.name, { TXT: [txt.value] });
    dns.zone.set(HOSTNAME, { A: ['127.0.0.1'] });
    await eventually(async () => ((await call('GET', `/domains/${id}`)).body.status === 'active' ? true : undefined), `active in the API (pebble: ${pebble.output().slice(-2000)})`);

    const active = (await call('GET', `/domains/${id}`)).body;
    expect(active.error).to.equal(null);
    expect(active.certificate).to.have.keys(['issuer', 'not_before', 'not_after', 'renews_at']);
    const certificate = active.certificate as { not_before: string; not_after: string };
    expect(Date.parse(certificate.not_after) - Date.parse(certificate.not_before)).to.be.within((VALIDITY_SECONDS - 1) * 1000, (VALIDITY_SECONDS + 1) * 1000);

    const first = await handshake(tlsPort(), HOSTNAME, root);
    expect(first.ok, first.ok ? '' : first.error).to.equal(true);
    const firstCert = (first as { certificate: PeerCertificate }).certificate;
    expect(firstCert.subjectaltname).to.include(`DNS:${HOSTNAME}`);
    // The private key is sealed at rest: the stored document holds no PEM key.
    const doc = (await stored())!;
    expect(doc.certificate!.key_sealed).to.match(/^v1\./);
    expect(JSON.stringify(doc)).to.not.include('PRIVATE KEY');

    // A name that is not an active custom domain fails the handshake, and was never ordered.
    expect(await handshake(tlsPort(), STRANGER, root)).to.deep.include({ ok: false });

    // Links on the domain are served over HTTPS.
    const link = await call('POST', '/links', { url: 'https://tls-shop.example/sale', domain_id: id, slug: 'promo' });
    expect(link.status, JSON.stringify(link.body)).to.equal(201);
    expect(await httpsGet(tlsPort(), HOSTNAME, '/promo', root)).to.deep.equal({ status: 302, location: 'https://tls-shop.example/sale' });

    // Renewal at 10 % of a 60 s lifetime: a new certificate, validated again, is served without a new event.
    const renewed = await eventually(async () => {
      const shake = await handshake(tlsPort(), HOSTNAME, root);
      return shake.ok && shake.certificate.serialNumber !== firstCert.serialNumber ? shake.certificate : undefined;
    }, 'a renewed certificate served by SNI');
    expect(renewed.subjectaltname).to.include(`DNS:${HOSTNAME}`);
    expect(Date.parse(renewed.valid_to)).to.be.greaterThan(Date.parse(firstCert.valid_to));
    expect((await stored())!.issued_count).to.be.at.least(2);
    expect((await call('GET', `/domains/${id}`)).body.status).to.equal('active');

    const events = await call('GET', '/events?limit=100');
    const types = (events.body.data as Array<{ type: string }>).map((e) => e.type).filter((t) => t.startsWith('domain.'));
    expect(types).to.deep.equal(['domain.activated', 'domain.pending_ssl']);

    // Deleted: the certificate goes with it and the name no longer completes a handshake (a renewal may be in
    // flight: the worker's next round removes what it stored after the delete).
    expect((await call('DELETE', `/domains/${id}`)).status).to.equal(204);
    await eventually(async () => ((await stored()) === null ? true : undefined), 'the stored certificate removed', 10_000);
    await eventually(async () => ((await handshake(tlsPort(), HOSTNAME, root)).ok ? undefined : true), 'the handshake refused after delete', 10_000);
  });
  it('puts the domain in error with the CA\'s reason when HTTP-01 validation fails, and activates it once it passes', async () => {
    const host = 'promo.tls-shop.example';
    const created = await call('POST', '/domains', { hostname: host });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const id = created.body.id as string;
    const txt = (created.body.records as Array<{ type: string; name: string; value: string }>).find((r) => r.type === 'TXT')!;
    // Our check sees 127.0.0.1; every later answer (Pebble's) points at an address where nothing listens.
    dns.zone.set(txt.name, { TXT: [txt.value] });
    dns.zone.set(host, { A: ['127.0.0.1'], thenA: ['127.0.0.2'] });
    const failed = await eventually(async () => {
      const body = (await call('GET', `/domains/${id}`)).body;
      return body.status === 'error' ? body : undefined;
    }, 'error in the API');
    expect(failed.error).to.deep.include({ reason: 'ChallengeFailed' });
    expect((failed.error as { message: string }).message).to.contain(host);
    expect(failed.certificate).to.equal(null);
    expect(await worker.infra.stores.domainTls.challenges.countDocuments({ hostname: host }), 'the answer is withdrawn').to.equal(0);

    // The customer fixes the record: the retry (TLS_ISSUANCE_BACKOFF) validates and the domain turns active.
    dns.zone.set(host, { A: ['127.0.0.1'], thenA: ['127.0.0.1'] });
    await eventually(async () => ((await call('GET', `/domains/${id}`)).body.status === 'active' ? true : undefined), 'active after the retry');
    expect((await call('GET', `/domains/${id}`)).body.error).to.equal(null);
    const root = await pebble.root();
    expect((await handshake(tlsPort(), host, root)).ok).to.equal(true);

    const events = await call('GET', '/events?limit=100');
    const mine = (events.body.data as Array<{ type: string; data: { id: string; reason?: string } }>).filter((e) => e.data?.id === id);
    expect(mine.map((e) => e.type)).to.deep.equal(['domain.activated', 'domain.error', 'domain.pending_ssl']);
    expect(mine[1]!.data.reason).to.equal('ChallengeFailed');
  });
});
