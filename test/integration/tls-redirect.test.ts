// The redirect's half of self-managed TLS, against its real listeners: HTTP-01 answers only for the host and token
// an open order wrote, and a certificate served by SNI only while its domain is active, dropped when the worker's
// broadcast says the domain changed.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startRedirect, type RunningRedirect } from '../helpers/api.ts';
import { SecretBox } from '../../src/webhooks/secret-box.ts';
import { TLS_KEY_SEAL_PURPOSE } from '../../src/domains/tls.store.ts';
import type { DomainDoc } from '../../src/domains/domain.store.ts';

const HOST = 'go.sni-shop.example';
const SECRET = 's'.repeat(40);

function getWithHost(port: number, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, headers: { Host: host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

/** Whether a TLS handshake for `servername` succeeds, trusting `ca`. */
function handshakes(port: number, servername: string, ca: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, servername, ca: [ca] }, () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('redirect with self-managed TLS: HTTP-01 answers and certificates by SNI', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let redirect: RunningRedirect;
  let dir: string;
  let certPem: string;
  let keyPem: string;

  before(async () => {
    mongo = await startTestMongo();
    dir = mkdtempSync(join(tmpdir(), 'sni-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', `/CN=${HOST}`, '-addext', `subjectAltName=DNS:${HOST}`, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    certPem = readFileSync(join(dir, 'cert.pem'), 'utf8');
    keyPem = readFileSync(join(dir, 'key.pem'), 'utf8');
    redirect = await startRedirect(testEnv(mongo, {
      SECRET_KEY: SECRET,
      ACME_DIRECTORY_URL: 'https://acme.invalid/dir',
      DOMAIN_A_TARGETS: '127.0.0.1',
      TLS_PORT: '0',
    }));
  });

  after(async () => {
    await redirect?.stop();
    await mongo?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const stores = () => redirect.infra.stores;
  const httpPort = () => Number(new URL(redirect.url).port);

  it('answers a challenge only on its own host, only while it is open', async () => {
    const now = Date.now();
    await stores().domainTls.putChallenge({ _id: 'tok_abc-1', hostname: HOST, key_authorization: 'tok_abc-1.thumb', expires_at: new Date(now + 60_000) });
    await stores().domainTls.putChallenge({ _id: 'tok_old', hostname: HOST, key_authorization: 'tok_old.thumb', expires_at: new Date(now - 1000) });
    expect(await getWithHost(httpPort(), HOST, '/.well-known/acme-challenge/tok_abc-1')).to.deep.equal({ status: 200, body: 'tok_abc-1.thumb' });
    expect(await getWithHost(httpPort(), `${HOST}:80`, '/.well-known/acme-challenge/tok_abc-1')).to.deep.equal({ status: 200, body: 'tok_abc-1.thumb' });
    expect((await getWithHost(httpPort(), 'other.sni-shop.example', '/.well-known/acme-challenge/tok_abc-1')).status).to.equal(404);
    expect((await getWithHost(httpPort(), HOST, '/.well-known/acme-challenge/tok_old')).status).to.equal(404);
    expect((await getWithHost(httpPort(), HOST, '/.well-known/acme-challenge/unknown')).status).to.equal(404);
  });

  it('serves a stored certificate by SNI while the domain is active, and drops it on the broadcast', async () => {
    const tlsPort = redirect.redirect.tlsPort()!;
    const now = new Date();
    const domain: DomainDoc = {
      _id: 'dom_sni1', workspace_id: 'ws_sni', hostname: HOST, status: 'pending_ssl', verification_token: 't', records: [], error: null,
      created_at: now, updated_at: now, activated_at: null,
    };
    await stores().domains.collection.insertOne(domain);
    await stores().domainTls.update(domain._id, HOST, {
      certificate: {
        pem: certPem,
        key_sealed: new SecretBox(SECRET, TLS_KEY_SEAL_PURPOSE).seal(keyPem, domain._id),
        not_before: now, not_after: new Date(now.getTime() + 86_400_000), renew_after: new Date(now.getTime() + 60_000_000), issuer: 'test', issued_at: now,
      },
    }, now);
    // Not active yet: no certificate, whatever is stored.
    expect(await handshakes(tlsPort, HOST, certPem)).to.equal(false);
    await stores().domains.collection.updateOne({ _id: domain._id }, { $set: { status: 'active' } });
    // The "none" answer is cached until the worker's broadcast about the domain arrives.
    await redirect.infra.bus.publish({ kind: 'domain', id: domain._id, keys: [HOST] });
    expect(await handshakes(tlsPort, HOST, certPem)).to.equal(true);
    expect(await handshakes(tlsPort, 'other.sni-shop.example', certPem)).to.equal(false);
    // Failed (or deleted): the broadcast drops the cached certificate.
    await stores().domains.collection.updateOne({ _id: domain._id }, { $set: { status: 'error' } });
    await redirect.infra.bus.publish({ kind: 'domain', id: domain._id, keys: [HOST] });
    expect(await handshakes(tlsPort, HOST, certPem)).to.equal(false);
  });
});
