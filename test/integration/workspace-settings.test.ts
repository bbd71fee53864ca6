import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { connect } from '@nats-io/transport-node';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv, NATS_URL } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Json, type Reply, expectInvalid, expectRefused } from '../helpers/http.ts';
import { items } from '../helpers/link-fixtures.ts';
import { WorkspaceProfileSchema } from '../../src/workspace/workspace.schemas.ts';
import { loadRedirectSettings } from '../../src/redirect/settings.ts';
import { until } from '../helpers/wait.ts';

// ajv-formats is CommonJS with a default export; under NodeNext its callable sits on `.default`.
const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv2020) => Ajv2020 };

function aRule(overrides: Json = {}): Json {
  return { match: { country: ['FR'] }, action: { type: 'block' }, ...overrides };
}

describe('Workspace redirect settings over HTTP (PATCH /workspace)', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let env: Record<string, string>;

  before(async () => {
    mongo = await startTestMongo();
    env = testEnv(mongo, { SHORT_LINK_BASE_URL: 'https://lnk.test', DEFAULT_SHORT_DOMAIN: 'lnk.test' });
    running = await startApi(env);
    tenants = await Tenants.open(mongo);
  });

  after(async () => {
    await tenants.close();
    await running.stop();
    await mongo.stop();
  });

  const call = (method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
    callApi(running.url, method, path, { key, body, headers });
  const patch = (key: string, body: unknown) => call('PATCH', '/workspace', key, body);
  const db = () => tenants.client.db(mongo.dbName);

  /** A fresh workspace on `plan` and a key with every scope. */
  async function aWorkspaceKey(plan = 'business'): Promise<{ id: string; key: string }> {
    const ws = await tenants.aWorkspace({ plan_id: plan });
    return { id: ws._id, key: (await tenants.aWorkspaceKey(ws._id)).key };
  }

  describe('reading and changing the settings', () => {
    it('shows no rules, tracking off and a 30-day window on a workspace that never set them', async () => {
      const { key } = await aWorkspaceKey('free');
      const res = await call('GET', '/workspace', key);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ rules: [], conversion_tracking: false, attribution_window_days: 30 });
    });

    it('stores workspace rules with ids and defaults filled in, and GET /workspace shows them at once', async () => {
      const { key } = await aWorkspaceKey();
      // Read first, so the key's workspace is cached in the api before the change.
      await call('GET', '/workspace', key);
      const res = await patch(key, { rules: [aRule(), aRule({ id: 'mine-1', label: 'Bots', match: { visitor_type: ['ai_crawler'] }, action: { type: 'redirect', url: 'https://example.com/bots' } })] });
      expect(res.status).to.equal(200);
      const rules = res.body.rules as Json[];
      expect(rules).to.have.length(2);
      expect(rules[0]!.id).to.match(/^rule_[0-9A-Za-z]{10}$/);
      expect(rules[0]).to.deep.equal({ id: rules[0]!.id, enabled: true, invert: false, match: { country: ['FR'] }, action: { type: 'block', status: 404 } });
      expect(rules[1]).to.deep.include({ id: 'mine-1', label: 'Bots', enabled: true, invert: false });
      const read = await call('GET', '/workspace', key);
      expect(read.body.rules).to.deep.equal(rules);
    });

    it('keeps rule ids when the rules read back are sent again', async () => {
      const { key } = await aWorkspaceKey();
      const first = (await patch(key, { rules: [aRule(), aRule({ enabled: false })] })).body.rules as Json[];
      const again = (await patch(key, { rules: first })).body.rules as Json[];
      expect(again).to.deep.equal(first);
    });

    it('changes only the fields given', async () => {
      const { key } = await aWorkspaceKey();
      const withRules = await patch(key, { rules: [aRule()] });
      const tracked = await patch(key, { conversion_tracking: true, attribution_window_days: 7 });
      expect(tracked.body).to.deep.include({ rules: withRules.body.rules, conversion_tracking: true, attribution_window_days: 7 });
      const cleared = await patch(key, { rules: [] });
      expect(cleared.body).to.deep.include({ rules: [], conversion_tracking: true, attribution_window_days: 7 });
      const off = await patch(key, { conversion_tracking: false });
      expect((await call('GET', '/workspace', key)).body).to.deep.include({ rules: [], conversion_tracking: false, attribution_window_days: 7 });
      expect(off.status).to.equal(200);
    });

    it('replays the answer for a repeated Idempotency-Key', async () => {
      const { key } = await aWorkspaceKey();
      const headers = { 'Idempotency-Key': 'settings-once' };
      const first = await call('PATCH', '/workspace', key, { rules: [aRule()] }, headers);
      const replay = await call('PATCH', '/workspace', key, { rules: [aRule()] }, headers);
      expect(replay.status).to.equal(200);
      // A second run would have given the rule a new id.
      expect(replay.body.rules).to.deep.equal(first.body.rules);
    });

    it('answers exactly the documented profile schema', async () => {
      const { key } = await aWorkspaceKey();
      const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
      const validate = ajv.compile(WorkspaceProfileSchema);
      for (const res of [await patch(key, { rules: [aRule({ action: { type: 'page', title: 'Hi' } })], conversion_tracking: true }), await call('GET', '/workspace', key)]) {
        expect(validate(res.body), JSON.stringify(validate.errors)).to.equal(true);
      }
    });
  });

  describe('name, notice address and UTM templates', () => {
    it('renames the workspace and sets, changes and removes its notice address', async () => {
      const { key } = await aWorkspaceKey();
      const res = await patch(key, { name: '  Acme Europe ', owner_email: 'ops@acme.example' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ name: 'Acme Europe', owner_email: 'ops@acme.example' });
      expect((await call('GET', '/workspace', key)).body).to.deep.include({ name: 'Acme Europe', owner_email: 'ops@acme.example' });
      expect((await patch(key, { owner_email: '' })).body.owner_email).to.equal(null);
      expect((await patch(key, { owner_email: 'ops2@acme.example' })).body.owner_email).to.equal('ops2@acme.example');
      expect((await patch(key, { owner_email: null })).body.owner_email).to.equal(null);
    });

    it('refuses a blank name and an address that is not one, changing nothing', async () => {
      const { key } = await aWorkspaceKey();
      const before = (await call('GET', '/workspace', key)).body;
      expectInvalid(await patch(key, { name: '   ' }), 'name');
      expectInvalid(await patch(key, { owner_email: 'not an address', name: 'Changed' }), 'owner_email');
      expect((await call('GET', '/workspace', key)).body).to.deep.include({ name: before.name, owner_email: before.owner_email });
    });

    it('stores UTM templates as a list replaced whole, and shows none until set', async () => {
      const { key } = await aWorkspaceKey('free');
      expect((await call('GET', '/workspace', key)).body.utm_templates).to.deep.equal([]);
      const templates = [
        { name: 'Newsletter', utm: { utm_source: 'newsletter', utm_medium: 'email' } },
        { name: 'Spring ads', utm: { utm_source: 'ads', utm_campaign: 'spring' } },
      ];
      const res = await patch(key, { utm_templates: templates });
      expect(res.status).to.equal(200);
      expect(res.body.utm_templates).to.deep.equal(templates);
      expect((await patch(key, { utm_templates: [templates[1]] })).body.utm_templates).to.deep.equal([templates[1]]);
      expect((await call('GET', '/workspace', key)).body.utm_templates).to.deep.equal([templates[1]]);
    });

    it('refuses duplicate template names, an empty template, unknown parameters and a 21st template', async () => {
      const { key } = await aWorkspaceKey();
      expectInvalid(await patch(key, { utm_templates: [{ name: 'A', utm: { utm_source: 'x' } }, { name: 'a', utm: { utm_source: 'y' } }] }), 'utm_templates[1].name');
      expectInvalid(await patch(key, { utm_templates: [{ name: 'A', utm: {} }] }), 'utm_templates[0].utm');
      expectInvalid(await patch(key, { utm_templates: [{ name: 'A', utm: { utm_id: 'x' } }] }), 'utm_templates[0].utm.utm_id');
      const many = Array.from({ length: 21 }, (_, i) => ({ name: `T${i}`, utm: { utm_source: 's' } }));
      expectInvalid(await patch(key, { utm_templates: many }), 'utm_templates');
      expect((await call('GET', '/workspace', key)).body.utm_templates).to.deep.equal([]);
    });
  });

  describe('bounds and checks', () => {
    it('accepts 20 rules and refuses 21, naming rules', async () => {
      const { key } = await aWorkspaceKey();
      expect((await patch(key, { rules: items(20, aRule()) })).status).to.equal(200);
      expectInvalid(await patch(key, { rules: items(21, aRule()) }), 'rules');
      expect(((await call('GET', '/workspace', key)).body.rules as Json[]).length).to.equal(20);
    });

    it('bounds attribution_window_days to whole days from 1 to 90', async () => {
      const { key } = await aWorkspaceKey();
      expect((await patch(key, { attribution_window_days: 1 })).body.attribution_window_days).to.equal(1);
      expect((await patch(key, { attribution_window_days: 90 })).body.attribution_window_days).to.equal(90);
      for (const bad of [0, 91, 1.5, '7']) expectInvalid(await patch(key, { attribution_window_days: bad }), 'attribution_window_days');
    });

    it('sets the time zone analytics answer in by default (UTC until set), refusing a name that is not IANA', async () => {
      const { key } = await aWorkspaceKey();
      expect((await call('GET', '/workspace', key)).body.timezone).to.equal('UTC');
      expect((await call('GET', '/analytics/summary', key)).body.range).to.deep.include({ timezone: 'UTC' });
      expect((await patch(key, { timezone: 'Asia/Kolkata' })).body.timezone).to.equal('Asia/Kolkata');
      expect((await call('GET', '/workspace', key)).body.timezone).to.equal('Asia/Kolkata');
      // The api drops its cached copy of the key's workspace on the change it announces.
      await until(async () => ((await call('GET', '/analytics/summary', key)).body.range as Json).timezone === 'Asia/Kolkata', 10_000, 'analytics default zone');
      const range = (await call('GET', '/analytics/summary', key)).body.range as Json;
      expect(range.start).to.match(/T00:00:00\+05:30$/);
      expect(((await call('GET', '/analytics/summary?timezone=America/New_York', key)).body.range as Json).timezone).to.equal('America/New_York');
      for (const bad of ['Mars/Olympus', '', 'x'.repeat(65), 5]) expectInvalid(await patch(key, { timezone: bad }), 'timezone');
      expect((await call('GET', '/workspace', key)).body.timezone).to.equal('Asia/Kolkata');
    });

    it('refuses an empty body, unknown fields and a malformed rule', async () => {
      const { key } = await aWorkspaceKey();
      expectRefused(await patch(key, {}), 422, 'validation_failed');
      expectInvalid(await patch(key, { plan: 'enterprise' }), 'plan');
      expectInvalid(await patch(key, { conversion_tracking: 'yes' }), 'conversion_tracking');
      expectInvalid(await patch(key, { rules: [aRule({ action: { type: 'explode' } })] }), 'rules[0].action.type');
      expectInvalid(await patch(key, { rules: [aRule({ match: { planet: ['mars'] } })] }), 'rules[0].match.planet');
    });

    it('refuses a rule ip entry that is not an address or CIDR range, naming rules[i].match.ip[j]', async () => {
      const { key } = await aWorkspaceKey();
      const ok = await patch(key, { rules: [aRule({ match: { ip: ['192.0.2.1', '198.51.100.0/24', '2001:db8::/48', '::ffff:10.0.0.1'] } })] });
      expect(ok.status).to.equal(200);
      const res = await patch(key, { rules: [aRule(), aRule({ match: { ip: ['192.0.2.1', '10.0.0.0/8', '10.0.0.0/99'] } })] });
      expectInvalid(res, 'rules[1].match.ip[2]');
      expect(res.body.error!.details).to.have.length(1);
      expect((await call('GET', '/workspace', key)).body.rules).to.deep.equal(ok.body.rules);
    });

    it('refuses a rule redirect to a short-link domain (a loop for every link), naming rules[i].action.url', async () => {
      const { key } = await aWorkspaceKey();
      const redirect = (url: string) => aRule({ action: { type: 'redirect', url } });
      expect((await patch(key, { rules: [redirect('https://example.com/elsewhere')] })).status).to.equal(200);
      expectInvalid(await patch(key, { rules: [aRule(), redirect('https://lnk.test/abc')] }), 'rules[1].action.url');
    });

    it('refuses ip_list_ids naming no IP list of the workspace, and accepts its own', async () => {
      const { key } = await aWorkspaceKey();
      const other = await aWorkspaceKey();
      const own = String((await call('POST', '/ip-lists', key, { name: 'Mine', entries: ['192.0.2.0/24'] })).body.id);
      const foreign = String((await call('POST', '/ip-lists', other.key, { name: 'Theirs', entries: [] })).body.id);
      expect((await patch(key, { rules: [aRule({ match: { ip_list_ids: [own] } })] })).status).to.equal(200);
      const res = await patch(key, { rules: [aRule({ match: { ip_list_ids: [own, foreign] } }), aRule({ match: { ip_list_ids: ['ipl_missing'] } })] });
      expectInvalid(res, 'rules[0].match.ip_list_ids[1]');
      expect(res.body.error!.details!.map((d) => d.path)).to.deep.equal(['rules[0].match.ip_list_ids[1]', 'rules[1].match.ip_list_ids[0]']);
    });
  });

  describe('plan and scopes', () => {
    it('answers 403 plan_restricted naming rules on a plan without workspace rules, but lets it clear them', async () => {
      const { key } = await aWorkspaceKey('pro');
      const res = await patch(key, { rules: [aRule()] });
      expectRefused(res, 403, 'plan_restricted');
      expect(res.body.error!.message).to.contain('"rules"');
      expect((await patch(key, { rules: [] })).status).to.equal(200);
      expect((await patch(key, { attribution_window_days: 14 })).status).to.equal(200);
    });

    it('answers 403 plan_restricted naming conversions when tracking is turned on without it, and allows turning it off', async () => {
      const { key } = await aWorkspaceKey('free');
      const res = await patch(key, { conversion_tracking: true });
      expectRefused(res, 403, 'plan_restricted');
      expect(res.body.error!.message).to.contain('"conversions"');
      expect((await patch(key, { conversion_tracking: false })).status).to.equal(200);
    });

    it('needs workspace:write to change the settings', async () => {
      const { id } = await aWorkspaceKey();
      const reader = (await tenants.aWorkspaceKey(id, ['workspace:read'])).key;
      const res = await patch(reader, { conversion_tracking: true });
      expectRefused(res, 403, 'insufficient_scope');
      expect(res.body.error!.message).to.contain('workspace:write');
    });
  });

  describe('rule ip entries of links', () => {
    it('refuses a link rule ip entry that is not an address or CIDR range, on create and update', async () => {
      const { key } = await aWorkspaceKey();
      const link = { url: 'https://example.com/x', rules: [aRule({ match: { ip: ['203.0.113.9', 'localhost'] } })] };
      expectInvalid(await call('POST', '/links', key, link), 'rules[0].match.ip[1]');
      const created = await call('POST', '/links', key, { url: 'https://example.com/x', rules: [aRule({ match: { ip: ['203.0.113.0/24', '2001:db8::1'] } })] });
      expect(created.status).to.equal(201);
      const res = await call('PATCH', `/links/${String(created.body.id)}`, key, { rules: [aRule(), aRule({ match: { ip: ['1.2.3.4/33'] } })] });
      expectInvalid(res, 'rules[1].match.ip[0]');
    });
  });

  describe('what the redirect loads', () => {
    it('loads rules, tracking and every IP list of the workspace; null for an unknown workspace', async () => {
      const { id, key } = await aWorkspaceKey();
      const a = (await call('POST', '/ip-lists', key, { name: 'A', entries: ['192.0.2.0/24'] })).body;
      const b = (await call('POST', '/ip-lists', key, { name: 'B', entries: ['2001:db8::/32', '198.51.100.7'] })).body;
      await call('POST', '/ip-lists', (await aWorkspaceKey()).key, { name: 'Foreign', entries: ['10.0.0.0/8'] });
      const { body } = await patch(key, { rules: [aRule({ match: { ip_list_ids: [String(a.id)] } })], conversion_tracking: true });
      const settings = await loadRedirectSettings(db(), id);
      expect(settings).to.deep.equal({
        rules: body.rules,
        conversionTracking: true,
        ipLists: { [String(a.id)]: ['192.0.2.0/24'], [String(b.id)]: ['2001:db8::/32', '198.51.100.7'] },
      });
      expect(await loadRedirectSettings(db(), 'ws_doesnotexist')).to.equal(null);
    });

    it('gives a workspace that never set anything no rules, tracking off and no lists', async () => {
      const { id } = await aWorkspaceKey('free');
      expect(await loadRedirectSettings(db(), id)).to.deep.equal({ rules: [], conversionTracking: false, ipLists: {} });
    });

    it('lets a list used by a rule be deleted: the rule stays, the list is gone from what the redirect loads', async () => {
      const { id, key } = await aWorkspaceKey();
      const listId = String((await call('POST', '/ip-lists', key, { name: 'Used', entries: ['192.0.2.1'] })).body.id);
      const { body } = await patch(key, { rules: [aRule({ match: { ip_list_ids: [listId] } })] });
      expect((await call('DELETE', `/ip-lists/${listId}`, key)).status).to.equal(204);
      const settings = await loadRedirectSettings(db(), id);
      expect(settings!.rules).to.deep.equal(body.rules);
      expect(settings!.ipLists).to.deep.equal({});
    });
  });

  describe('cache invalidation', () => {
    it('broadcasts a workspace invalidation for each change, and none for a refused one', async () => {
      const nc = await connect({ servers: NATS_URL });
      try {
        const received: Array<{ kind: string; id: string }> = [];
        const sub = nc.subscribe(`${env.NATS_PREFIX}cache.invalidate`);
        void (async () => {
          for await (const m of sub) received.push(m.json());
        })();
        await nc.flush();
        const { id, key } = await aWorkspaceKey();
        await patch(key, { rules: [aRule()] });
        await patch(key, { rules: [aRule({ match: { ip: ['nope'] } })] });
        await patch(key, { conversion_tracking: true });
        // A marker published after the last change: once it arrives, everything before it has arrived too.
        nc.publish(`${env.NATS_PREFIX}cache.invalidate`, JSON.stringify({ kind: 'link', id: 'marker' }));
        await until(() => received.some((m) => m.id === 'marker'), 10_000, 'the marker invalidation');
        expect(received.filter((m) => m.id === id)).to.deep.equal([
          { kind: 'workspace', id },
          { kind: 'workspace', id },
        ]);
      } finally {
        await nc.drain();
      }
    });
  });
});

