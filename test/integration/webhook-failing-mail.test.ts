import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, startWorker, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Reply } from '../helpers/http.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Infra } from '../../src/main/infra.ts';
import type { WorkerService } from '../../src/main/worker.ts';
import { isEmail, ownerEmail } from '../../src/platform/email.ts';
import { ValidationError } from '../../src/platform/errors.ts';
import { until } from '../helpers/wait.ts';

interface Mail {
  from: string;
  to: string[];
  /** The raw message with quoted-printable soft line breaks removed. */
  raw: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the owner e-mail when a webhook endpoint turns failing (real SMTP server, spec 6.4)', function () {
  this.timeout(40_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let workerInfra: Infra;
  let worker: WorkerService;
  let tenants: Tenants;
  let smtp: SMTPServer;
  let receiver: Server;
  let receiverUrl: string;
  let answer = 500;
  const mails: Mail[] = [];

  before(async () => {
    mongo = await startTestMongo();
    smtp = new SMTPServer({
      secure: false,
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const envelope = session.envelope;
          mails.push({
            from: envelope.mailFrom ? envelope.mailFrom.address : '',
            to: envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8').replace(/=\r?\n/g, ''),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const smtpPort = (smtp.server.address() as AddressInfo).port;
    const env = testEnv(mongo, {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms,50ms',
      WEBHOOK_TIMEOUT_MS: '400',
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      MAIL_FROM: 'Linkplane Test <webhooks@linkplane.test>',
    });
    api = await startApi(env);
    ({ infra: workerInfra, worker } = await startWorker(env));
    tenants = await Tenants.open(mongo);
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(answer).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });

  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await worker.stop();
    await workerInfra.close();
    await api.stop();
    await tenants.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    await mongo.stop();
  });

  const call = (method: string, path: string, key: string, body?: unknown): Promise<Reply> => callApi(api.url, method, path, { key, body });

  const to = (address: string) => mails.filter((m) => m.to.includes(address));

  it('e-mails the workspace owner exactly once per transition to failing, naming the endpoint URL; again after re-enabling', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'business', owner_email: 'owner@acme.test' });
    const key = (await tenants.aWorkspaceKey(ws._id)).key;
    expect((await call('GET', '/workspace', key)).body.owner_email).to.equal('owner@acme.test');
    const url = `${receiverUrl}/hooks/acme`;
    const created = await call('POST', '/webhooks', key, { url, events: ['link.created'] });
    expect(created.status).to.equal(201);
    const id = created.body.id as string;

    // Two events fail their whole schedule: two deliveries reach the end, one transition, one e-mail.
    answer = 500;
    for (let i = 0; i < 2; i++) expect((await call('POST', '/links', key, { url: `https://example.com/${i}` })).status).to.equal(201);
    await until(async () => (await call('GET', `/webhooks/${id}`, key)).body.status === 'failing', 15_000, 'endpoint failing');
    await until(() => to('owner@acme.test').length >= 1, 10_000, 'the e-mail');
    await sleep(1000);
    expect(to('owner@acme.test'), 'exactly one e-mail').to.have.length(1);
    const [mail] = to('owner@acme.test');
    expect(mail!.from).to.equal('webhooks@linkplane.test');
    expect(mail!.raw).to.include(url);
    expect(mail!.raw).to.include(`/v1/webhooks/${id}`);
    expect(mail!.raw).to.include('{"status":"active"}');
    expect(mail!.raw).to.match(/Content-Type: text\/plain/i);
    expect(mail!.raw).to.match(/Content-Type: text\/html/i);

    // Re-enabled, still broken: the next event fails its schedule again, and a second e-mail goes out.
    expect((await call('PATCH', `/webhooks/${id}`, key, { status: 'active' })).body.status).to.equal('active');
    expect((await call('POST', '/links', key, { url: 'https://example.com/again' })).status).to.equal(201);
    await until(() => to('owner@acme.test').length >= 2, 15_000, 'the second e-mail');
    await sleep(500);
    expect(to('owner@acme.test')).to.have.length(2);
    expect(mails.filter((m) => !m.to.includes('owner@acme.test')), 'nobody else').to.have.length(0);
  });

  it("e-mails the partner's address for a partner endpoint, and nobody when the owner has no address", async () => {
    const partner = await tenants.aPartner();
    await tenants.partners.collection.updateOne({ _id: partner }, { $set: { owner_email: 'ops@agency.test' } });
    const partnerKey = (await tenants.aPartnerKey(partner)).key;
    const client = await tenants.aWorkspace({ plan_id: 'business', partner_id: partner, owner_email: 'client@client.test' });
    const clientKey = (await tenants.aWorkspaceKey(client._id)).key;
    const noAddress = await tenants.aWorkspace({ plan_id: 'business' });
    const noAddressKey = (await tenants.aWorkspaceKey(noAddress._id)).key;
    answer = 500;
    const ofPartner = await call('POST', '/webhooks', partnerKey, { url: `${receiverUrl}/hooks/partner`, events: ['link.created'] });
    const silent = await call('POST', '/webhooks', noAddressKey, { url: `${receiverUrl}/hooks/silent`, events: ['link.created'] });
    const before = mails.length;
    expect((await call('POST', '/links', clientKey, { url: 'https://example.com/p' })).status).to.equal(201);
    expect((await call('POST', '/links', noAddressKey, { url: 'https://example.com/s' })).status).to.equal(201);
    await until(() => to('ops@agency.test').length >= 1, 15_000, 'the partner e-mail');
    await until(async () => (await call('GET', `/webhooks/${silent.body.id as string}`, noAddressKey)).body.status === 'failing', 15_000, 'silent endpoint failing');
    await sleep(500);
    expect(mails.slice(before).map((m) => m.to), 'the partner only').to.deep.equal([['ops@agency.test']]);
    expect(to('ops@agency.test')[0]!.raw).to.include(`${receiverUrl}/hooks/partner`);
    expect(ofPartner.status).to.equal(201);
  });
});

describe('owner e-mail addresses and mail configuration', () => {
  const load = (env: Record<string, string>) => loadConfig('worker', { NODE_ENV: 'test', MONGODB_URI: 'mongodb://127.0.0.1:27017', ...env });

  it('accepts an address, refuses anything else', () => {
    expect(ownerEmail(' owner@acme.test ')).to.equal('owner@acme.test');
    expect(ownerEmail(undefined)).to.equal(null);
    expect(ownerEmail('')).to.equal(null);
    for (const bad of ['owner', 'owner@', '@acme.test', 'owner@acme', 'a b@acme.test', 'Owner <owner@acme.test>']) expect(isEmail(bad), bad).to.equal(false);
    expect(() => ownerEmail('nope')).to.throw(ValidationError);
  });

  it('reads SMTP_URL, MAIL_FROM and WEBHOOK_ACK_WAIT_MS', () => {
    expect(load({}).mail).to.deep.equal({ smtpUrl: null, from: 'Linkplane <no-reply@localhost>' });
    expect(load({ SMTP_URL: 'smtps://u:p@mail.example.com' }).mail.smtpUrl).to.equal('smtps://u:p@mail.example.com');
    expect(() => load({ SMTP_URL: 'http://mail.example.com' })).to.throw(/SMTP_URL/);
    expect(load({}).webhookDelivery.ackWaitMs).to.equal(30_000);
    expect(load({ WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_ACK_WAIT_MS: '2000' }).webhookDelivery.ackWaitMs).to.equal(2000);
    expect(() => load({ WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_ACK_WAIT_MS: '1999' })).to.throw(/WEBHOOK_ACK_WAIT_MS/);
  });
});
