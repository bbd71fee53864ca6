// Import jobs run by the worker, end to end: a job created through the API reads each source's test server (each
// follows its service's public reference; see test/helpers/import-servers/*.ts), and the links land in the workspace
// with their tags, custom domain (connected by the import when missing) and expiry; a slug already taken is a row
// error; running the same import again creates nothing twice; a dry run counts without writing.
import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, startWorker, type RunningApi, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Reply } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube-apiserver.ts';
import { startDubServer } from '../helpers/import-servers/dub.ts';
import { startYourlsServer } from '../helpers/import-servers/yourls.ts';
import { EXPIRY, IMPORT_CASES, SHORT_HOST, TOKEN, expectImportedCase, type Job, type Link, type ServiceServer } from '../helpers/import-cases.ts';

describe('import jobs run by the worker, from each source', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let kube: KubeApiServer;
  let api: RunningApi;
  let worker: RunningWorker;
  let tenants: Tenants;
  const servers: ServiceServer[] = [];

  before(async () => {
    mongo = await startTestMongo();
    kube = await startKubeApiServer();
    const env = testEnv(mongo, {
      SHORT_LINK_BASE_URL: `https://${SHORT_HOST}`,
      PUBLIC_API_URL: 'https://api.imports.test',
      DOMAINS_KUBE: 'kubeconfig',
      KUBECONFIG: kube.kubeconfigFile(),
      DOMAIN_NAMESPACE: 'linkplane',
      DOMAIN_CNAME_TARGET: 'ingress.linkplane.test',
      IMPORT_ALLOW_PRIVATE_SOURCES: 'true',
      IMPORT_POLL_MS: '100',
      LINK_BLOCKLIST_HOSTS: 'blocked.example',
    });
    api = await startApi(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
  });

  after(async () => {
    for (const server of servers) await server.close();
    await worker?.stop();
    await api?.stop();
    await tenants?.close();
    await kube?.stop();
    await mongo?.stop();
  });

  async function aKey(): Promise<string> {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    return (await tenants.aWorkspaceKey(ws._id)).key;
  }

  const call = (key: string, method: string, path: string, body?: unknown): Promise<Reply> => callApi(api.url, method, path, { key, body });

  /** A link `slug` already on `host` (connected and made active as the operator would), or on the default domain. */
  async function existingLink(key: string, host: string | null, slug: string): Promise<void> {
    let domainId: string | undefined;
    if (host) {
      const domain = await call(key, 'POST', '/domains', { hostname: host });
      expect(domain.status, JSON.stringify(domain.body)).to.equal(201);
      domainId = domain.body.id as string;
      await tenants.client.db(mongo.dbName).collection('domains').updateOne({ _id: domainId as never }, { $set: { status: 'active' } });
    }
    const link = await call(key, 'POST', '/links', { url: 'https://example.com/existing', slug, ...(domainId ? { domain_id: domainId } : {}) });
    expect(link.status, JSON.stringify(link.body)).to.equal(201);
  }

  async function finished(key: string, id: string): Promise<Job> {
    return until(
      async () => {
        const job = (await call(key, 'GET', `/imports/${id}`)).body as unknown as Job;
        return ['succeeded', 'failed', 'canceled'].includes(job.status) ? job : false;
      },
      30_000,
      `import ${id} to end`,
    );
  }

  async function runImport(key: string, body: Record<string, unknown>): Promise<Job> {
    const res = await call(key, 'POST', '/imports', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return finished(key, res.body.id as string);
  }

  async function allLinks(key: string): Promise<Link[]> {
    return ((await call(key, 'GET', '/links?limit=100')).body as unknown as { data: Link[] }).data;
  }

  for (const c of IMPORT_CASES) {
    it(`${c.source}: imports with tags, the custom domain, the expiry${c.lacks.length ? ` (lacks ${c.lacks.join('; ')})` : ''}; a taken slug is a row error; again, nothing twice`, async () => {
      const key = await aKey();
      await existingLink(key, c.oldHost, c.clashSlug);
      const { server, body } = await c.start();
      if (server) servers.push(server);

      const job = await runImport(key, body);
      expect(job, JSON.stringify(job)).to.deep.include({ status: 'succeeded', created: c.rows - 1, skipped: 0, failed: 1, done: c.rows, error: null });
      const errors = (await call(key, 'GET', `/imports/${job.id}/errors`)).body as unknown as { data: Array<{ code: string; slug: string; ref: string }> };
      expect(errors.data.map((e) => [e.code, e.slug])).to.deep.equal([['conflict', c.clashSlug]]);

      const links = await allLinks(key);
      const launch = expectImportedCase(c, links);
      // The source's created date, and what the link keeps of its origin (its click total a historical figure).
      const stored = await tenants.client.db(mongo.dbName).collection('links').findOne({ _id: launch.id as never });
      expect(stored!.created_at).to.deep.equal(new Date('2025-03-01T09:30:00Z'));
      expect(stored!.imported).to.deep.include({ source: c.source, job_id: job.id });
      if (c.source === 'yourls') expect(stored!.imported.clicks_total).to.equal(12);
      if (c.newHost) {
        const domains = (await call(key, 'GET', '/domains')).body as unknown as { data: Array<{ hostname: string; status: string }> };
        expect(domains.data.find((d) => d.hostname === c.newHost)?.status, 'connected by the import, not yet verified').to.equal('pending_verification');
      }

      const again = await runImport(key, body);
      expect(again).to.deep.include({ status: 'succeeded', created: 0, skipped: c.rows - 1, failed: 1 });
      expect(await allLinks(key)).to.have.length(links.length);
    });
  }

  it('a dry run answers what the real run would refuse (a taken slug, the quota, a blocked destination), and writes nothing', async () => {
    // Room for three more links on the plan: one is taken by the existing link.
    const ws = await tenants.aWorkspace({ plan_id: 'business', limits: { links: 4 } });
    const key = (await tenants.aWorkspaceKey(ws._id)).key;
    await existingLink(key, null, 'taken-dry');
    const server = await startDubServer({
      token: TOKEN,
      links: [
        { id: 'd1', domain: 'go.dry-import.com', key: 'one', url: 'https://example.com/1', tags: ['x'] },
        { id: 'd2', domain: 'dub.sh', key: 'two', url: 'https://example.com/2' },
        { id: 'd3', domain: 'dub.sh', key: 'taken-dry', url: 'https://example.com/3' },
        { id: 'd4', domain: 'dub.sh', key: 'bad/slug', url: 'https://example.com/4' },
        { id: 'd5', domain: 'dub.sh', key: 'phish-dry', url: 'https://login.blocked.example/account' },
        { id: 'd6', domain: 'dub.sh', key: 'loop-dry', url: `https://${SHORT_HOST}/taken-dry` },
        { id: 'd7', domain: 'dub.sh', key: 'three', url: 'https://example.com/7' },
        { id: 'd8', domain: 'dub.sh', key: 'over-quota', url: 'https://example.com/8' },
      ],
    });
    servers.push(server);
    const before = await allLinks(key);
    const dry = await runImport(key, { source: 'dub', token: TOKEN, base_url: server.url, dry_run: true });
    expect(dry).to.deep.include({ status: 'succeeded', created: 3, failed: 5, skipped: 0 });
    const errorsOf = async (job: Job) =>
      ((await call(key, 'GET', `/imports/${job.id}/errors`)).body as unknown as { data: Array<{ code: string; ref: string }> }).data.map((e) => [e.ref, e.code]);
    const expected = [
      ['d3', 'conflict'],
      ['d4', 'validation_failed'],
      ['d5', 'validation_failed'],
      ['d6', 'validation_failed'],
      ['d8', 'quota_exceeded'],
    ];
    expect(await errorsOf(dry)).to.deep.equal(expected);
    expect(await allLinks(key)).to.deep.equal(before);
    const domains = (await call(key, 'GET', '/domains')).body as unknown as { data: Array<{ hostname: string }> };
    expect(domains.data.map((d) => d.hostname)).not.to.include('go.dry-import.com');
    expect((await call(key, 'GET', '/tags')).body.data, 'no tag written').to.deep.equal([]);

    // The real run refuses exactly those rows.
    const real = await runImport(key, { source: 'dub', token: TOKEN, base_url: server.url });
    expect(real).to.deep.include({ status: 'succeeded', created: 3, failed: 5 });
    expect(await errorsOf(real)).to.deep.equal(expected);
  });

  it('shows a source\'s click totals apart: on the link as imported, and beside the counted clicks in analytics', async () => {
    const key = await aKey();
    const dub = await startDubServer({
      token: TOKEN,
      links: [
        { id: 'k1', domain: 'dub.sh', key: 'clicks-dub-1', url: 'https://example.com/k1', clicks: 4321, tags: ['hot'] },
        { id: 'k2', domain: 'dub.sh', key: 'clicks-dub-2', url: 'https://example.com/k2', clicks: 79 },
        { id: 'k3', domain: 'dub.sh', key: 'clicks-dub-3', url: 'https://example.com/k3', clicks: 0 },
      ],
    });
    servers.push(dub);
    const user = { username: 'admin', password: 'pw', signature: 'abcdef0123' };
    const yourls = await startYourlsServer({ users: [user], site: 'https://yourls-clicks.test', links: [{ keyword: 'clicks-y', url: 'https://example.com/y', timestamp: '2025-01-01 00:00:00', clicks: 500 }] });
    servers.push(yourls);
    const fromDub = await runImport(key, { source: 'dub', token: TOKEN, base_url: dub.url });
    expect(fromDub).to.deep.include({ status: 'succeeded', created: 3 });
    expect(await runImport(key, { source: 'yourls', token: user.signature, base_url: yourls.url, domains: 'default' })).to.deep.include({ status: 'succeeded', created: 1 });
    const here = await call(key, 'POST', '/links', { url: 'https://example.com/here', slug: 'clicks-here' });

    const links = await allLinks(key);
    const one = links.find((l) => l.slug === 'clicks-dub-1')!;
    const read = (await call(key, 'GET', `/links/${one.id}`)).body;
    expect(read.imported).to.deep.include({ source: 'dub', source_id: 'k1', job_id: fromDub.id, clicks_total: 4321 });
    expect(Date.parse((read.imported as { imported_at: string }).imported_at)).to.be.a('number').and.not.be.NaN;
    expect(here.body.imported, 'a link created here has no import mark').to.equal(null);

    // The link's analytics: no click counted here, the source's total beside.
    const linkSummary = (await call(key, 'GET', `/analytics/summary?link_id=${one.id}`)).body;
    expect(linkSummary.clicks).to.equal(0);
    expect(linkSummary.imported_clicks).to.deep.include({ total: 4321, links: 1 });
    // The workspace: per source, most clicks first; a link imported with 0 clicks counts for nothing.
    const all = (await call(key, 'GET', '/analytics/summary?interval=7d')).body as { clicks: number; imported_clicks: { total: number; links: number; sources: Array<Record<string, unknown>> } };
    expect(all.clicks).to.equal(0);
    expect(all.imported_clicks.total).to.equal(4321 + 79 + 500);
    expect(all.imported_clicks.sources.map((s) => [s.source, s.clicks, s.links])).to.deep.equal([
      ['dub', 4400, 2],
      ['yourls', 500, 1],
    ]);
    // Link filters narrow them; a visitor filter cannot, so they are left out rather than shown unfiltered.
    const hot = (await call(key, 'GET', `/tags?limit=100`)).body as { data: Array<{ id: string; name: string }> };
    const tagged = (await call(key, 'GET', `/analytics/summary?tag=${hot.data.find((t) => t.name === 'hot')!.id}`)).body;
    expect(tagged.imported_clicks).to.deep.include({ total: 4321, links: 1 });
    expect((await call(key, 'GET', '/analytics/summary?country=US')).body.imported_clicks).to.equal(null);
  });

  it('on request, puts every link on the default domain and suffixes a taken slug', async () => {
    const key = await aKey();
    await existingLink(key, null, 'taken-suffix');
    const server = await startDubServer({
      token: TOKEN,
      links: [
        { id: 's1', domain: 'go.suffix-import.com', key: 'taken-suffix', url: 'https://example.com/1' },
        { id: 's2', domain: 'go.suffix-import.com', key: 'free-suffix', url: 'https://example.com/2' },
      ],
    });
    servers.push(server);
    const job = await runImport(key, { source: 'dub', token: TOKEN, base_url: server.url, domains: 'default', on_slug_clash: 'suffix' });
    expect(job).to.deep.include({ status: 'succeeded', created: 2, failed: 0 });
    const links = await allLinks(key);
    expect(links.filter((l) => l.url !== 'https://example.com/existing').map((l) => `${l.domain}/${l.slug}`).sort()).to.deep.equal([
      `${SHORT_HOST}/free-suffix`,
      `${SHORT_HOST}/taken-suffix-2`,
    ]);
  });

  it('fails the job, naming the cause, when the service refuses the token', async () => {
    const key = await aKey();
    const server = await startDubServer({ token: TOKEN, links: [] });
    servers.push(server);
    const job = await runImport(key, { source: 'dub', token: 'wrong-token', base_url: server.url });
    expect(job.status).to.equal('failed');
    expect(job.error?.code).to.equal('source_auth');
  });

  it('fails a job taken up again after the key that started it was revoked, as forbidden, writing nothing more', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const starter = (await tenants.aWorkspaceKey(ws._id)).key;
    const reader = (await tenants.aWorkspaceKey(ws._id)).key;
    const server = await startDubServer({ token: TOKEN, links: [{ id: 'r1', domain: 'dub.sh', key: 'revoked-one', url: 'https://example.com/r1' }] });
    servers.push(server);
    const first = await runImport(starter, { source: 'dub', token: TOKEN, base_url: server.url });
    expect(first.status).to.equal('succeeded');
    const db = tenants.client.db(mongo.dbName);
    const jobDoc = await db.collection('import_jobs').findOne({ _id: first.id as never });
    await db.collection('api_keys').updateOne({ _id: jobDoc!.key_id as never }, { $set: { revoked_at: new Date() } });
    // As after an outage: the job is handed to a worker again, with its key revoked meanwhile.
    await db.collection('import_jobs').updateOne({ _id: first.id as never }, { $set: { status: 'queued', finished_at: null } });
    const again = await finished(reader, first.id);
    expect(again.status).to.equal('failed');
    expect(again.error?.code).to.equal('forbidden');
    expect((await allLinks(reader)).map((l) => l.slug)).to.deep.equal(['revoked-one']);
  });
});

describe('export, then import into a fresh workspace (source csv)', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let worker: RunningWorker;
  let tenants: Tenants;

  before(async () => {
    mongo = await startTestMongo();
    const env = testEnv(mongo, { IMPORT_POLL_MS: '100' });
    api = await startApi(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
  });

  after(async () => {
    await worker?.stop();
    await api?.stop();
    await tenants?.close();
    await mongo?.stop();
  });

  it('gives the same links field by field (ids aside), and importing the file again creates nothing', async () => {
    const keyOf = async () => (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'business' }))._id)).key;
    const from = await keyOf();
    const to = await keyOf();
    const tag = await callApi(api.url, 'POST', '/tags', { key: from, body: { name: 'spring' } });
    const bodies = [
      { url: 'https://example.com/a', slug: 'rt-a', title: '=SUM(A1)', note: 'a note', tag_ids: [tag.body.id], redirect_type: 301, expires_at: EXPIRY, expired_url: 'https://example.com/gone' },
      { url: 'https://example.com/b', slug: 'rt-b', targeting: [{ match: { country: ['DE'] }, url: 'https://example.de/' }], workspace_rules_off: true },
      { url: 'https://example.com/c', slug: 'rt-c', rules: [{ enabled: true, invert: false, match: { device: ['mobile'] }, action: { type: 'redirect', url: 'https://m.example.com/' } }] },
    ];
    for (const body of bodies) expect((await callApi(api.url, 'POST', '/links', { key: from, body })).status).to.equal(201);
    const exported = await fetch(`${api.url}/v1/links/export?format=csv`, { headers: { Authorization: `Bearer ${from}` } });
    expect(exported.status).to.equal(200);
    const file = await exported.text();
    const before = ((await callApi(api.url, 'GET', '/links?limit=100', { key: from })).body as unknown as { data: Array<Record<string, unknown>> }).data;
    // Moving, not copying: the slugs are freed on the (shared) default domain first.
    for (const link of before) expect((await callApi(api.url, 'DELETE', `/links/${link.id as string}`, { key: from })).status).to.equal(204);

    const start = async () => {
      const res = await callApi(api.url, 'POST', '/imports', { key: to, body: { source: 'csv', file } });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      return until(async () => {
        const job = (await callApi(api.url, 'GET', `/imports/${res.body.id as string}`, { key: to })).body as unknown as Job;
        return job.status === 'succeeded' ? job : false;
      }, 30_000, 'the csv import');
    };
    expect(await start()).to.deep.include({ created: 3, failed: 0 });
    const after = ((await callApi(api.url, 'GET', '/links?limit=100', { key: to })).body as unknown as { data: Array<Record<string, unknown>> }).data;
    const comparable = (links: Array<Record<string, unknown>>) =>
      links
        .map(({ id: _id, updated_at: _updated, imported: _imported, tags, rules, ...rest }): Record<string, unknown> => ({ ...rest, tags: (tags as Array<{ name: string; color: string | null }>).map(({ name, color }) => ({ name, color })), rules: (rules as Array<Record<string, unknown>>).map(({ id: _r, ...rule }) => rule) }))
        .sort((a, b) => String(a.slug).localeCompare(String(b.slug)));
    // Every field but the ids (new in the new workspace) and updated_at (the import wrote them now).
    expect(comparable(after)).to.deep.equal(comparable(before));
    expect(await start()).to.deep.include({ created: 0, skipped: 3, failed: 0 });
  });

  it('writes a page of more than one chunk side by side, each claim naming its link; near the quota, the refused rows are the last', async () => {
    const rows = 1_300; // one page, written in chunks of 500, 500 and 300
    // Slugs on the default domain are shared by every workspace: each run has its own.
    const fileOf = (prefix: string) => ['url,slug', ...Array.from({ length: rows }, (_, i) => `https://example.com/p/${i},${prefix}-${String(i).padStart(4, '0')}`)].join('\r\n');
    const run = async (key: string, file: string) => {
      const res = await callApi(api.url, 'POST', '/imports', { key, body: { source: 'csv', file } });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      return until(async () => {
        const job = (await callApi(api.url, 'GET', `/imports/${res.body.id as string}`, { key })).body as unknown as Job;
        return job.status === 'succeeded' ? job : false;
      }, 60_000, 'the csv import');
    };
    const db = tenants.client.db(mongo.dbName);

    const roomy = await tenants.aWorkspace({ plan_id: 'business' });
    const all = await run((await tenants.aWorkspaceKey(roomy._id)).key, fileOf('pg'));
    expect(all).to.deep.include({ created: rows, failed: 0, skipped: 0 });
    const links = await db.collection('links').find({ workspace_id: roomy._id }, { projection: { slug: 1 } }).toArray();
    const claims = await db.collection('imported_links').find({ workspace_id: roomy._id }).toArray();
    expect(links).to.have.length(rows);
    expect(claims).to.have.length(rows);
    const slugOf = new Map(links.map((l) => [String(l._id), l.slug as string]));
    for (const claim of claims) {
      expect(claim.state).to.equal('created');
      expect(slugOf.get(claim.link_id as string), `claim ${claim.source_id as string}`).to.equal(claim.slug);
    }

    // Room for 1,100: the chunks go one after the other, and the 200 rows refused are the file's last 200.
    const tight = await tenants.aWorkspace({ plan_id: 'business', limits: { links: 1_100 } });
    const tightKey = (await tenants.aWorkspaceKey(tight._id)).key;
    const some = await run(tightKey, fileOf('tq'));
    expect(some, JSON.stringify(some)).to.deep.include({ created: 1_100, failed: 200 });
    const refused: Array<{ ref: string; code: string }> = [];
    for (let cursor: string | null = null; ; ) {
      const page: Reply = await callApi(api.url, 'GET', `/imports/${some.id}/errors?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { key: tightKey });
      refused.push(...(page.body.data as Array<{ ref: string; code: string }>));
      cursor = (page.body.pagination as { next_cursor: string | null }).next_cursor;
      if (cursor === null) break;
    }
    expect(refused.map((e) => e.code)).to.deep.equal(Array(200).fill('quota_exceeded'));
    expect(refused.map((e) => e.ref)).to.deep.equal(Array.from({ length: 200 }, (_, i) => `/tq-${1_100 + i}`));
  });
});
