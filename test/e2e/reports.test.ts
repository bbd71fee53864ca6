// Abuse reports end to end: the public form on the redirect domain and the public filing endpoint, the workspace's
// review, and each resolution as visitors then see it (warning page, disabled link, restored link).
import { expect } from 'chai';
import { MongoClient, type Db } from 'mongodb';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, type RunningApi, type RunningRedirect } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectInvalid, expectRefused, type Json, type Reply } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';

describe('Abuse reports end to end', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let redirect: RunningRedirect;
  let tenants: Tenants;
  let client: MongoClient;
  let db: Db;
  let base: string;
  let key: string;
  let otherKey: string;
  let readOnlyKey: string;

  before(async () => {
    mongo = await startTestMongo();
    let env: Record<string, string>;
    ({ env, base } = await shortLinkEnv(mongo, { REPORT_RATE_LIMIT_PER_MIN: '6' }));
    api = await startApi(env);
    redirect = await startRedirect(env);
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    key = (await tenants.aWorkspaceKey(ws._id)).key;
    readOnlyKey = (await tenants.aWorkspaceKey(ws._id, ['reports:read'])).key;
    otherKey = (await tenants.aWorkspaceKey((await tenants.aWorkspace())._id)).key;
    client = new MongoClient(mongo.uri);
    await client.connect();
    db = client.db(mongo.dbName);
  });

  after(async () => {
    await client.close();
    await tenants.close();
    await redirect.stop();
    await api.stop();
    await mongo.stop();
  });

  const call = (method: string, path: string, body?: unknown, k = key): Promise<Reply> => callApi(api.url, method, path, { key: k, ...(body === undefined ? {} : { body }) });
  const publicReport = (body: unknown) =>
    fetch(`${api.url}/v1/public/reports`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const visit = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, { redirect: 'manual', ...init });
  const postForm = (slug: string, fields: Record<string, string>) =>
    visit(`/${slug}/report`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });

  let link: Json & { id: string; slug: string; short_url: string };

  it('serves the report form on the redirect domain, under the interstitials’ security headers, and files what it posts', async () => {
    const created = await call('POST', '/links', { url: 'https://login.example.net/account', slug: 'reported' });
    expect(created.status).to.equal(201);
    link = created.body as typeof link;

    const form = await visit(`/${link.slug}/report`);
    expect(form.status).to.equal(200);
    const html = await form.text();
    expect(html).to.contain('<form method="post" action="/reported/report"').and.contain('name="reason"').and.contain(link.short_url);
    expect(form.headers.get('content-security-policy')).to.contain("form-action 'self'").and.contain("script-src 'none'");
    expect((await visit('/no-such-link/report')).status).to.equal(404);

    const invalid = await postForm(link.slug, { reason: 'nonsense', details: 'x' });
    expect(invalid.status).to.equal(422);
    expect(await invalid.text()).to.contain('Please check reason');
    const badMail = await postForm(link.slug, { reason: 'phishing', reporter_contact: 'not-an-address' });
    expect(badMail.status).to.equal(422);

    const filed = await postForm(link.slug, { reason: 'phishing', details: 'Asks for my <bank> password', reporter_contact: '' });
    expect(filed.status).to.equal(201);
    expect(await filed.text()).to.contain('Thank you');
  });

  it('files reports through the public endpoint without a key; an unknown link is 404 and a bad body 422', async () => {
    const reply = await publicReport({ short_url: link.short_url, reason: 'malware', details: 'Downloads an .exe', reporter_contact: 'someone@example.org' });
    expect(reply.status).to.equal(201);
    const body = (await reply.json()) as Json;
    expect(body.id).to.match(/^rpt_/);
    expect(Object.keys(body).sort()).to.deep.equal(['created_at', 'id', 'status']);
    const unknown = await publicReport({ short_url: `${base}/nothing-here`, reason: 'spam' });
    expect(unknown.status).to.equal(404);
    const malformed = await publicReport({ short_url: `${base}/%E0%A4%A`, reason: 'spam' });
    expect(malformed.status, 'a malformed escape is not a URI').to.equal(422);
    const bad = await publicReport({ short_url: link.short_url, reason: 'spam', extra: 1 });
    expect(bad.status).to.equal(422);
    expect(((await bad.json()) as { error: { code: string } }).error.code).to.equal('validation_failed');
  });

  it('lets the workspace list and read its reports, never another workspace', async () => {
    const open = await call('GET', '/reports?status=open');
    expect(open.status).to.equal(200);
    const reports = open.body.data as Array<Json & { id: string }>;
    expect(reports.map((r) => r.reason)).to.deep.equal(['malware', 'phishing']);
    expect(reports[1]).to.include({ link_id: link.id, source: 'form', details: 'Asks for my <bank> password', reporter_contact: null, status: 'open', resolution: null });
    expect(reports[0]).to.include({ source: 'api', reporter_contact: 'someone@example.org', destination: 'https://login.example.net/account' });
    expect((await call('GET', `/reports/${reports[0]!.id}`)).body).to.deep.equal(reports[0]);
    expectRefused(await call('GET', `/reports/${reports[0]!.id}`, undefined, otherKey), 404, 'not_found');
    expect((await call('GET', '/reports', undefined, otherKey)).body.data).to.deep.equal([]);
    expectRefused(await call('POST', `/reports/${reports[0]!.id}/resolve`, { action: 'dismiss' }, readOnlyKey), 403, 'insufficient_scope');
    expectInvalid(await call('POST', `/reports/${reports[0]!.id}/resolve`, { action: 'delete' }), 'action');
  });

  it('warns, disables and restores the link through resolutions, each reaching visitors and emitting link.updated', async () => {
    const reports = (await call('GET', '/reports?status=open')).body.data as Array<Json & { id: string; reason: string }>;
    const phishing = reports.find((r) => r.reason === 'phishing')!;
    const malware = reports.find((r) => r.reason === 'malware')!;

    const warned = await call('POST', `/reports/${phishing.id}/resolve`, { action: 'warn', note: 'looks like credential phishing' });
    expect(warned.status).to.equal(200);
    expect(warned.body).to.deep.include({ status: 'resolved' });
    expect(warned.body.resolution).to.include({ action: 'warn', note: 'looks like credential phishing' });
    expect(((await call('GET', `/links/${link.id}`)).body.moderation as Json).state).to.equal('warned');
    const warning = await until(async () => {
      const res = await visit(`/${link.slug}`);
      return res.status === 200 ? res : false;
    }, 10_000, 'the warning page');
    const page = await warning.text();
    expect(page).to.contain('This link was reported as phishing').and.contain('login.example.net');
    const continueUrl = /href="([^"]+)">Continue/.exec(page)![1]!.replace(/&amp;/g, '&');
    const continued = await visit(continueUrl);
    expect(continued.status).to.equal(302);
    expect(continued.headers.get('location')).to.equal('https://login.example.net/account');

    expect((await call('POST', `/reports/${malware.id}/resolve`, { action: 'disable' })).status).to.equal(200);
    const disabled = await until(async () => {
      const res = await visit(`/${link.slug}`);
      return res.status === 410 ? res : false;
    }, 10_000, 'the link disabled');
    expect(await disabled.text()).to.contain('disabled after it was reported');
    expect((await visit(`/${link.slug}/report`)).status, 'a disabled link can still be reported').to.equal(200);

    // Dismissing the report that disabled the link lifts it; the earlier warning was replaced, so none remains.
    expect((await call('POST', `/reports/${malware.id}/resolve`, { action: 'dismiss' })).body.resolution).to.include({ action: 'dismiss' });
    await until(async () => (await visit(`/${link.slug}`)).status === 302 || false, 10_000, 'the link restored');
    expect((await call('GET', `/links/${link.id}`)).body.moderation).to.equal(null);

    const updates = await db.collection('events').find({ type: 'link.updated', 'data.id': link.id }).sort({ created_at: 1 }).toArray();
    expect(updates.map((e) => (e.data.moderation as Json | null)?.state ?? null)).to.deep.equal(['warned', 'disabled', null]);
    expect(updates.every((e) => (e.data.changed as string[]).includes('moderation'))).to.equal(true);
  });

  it('limits filings per address across the form and the endpoint: 429 with Retry-After', async () => {
    // Six per minute per address. Counted so far: the form's report, the API's report and its unknown-link try (a
    // body refused by validation is not), so three more are accepted, then both doors refuse.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await publicReport({ short_url: link.short_url, reason: 'spam' })).status);
    expect(statuses).to.deep.equal([201, 201, 201, 429]);
    const refused = await publicReport({ short_url: link.short_url, reason: 'spam' });
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('rate_limited');
    const form = await postForm(link.slug, { reason: 'spam' });
    expect(form.status).to.equal(429);
    expect(Number(form.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(await form.text()).to.contain('Too many reports');
  });
});
