// The import jobs resource over HTTP (docs/importing/README.md): creating a job (its options checked, its credentials
// sealed and never returned), reading it and its errors, cancelling it. Running jobs is the worker's (imports-run).
import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectInvalid, expectRefused, type Json } from '../helpers/http.ts';

describe('import jobs API over HTTP', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let key: string;
  let otherKey: string;
  let readOnlyKey: string;

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo));
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace();
    key = (await tenants.aWorkspaceKey(ws._id)).key;
    readOnlyKey = (await tenants.aWorkspaceKey(ws._id, ['links:read'])).key;
    otherKey = (await tenants.aWorkspaceKey((await tenants.aWorkspace())._id)).key;
  });

  after(async () => {
    await api?.stop();
    await tenants?.close();
    await mongo?.stop();
  });

  const create = (body: unknown, as = key) => callApi(api.url, 'POST', '/imports', { key: as, body });

  it('queues a job and answers it without its token, base URL or file; the stored credentials are sealed', async () => {
    const res = await create({ source: 'bitly', token: 'secret-bitly-token-123', base_url: 'https://api.example.com', params: { group: 'Bg1' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const job = res.body as Json & { id: string };
    expect(res.headers.get('location')).to.equal(`/v1/imports/${job.id}`);
    expect(job).to.deep.include({ source: 'bitly', status: 'queued', dry_run: false, domains: 'create', on_slug_clash: 'error', has_token: true, params: { group: 'Bg1' } });
    expect(job).to.deep.include({ total: null, done: 0, created: 0, skipped: 0, failed: 0, error: null, started_at: null, finished_at: null });
    expect(job.id).to.match(/^imp_/);
    expect(JSON.stringify(job)).not.to.include('secret-bitly-token-123').and.not.to.include('api.example.com');

    const stored = await tenants.client.db(mongo.dbName).collection('import_jobs').findOne({ _id: job.id as never });
    expect(JSON.stringify(stored)).not.to.include('secret-bitly-token-123').and.not.to.include('api.example.com');
    // What the job reads lives apart from the job (read on every poll of its progress), sealed too.
    const payload = await tenants.client.db(mongo.dbName).collection('import_payloads').findOne({ _id: job.id as never });
    expect(payload?.sealed).to.be.a('string').and.not.to.include('secret-bitly-token-123').and.not.to.include('api.example.com');
    expect(stored).not.to.have.property('sealed');

    const read = await callApi(api.url, 'GET', `/imports/${job.id}`, { key: readOnlyKey });
    expect(read.status).to.equal(200);
    expect(read.body).to.deep.equal(job);
  });

  it('refuses options the source cannot use, naming the field, before queueing anything', async () => {
    expectInvalid(await create({ source: 'bitly' }), 'token');
    expectInvalid(await create({ source: 'shlink', token: 'k' }), 'base_url');
    expectInvalid(await create({ source: 'bitly', token: 't', params: { groop: 'x' } }), 'params');
    expectInvalid(await create({ source: 'shlink_csv' }), 'file');
    expectInvalid(await create({ source: 'bitly', token: 't', file: 'a,b' }), 'file');
    expectInvalid(await create({ source: 'nope', token: 't' }), 'source');
    expectInvalid(await create({ source: 'bitly', token: 't', domains: 'elsewhere' }), 'domains');
  });

  it('needs links:write to start or cancel a job', async () => {
    expectRefused(await create({ source: 'bitly', token: 't' }, readOnlyKey), 403, 'insufficient_scope');
  });

  it("answers another workspace's job as not found, and lists only the workspace's own, newest first, paginated", async () => {
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(((await create({ source: 'dub', token: `dub_${i}` })).body as { id: string }).id);
    const theirs = ((await create({ source: 'dub', token: 'x' }, otherKey)).body as { id: string }).id;
    expectRefused(await callApi(api.url, 'GET', `/imports/${theirs}`, { key }), 404, 'not_found');
    expectRefused(await callApi(api.url, 'GET', `/imports/${theirs}/errors`, { key }), 404, 'not_found');
    expectRefused(await callApi(api.url, 'POST', `/imports/${theirs}/cancel`, { key }), 404, 'not_found');

    const first = await callApi(api.url, 'GET', '/imports?limit=2', { key });
    const firstPage = first.body as { data: Array<{ id: string }>; pagination: { next_cursor: string; has_more: boolean } };
    expect(firstPage.data.map((j) => j.id)).to.deep.equal([mine[2], mine[1]]);
    expect(firstPage.pagination.has_more).to.equal(true);
    const second = await callApi(api.url, 'GET', `/imports?limit=2&cursor=${firstPage.pagination.next_cursor}`, { key });
    expect((second.body as { data: Array<{ id: string }> }).data.map((j) => j.id)[0]).to.equal(mine[0]);
    expectRefused(await callApi(api.url, 'GET', '/imports?cursor=garbage!', { key }), 400, 'invalid_request');
  });

  it('cancels a queued job once; cancelling it again is a conflict', async () => {
    const id = ((await create({ source: 'kutt', token: 'k', base_url: 'https://kutt.example.com' })).body as { id: string }).id;
    const canceled = await callApi(api.url, 'POST', `/imports/${id}/cancel`, { key });
    expect(canceled.status).to.equal(200);
    expect(canceled.body).to.deep.include({ status: 'canceled' });
    expect(canceled.body.finished_at).to.be.a('string');
    expectRefused(await callApi(api.url, 'POST', `/imports/${id}/cancel`, { key }), 409, 'conflict');
  });

  it('lists no errors for a job that has not run, as an empty page', async () => {
    const id = ((await create({ source: 'shlink_csv', file: 'title,shortUrl,longUrl,createdAt,visitsCount,tags\n' })).body as { id: string }).id;
    const res = await callApi(api.url, 'GET', `/imports/${id}/errors`, { key });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ data: [], pagination: { next_cursor: null, has_more: false } });
  });
});
