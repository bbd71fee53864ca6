// Alerts end to end: rules through the API, evaluated by the worker's evaluator over real state (webhook endpoints,
// domains, rotator health, clicks, usage), one firing per incident from firing to resolved, e-mailed to a real SMTP
// server and emitted as alert.fired / alert.resolved to a real webhook receiver.
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { MongoClient, type Db } from 'mongodb';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, startWorker, type RunningApi, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectInvalid, expectRefused, type Json, type Reply } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import { periodOf } from '../../src/tenancy/usage.store.ts';
import { RollupStore } from '../../src/analytics/rollup.store.ts';
import { windowEnd } from '../../src/alerts/alert-evaluator.ts';
import type { ClickRecord } from '../../src/visitor/click-record.ts';

describe('Alerts end to end', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let worker: RunningWorker;
  let tenants: Tenants;
  let client: MongoClient;
  let db: Db;
  let smtp: SMTPServer;
  let receiver: Server;
  let receiverUrl: string;
  const mails: Array<{ to: string[]; raw: string }> = [];
  const received: Array<{ type: string; body: Json }> = [];

  before(async () => {
    mongo = await startTestMongo();
    smtp = new SMTPServer({
      secure: false,
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8').replace(/=\r?\n/g, '') });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ type: String(req.headers['x-service-event']), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    // Evaluations are driven by the test (evaluateAll), the background interval is far away.
    const env = testEnv(mongo, {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
      ALERT_EVAL_INTERVAL_MS: '3600000',
    });
    api = await startApi(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
    client = new MongoClient(mongo.uri);
    await client.connect();
    db = client.db(mongo.dbName);
  });

  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    await client.close();
    await tenants.close();
    await worker.stop();
    await api.stop();
    await mongo.stop();
  });

  const evaluate = () => worker.worker.alerts.evaluateAll();
  const aWorkspace = async (overrides: Parameters<Tenants['aWorkspace']>[0] = {}) => {
    const ws = await tenants.aWorkspace({ plan_id: 'business', ...overrides });
    const key = (await tenants.aWorkspaceKey(ws._id)).key;
    const call = (method: string, path: string, body?: unknown): Promise<Reply> => callApi(api.url, method, path, { key, ...(body === undefined ? {} : { body }) });
    return { id: ws._id, key, call };
  };
  const aRule = async (call: (m: string, p: string, b?: unknown) => Promise<Reply>, body: Json): Promise<Json & { id: string }> => {
    const reply = await call('POST', '/alerts/rules', { name: `rule ${String(body.type)}`, ...body });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(201);
    return reply.body as Json & { id: string };
  };
  const firingsOf = async (ruleId: string) => db.collection<{ state: string; value: number }>('alert_firings').find({ rule_id: ruleId }).sort({ started_at: 1 }).toArray();

  it('creates, lists, reads, updates and deletes rules, validating each type’s threshold, tenant-bound', async () => {
    const { call } = await aWorkspace();
    const other = await aWorkspace();
    const rule = await aRule(call, { type: 'click_spike', threshold: 3, window_minutes: 15, channels: { emails: ['ops@example.com'], webhook: true } });
    expect(rule).to.include({ type: 'click_spike', threshold: 3, window_minutes: 15, baseline_windows: 7, cooldown_minutes: 60, enabled: true, link_id: null });
    expect((await call('GET', `/alerts/rules/${rule.id}`)).body).to.deep.equal(rule);
    expect(((await call('GET', '/alerts/rules')).body.data as Json[]).map((r) => r.id)).to.deep.equal([rule.id]);
    const patched = await call('PATCH', `/alerts/rules/${rule.id}`, { threshold: 4, enabled: false });
    expect(patched.body).to.include({ threshold: 4, enabled: false });
    expectInvalid(await call('PATCH', `/alerts/rules/${rule.id}`, { type: 'bot_share' }), 'type');
    expectInvalid(await call('PATCH', `/alerts/rules/${rule.id}`, { threshold: 0.5 }), 'threshold');
    expectInvalid(await call('POST', '/alerts/rules', { name: 'x', type: 'click_drop', threshold: 2 }), 'threshold');
    expectInvalid(await call('POST', '/alerts/rules', { name: 'x', type: 'bot_share', threshold: 1.5 }), 'threshold');
    expectInvalid(await call('POST', '/alerts/rules', { name: 'x', type: 'webhook_failing', threshold: 0.5 }), 'threshold');
    expectInvalid(await call('POST', '/alerts/rules', { name: 'x', type: 'domain_error', threshold: 1, link_id: 'lnk_whatever' }), 'link_id');
    expectInvalid(await call('POST', '/alerts/rules', { name: 'x', type: 'bot_share', threshold: 0.5, link_id: 'lnk_missing' }), 'link_id');
    expectInvalid(await call('POST', '/alerts/rules', { name: 'x', type: 'heat_wave', threshold: 1 }), 'type');
    expectInvalid(await call('POST', '/alerts/rules', { name: 'x', type: 'bot_share', threshold: 0.5, channels: { emails: ['nope'], webhook: false } }), 'channels.emails[0]');
    expectRefused(await other.call('GET', `/alerts/rules/${rule.id}`), 404, 'not_found');
    expectRefused(await other.call('DELETE', `/alerts/rules/${rule.id}`), 404, 'not_found');
    expect((await call('DELETE', `/alerts/rules/${rule.id}`)).status).to.equal(204);
    expectRefused(await call('GET', `/alerts/rules/${rule.id}`), 404, 'not_found');
  });

  it('fires once per incident (however many evaluations), resolves, e-mails and emits alert.fired / alert.resolved, and honours the cooldown', async () => {
    const { id: workspaceId, call } = await aWorkspace();
    expect((await call('POST', '/webhooks', { url: `${receiverUrl}/alerts`, events: ['alert.fired', 'alert.resolved'] })).status).to.equal(201);
    const broken = await call('POST', '/webhooks', { url: `${receiverUrl}/broken`, events: ['link.created'] });
    const rule = await aRule(call, { type: 'webhook_failing', threshold: 1, channels: { emails: ['ops@example.com'], webhook: true } });

    await evaluate();
    expect(await firingsOf(rule.id), 'nothing failing, nothing fired').to.have.length(0);
    await db.collection('webhooks').updateOne({ _id: broken.body.id as never }, { $set: { status: 'failing' } });
    await evaluate();
    await evaluate();
    await evaluate();
    const firings = await firingsOf(rule.id);
    expect(firings, 'one firing for the incident').to.have.length(1);
    const listed = await call('GET', '/alerts/firings?state=firing');
    const firing = (listed.body.data as Json[])[0]!;
    expect(firing).to.include({ rule_id: rule.id, type: 'webhook_failing', state: 'firing', value: 1, threshold: 1, resolved_at: null, acknowledged_at: null });
    expect(firing.message).to.contain('1 webhook endpoint(s) failing');

    const acknowledged = await call('POST', `/alerts/firings/${firing.id as string}/acknowledge`);
    expect(acknowledged.body.acknowledged_at).to.be.a('string');
    expect(acknowledged.body.state, 'acknowledging does not resolve').to.equal('firing');
    expect((await call('POST', `/alerts/firings/${firing.id as string}/acknowledge`)).body.acknowledged_at).to.equal(acknowledged.body.acknowledged_at);

    await call('PATCH', `/webhooks/${broken.body.id as string}`, { status: 'active' });
    await evaluate();
    const resolved = (await call('GET', `/alerts/firings/${firing.id as string}`)).body;
    expect(resolved).to.include({ state: 'resolved', value: 1, last_value: 0 });
    expect(resolved.resolved_at).to.be.a('string');

    const events = await until(() => {
      const mine = received.filter((r) => (r.body.data as Json).rule_id === rule.id);
      return mine.length >= 2 ? mine : false;
    }, 20_000, 'alert.fired and alert.resolved delivered');
    expect(events.map((e) => e.type)).to.deep.equal(['alert.fired', 'alert.resolved']);
    expect((events[0]!.body.data as Json).state).to.equal('firing');
    const mine = await until(() => {
      const found = mails.filter((m) => m.raw.includes(`rule webhook_failing`) && m.raw.includes(firing.id as string));
      return found.length >= 2 ? found : false;
    }, 20_000, 'two e-mails');
    expect(mine.map((m) => m.to)).to.deep.equal([['ops@example.com'], ['ops@example.com']]);
    expect(mine.map((m) => /Subject: (.*)/.exec(m.raw)![1])).to.deep.equal(['[Linkplane] Alert firing: rule webhook_failing', '[Linkplane] Alert resolved: rule webhook_failing']);

    // A new incident within the cooldown (60 min by default) opens no firing; with the cooldown at 0 it does.
    await db.collection('webhooks').updateOne({ _id: broken.body.id as never }, { $set: { status: 'failing' } });
    await evaluate();
    expect(await firingsOf(rule.id)).to.have.length(1);
    await call('PATCH', `/alerts/rules/${rule.id}`, { cooldown_minutes: 0 });
    await evaluate();
    await evaluate();
    expect((await firingsOf(rule.id)).map((f) => f.state)).to.deep.equal(['resolved', 'firing']);
    expect(workspaceId).to.be.a('string');
  });

  it('measures clicks from the analytics rollups against the baseline (spike, drop), the bot share, domains, rotator health and the plan share', async () => {
    const { id: ws, call } = await aWorkspace({ limits: { tracked_clicks_per_month: 10 } });
    const minute = 60_000;
    // Whole quarter-hours in the past: E ends the window the first evaluation (at E + 1 min) looks at.
    const E = windowEnd(new Date()).getTime() - 60 * minute;
    const click = (minutesBeforeE: number, visitorType: ClickRecord['visitor']['visitor_type'] = 'human'): ClickRecord => ({
      id: `clk_${Math.random().toString(36).slice(2)}`,
      ts: new Date(E - minutesBeforeE * minute).toISOString(),
      workspace_id: ws,
      link_id: 'lnk_alerting',
      domain_id: 'dom_default',
      domain: 'lp.test',
      slug: 'alerting',
      outcome: 'redirect',
      destination: 'https://example.com/',
      decision: { step: 'url', ruleId: null, workspaceRule: false, targetingIndex: null, variantIndex: null, destinationId: null, rotatorFallback: false },
      visitor: {
        ip: null, device: 'desktop', os: 'linux', browser: null, language: null, country: 'FR', region: null, city: null, asn: null,
        visitor_type: visitorType, verified_bot: false, bot_name: null, proxy_type: null, quality: 100, referer: null, visit: 'first', visitor_id: 'v_alert',
      },
    });
    // Baseline: 2 clicks in each of the three quarter-hours before the last one; 10 in the last one, 6 of them bots.
    const clicks = [20, 25, 35, 40, 50, 55].map((m) => click(m));
    for (let i = 0; i < 10; i++) clicks.push(click(i + 1, i < 6 ? 'search_bot' : 'human'));
    await new RollupStore(db).apply(clicks);
    await db.collection('domains').insertOne({ _id: `dom_${Math.random()}`, workspace_id: ws, hostname: 'broken.example', status: 'error' } as never);
    await db.collection('links').insertOne({ _id: 'lnk_rot_alert', workspace_id: ws, rotator: { enabled: true, destinations: [] } } as never);
    await db.collection('rotator_health').insertOne({ _id: 'lnk_rot_alert|d1', link_id: 'lnk_rot_alert', destination_id: 'd1', healthy: false } as never);
    await db.collection('usage').insertOne({ _id: `${ws}:${periodOf(new Date()).key}`, workspace_id: ws, period: periodOf(new Date()).key, tracked_clicks: 9 } as never);

    const common = { window_minutes: 15, baseline_windows: 3 };
    expectInvalid(await call('POST', '/alerts/rules', { name: 'x', type: 'click_spike', threshold: 3, window_minutes: 10 }), 'window_minutes');
    const spike = await aRule(call, { type: 'click_spike', threshold: 3, ...common });
    const quietSpike = await aRule(call, { type: 'click_spike', threshold: 6, ...common });
    const drop = await aRule(call, { type: 'click_drop', threshold: 0.5, ...common });
    const bots = await aRule(call, { type: 'bot_share', threshold: 0.5, window_minutes: 15 });
    const domain = await aRule(call, { type: 'domain_error', threshold: 1 });
    const rotator = await aRule(call, { type: 'rotator_unhealthy', threshold: 1 });
    const share = await aRule(call, { type: 'tracked_clicks_share', threshold: 0.8 });
    const fullShare = await aRule(call, { type: 'tracked_clicks_share', threshold: 1 });
    await worker.worker.alerts.evaluateAll(new Date(E + minute));
    const valueOf = async (rule: { id: string }) => (await firingsOf(rule.id)).map((f) => f.value);
    expect(await valueOf(spike), '10 clicks against a baseline of 2: 5x').to.deep.equal([5]);
    expect(await valueOf(quietSpike), '5x is below 6x').to.deep.equal([]);
    expect(await valueOf(drop), 'more clicks than the baseline is no drop').to.deep.equal([]);
    expect(await valueOf(bots)).to.deep.equal([0.6]);
    expect(await valueOf(domain)).to.deep.equal([1]);
    expect(await valueOf(rotator)).to.deep.equal([1]);
    expect(await valueOf(share)).to.deep.equal([0.9]);
    expect(await valueOf(fullShare)).to.deep.equal([]);

    // Half an hour on, the traffic has stopped: the last quarter-hour is empty against a baseline of 10 in two: a drop.
    const later = await aRule(call, { type: 'click_drop', threshold: 0.5, window_minutes: 15, baseline_windows: 2 });
    await worker.worker.alerts.evaluateAll(new Date(E + 31 * minute));
    expect(await valueOf(later), 'no click against 5 per quarter-hour before: 0x').to.deep.equal([0]);
    expect((await firingsOf(spike.id)).map((f) => f.state), 'the spike is over').to.deep.equal(['resolved']);
  });
});
