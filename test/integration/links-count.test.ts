// GET /links/count: how many links the list's filters match over every page, for the dashboard's total.
import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Reply } from '../helpers/http.ts';

describe('Counting links (GET /links/count)', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;

  before(async () => {
    mongo = await startTestMongo();
    running = await startApi(testEnv(mongo, { SHORT_LINK_BASE_URL: 'https://lnk.test', DEFAULT_SHORT_DOMAIN: 'lnk.test' }));
    tenants = await Tenants.open(mongo);
  });

  after(async () => {
    await tenants.close();
    await running.stop();
    await mongo.stop();
  });

  const call = (key: string, method: string, path: string, body?: unknown): Promise<Reply> => callApi(running.url, method, path, { key, body });

  it('counts the links the same filters list, over every page, and never another workspace’s', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const { key } = await tenants.aWorkspaceKey(ws._id);
    const other = await tenants.aWorkspace({ plan_id: 'business' });
    const otherKey = (await tenants.aWorkspaceKey(other._id)).key;
    const tag = (await call(key, 'POST', '/tags', { name: 'spring' })).body as { id: string };
    const items = Array.from({ length: 7 }, (_, i) => ({ url: `https://example.com/${i}`, slug: `count-${i}`, ...(i < 3 ? { tag_ids: [tag.id] } : {}) }));
    expect((await call(key, 'POST', '/links/bulk', items)).status).to.equal(200);
    await call(otherKey, 'POST', '/links', { url: 'https://example.com/other' });
    const archived = await call(key, 'PATCH', '/links/' + ((await call(key, 'GET', '/links?search=count-6')).body as { data: Array<{ id: string }> }).data[0]!.id, { archived: true });
    expect(archived.status).to.equal(200);

    const count = async (query: string) => {
      const reply = await call(key, 'GET', `/links/count${query}`);
      expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
      return (reply.body as { count: number }).count;
    };
    expect(await count('')).to.equal(7);
    expect(await count('?archived=false')).to.equal(6);
    expect(await count('?archived=true')).to.equal(1);
    expect(await count(`?tag=${tag.id}`)).to.equal(3);
    expect(await count('?search=count-1')).to.equal(1);
    const page = (await call(key, 'GET', '/links?limit=2&archived=false')).body as { data: unknown[]; pagination: { has_more: boolean } };
    expect(page.data).to.have.length(2);
    expect(page.pagination.has_more).to.equal(true);
  });

  it('refuses what the list refuses: paging parameters, unknown filters, a partner key', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const { key } = await tenants.aWorkspaceKey(ws._id);
    expect((await call(key, 'GET', '/links/count?limit=5')).status).to.equal(422);
    expect((await call(key, 'GET', '/links/count?archived=maybe')).status).to.equal(422);
    const partner = await tenants.aPartner();
    const partnerKey = (await tenants.aPartnerKey(partner)).key;
    const refused = await call(partnerKey, 'GET', '/links/count');
    expect(refused.status).to.equal(403);
  });
});
