import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectInvalid, type Reply } from '../helpers/http.ts';

const BAD = 'https://login.phish.example/account';

describe('link safety at creation (API)', function () {
  this.timeout(30_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let key: string;

  before(async () => {
    mongo = await startTestMongo();
    const dir = mkdtempSync(join(tmpdir(), 'lp-blocklist-'));
    writeFileSync(join(dir, 'blocklist'), 'phish.example credential phishing\n/\\.exe([?#]|$)/i executable download\n');
    api = await startApi(testEnv(mongo, { LINK_BLOCKLIST_FILE: join(dir, 'blocklist'), LINK_BLOCKLIST_HOSTS: 'malware.example' }));
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    key = (await tenants.aWorkspaceKey(ws._id)).key;
  });

  after(async () => {
    await api.stop();
    await tenants.close();
    await mongo.stop();
  });

  const call = (method: string, path: string, body?: unknown): Promise<Reply> => callApi(api.url, method, path, { key, ...(body === undefined ? {} : { body }) });

  it('refuses a blocked destination as 422 naming `url`, the reason in the message', async () => {
    const reply = await call('POST', '/links', { url: BAD });
    expectInvalid(reply, 'url');
    expect(reply.body.error!.message).to.contain('credential phishing');
    expect(reply.body.error!.details!.find((d) => d.path === 'url')!.message).to.contain('credential phishing');
    expectInvalid(await call('POST', '/links', { url: 'https://cdn.malware.example/' }), 'url');
    expectInvalid(await call('POST', '/links', { url: 'https://files.example.com/setup.EXE' }), 'url');
  });

  it('checks every URL field of a link, on create, update and bulk', async () => {
    const fields: Array<[string, Record<string, unknown>]> = [
      ['expired_url', { expired_url: BAD }],
      ['targeting[0].url', { targeting: [{ match: { country: ['FR'] }, url: BAD }] }],
      ['ab_test.variants[1].url', { ab_test: { enabled: true, variants: [{ url: 'https://ok.example/a', weight: 50 }, { url: BAD, weight: 50 }] } }],
      ['rules[0].action.url', { rules: [{ enabled: true, invert: false, match: { country: ['FR'] }, action: { type: 'redirect', url: BAD } }] }],
      ['rules[0].action.button_url', { rules: [{ enabled: true, invert: false, match: { country: ['FR'] }, action: { type: 'page', button_url: BAD } }] }],
      ['rotator.destinations[0].url', { rotator: { enabled: true, mode: 'uniform', destinations: [{ id: 'dest1', url: BAD, weight: 1, active: true }] } }],
      ['mobile.desktop_url', { mobile: { enabled: true, desktop_url: BAD } }],
      ['mobile.ios.store_url', { mobile: { enabled: true, ios: { store_url: BAD } } }],
    ];
    for (const [path, extra] of fields) expectInvalid(await call('POST', '/links', { url: 'https://ok.example/', ...extra }), path);
    const created = await call('POST', '/links', { url: 'https://ok.example/' });
    expect(created.status).to.equal(201);
    expectInvalid(await call('PATCH', `/links/${created.body.id as string}`, { url: BAD }), 'url');
    const bulk = await call('POST', '/links/bulk', [{ url: 'https://ok.example/1' }, { url: BAD }]);
    expect(bulk.status).to.equal(200);
    const items = bulk.body.data as Array<{ status: string; error?: { code: string; details: Array<{ path: string }> } }>;
    expect(items.map((i) => i.status)).to.deep.equal(['created', 'failed']);
    expect(items[1]!.error!.code).to.equal('validation_failed');
    expect(items[1]!.error!.details.map((d) => d.path)).to.deep.equal(['url']);
  });
});
