// A database outage must not stop links that were resolving: the redirect keeps serving what it holds past the
// cache TTL (changes would have dropped those entries through the broadcast) until MongoDB answers again. The test
// needs a database it can stop, so it runs its own devdb whatever MONGODB_URI says.
import { expect } from 'chai';
import { startDevDb, type DevDb } from '../../src/devdb/index.ts';
import { randomBase62 } from '../../src/platform/ids.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, type RunningApi, type RunningRedirect } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi } from '../helpers/http.ts';

describe('Redirects while MongoDB is down', function () {
  this.timeout(120_000);
  let devdb: DevDb;
  let api: RunningApi;
  let redirect: RunningRedirect;
  let base: string;
  let key: string;

  before(async () => {
    devdb = await startDevDb({ port: 0 });
    const mongo = { uri: devdb.uri, dbName: `lp_test_${randomBase62(10)}`, stop: () => devdb.stop() };
    let env: Record<string, string>;
    ({ env, base } = await shortLinkEnv(mongo, { REDIRECT_CACHE_TTL_MS: '200' }));
    api = await startApi(env);
    redirect = await startRedirect(env);
    const tenants = await Tenants.open(mongo);
    key = (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'business' }))._id)).key;
    await tenants.close();
  });

  after(async () => {
    await redirect.stop();
    await api.stop();
  });

  it('keeps redirecting a link it resolved before, past its cache TTL', async () => {
    const created = await callApi(api.url, 'POST', '/links', { key, body: { url: 'https://example.com/steady', slug: 'steady' } });
    expect(created.status).to.equal(201);
    const follow = async () => {
      const res = await fetch(`${base}/steady`, { redirect: 'manual' });
      return { status: res.status, location: res.headers.get('location') };
    };
    expect(await follow()).to.deep.equal({ status: 302, location: 'https://example.com/steady' });

    await devdb.stop();
    // Well past the 200 ms TTL: the entry has expired and the database cannot be asked.
    await new Promise((r) => setTimeout(r, 400));
    for (let i = 0; i < 3; i++) expect(await follow()).to.deep.equal({ status: 302, location: 'https://example.com/steady' });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).to.match(/linkplane_redirects_total\{outcome="redirected"[^}]*\} 4\b/);
  });
});
