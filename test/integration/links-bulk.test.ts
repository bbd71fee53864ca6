// POST /links/bulk written as one batch (one transaction, the events in one insert, the quota taken once): what a
// client sees is what it saw when each item was created on its own.
import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Json, type Reply } from '../helpers/http.ts';
import { LinkService } from '../../src/links/link.service.ts';
import { LinkStore, type LinkDoc } from '../../src/links/link.store.ts';
import { LabelStore } from '../../src/links/label.store.ts';
import { QuotaStore } from '../../src/links/quota.store.ts';
import { DomainDirectory } from '../../src/links/domains.ts';
import { EventStore } from '../../src/events/event.store.ts';
import { PLANS } from '../../src/tenancy/plans.ts';
import type { Principal } from '../../src/tenancy/principal.ts';

type Item = { index: number; status: string; link?: { id: string; domain: string; slug: string; url: string }; error?: { code: string; details?: Array<{ path: string }> } };

describe('Bulk link creation, batched', function () {
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
  const db = () => tenants.client.db(mongo.dbName);
  const aKey = async (limits: { links?: number } = {}) => {
    const ws = await tenants.aWorkspace({ plan_id: 'business', ...(limits.links ? { limits } : {}) });
    return { id: ws._id, key: (await tenants.aWorkspaceKey(ws._id)).key };
  };

  it('creates 100 items in one call, each failing on its own, every created link once with its link.created event', async () => {
    const { id, key } = await aKey();
    expect((await call(key, 'POST', '/links', { url: 'https://example.com/taken', slug: 'taken' })).status).to.equal(201);
    const tag = (await call(key, 'POST', '/tags', { name: 'batch' })).body;
    const items: Json[] = Array.from({ length: 100 }, (_, i) => ({ url: `https://example.com/${i}`, ...(i % 7 === 0 ? { tag_ids: [tag.id] } : {}) }));
    items[10] = { url: 'https://example.com/10', slug: 'taken' };
    items[19] = { url: 'https://example.com/19', slug: 'twice' };
    items[20] = { url: 'https://example.com/20', slug: 'twice' };
    items[30] = { url: 'https://lnk.test/loop' };
    items[40] = { url: 'https://example.com/40', tag_ids: ['tag_missing'] };
    items[50] = { url: 'https://example.com/50', folder_id: 'fld_missing' };
    const res = await call(key, 'POST', '/links/bulk', items);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.include({ created: 95, failed: 5 });
    const data = res.body.data as Item[];
    expect(data.map((d) => d.index)).to.deep.equal(items.map((_, i) => i));
    const failures = data.filter((d) => d.status === 'failed').map((d) => [d.index, d.error!.code, d.error!.details?.map((x) => x.path)]);
    expect(failures).to.deep.equal([
      [10, 'conflict', undefined],
      [20, 'conflict', undefined],
      [30, 'validation_failed', ['url']],
      [40, 'validation_failed', ['tag_ids[0]']],
      [50, 'validation_failed', ['folder_id']],
    ]);
    const created = data.filter((d) => d.status === 'created').map((d) => d.link!);
    expect(created.find((l) => l.url === 'https://example.com/19')!.slug).to.equal('twice');
    expect(new Set(created.map((l) => l.slug)).size).to.equal(created.length);
    // Every created link reads through the API as the bulk answered it, and the list holds them all.
    for (const item of data.filter((d) => d.status === 'created').slice(0, 10)) expect((await call(key, 'GET', `/links/${item.link!.id}`)).body).to.deep.equal(item.link);
    const listed = (await call(key, 'GET', '/links?limit=100')).body.data as Json[];
    expect(listed.map((l) => l.id).sort()).to.deep.equal([...created.map((l) => l.id), listed.find((l) => l.slug === 'taken')!.id].sort());
    // One link.created event per created link, carrying its id, domain, slug and url (spec 6.1).
    const events = await db().collection('events').find({ workspace_id: id, type: 'link.created' }).toArray();
    const byLink = new Map(events.map((e) => [(e.data as { id: string }).id, e.data]));
    expect(events).to.have.length(created.length + 1);
    for (const link of created) expect(byLink.get(link.id)).to.deep.equal({ id: link.id, domain: link.domain, slug: link.slug, url: link.url });
  });

  it('takes the quota once for the batch: items past the limit fail, failed items take no place', async () => {
    const { id, key } = await aKey({ links: 5 });
    expect((await call(key, 'POST', '/links', { url: 'https://example.com/first', slug: 'first' })).status).to.equal(201);
    const res = await call(key, 'POST', '/links/bulk', [
      { url: 'https://example.com/a', slug: 'first' },
      { url: 'https://example.com/b' },
      { url: 'https://example.com/c' },
      { url: 'https://lnk.test/loop' },
      { url: 'https://example.com/d' },
      { url: 'https://example.com/e' },
      { url: 'https://example.com/f' },
    ]);
    expect((res.body.data as Item[]).map((d) => d.error?.code ?? d.status)).to.deep.equal(['conflict', 'created', 'created', 'validation_failed', 'created', 'created', 'quota_exceeded']);
    // The counter holds exactly the links that exist: nothing leaked by the failed items.
    expect((await db().collection('quota_counters').findOne({ _id: id as never }))!.links).to.equal(5);
    expect(await db().collection('links').countDocuments({ workspace_id: id })).to.equal(5);
    const full = await call(key, 'POST', '/links/bulk', [{ url: 'https://example.com/g' }]);
    expect((full.body.data as Item[])[0]!.error!.code).to.equal('quota_exceeded');
    expect((await db().collection('quota_counters').findOne({ _id: id as never }))!.links).to.equal(5);
  });

  it('writes the batch again when another create takes a slug between the check and the write, failing only that item', async () => {
    const db = tenants.client.db(mongo.dbName);
    /** A store whose first slug check misses a slug that another create takes right then. */
    class RacingStore extends LinkStore {
      private raced = false;
      override async takenSlugs(domainId: string, slugs: readonly string[]): Promise<Set<string>> {
        if (this.raced) return super.takenSlugs(domainId, slugs);
        this.raced = true;
        const now = new Date();
        await this.collection.insertOne({ _id: 'lnk_racer', workspace_id: 'ws_racer', domain_id: domainId, domain: 'lnk.test', slug: 'raced', url: 'https://racer.example', created_at: now, updated_at: now } as LinkDoc);
        return new Set();
      }
    }
    const service = new LinkService({
      client: tenants.client,
      links: new RacingStore(db),
      quota: new QuotaStore(db),
      tags: new LabelStore(db, 'tags'),
      folders: new LabelStore(db, 'folders'),
      events: new EventStore(db),
      domains: new DomainDirectory(db, 'lnk.test', 'https://lnk.test'),
      bus: null,
    });
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const principal = { kind: 'workspace', key: {}, scopes: new Set(), workspace: ws, plan: PLANS.business!, rateLimitPerMinute: 600 } as unknown as Extract<Principal, { kind: 'workspace' }>;
    const result = await service.createMany(principal, [
      { url: 'https://example.com/raced', slug: 'raced' },
      { url: 'https://example.com/fine' },
    ]);
    expect(result.data.map((d) => (d.status === 'failed' ? d.error.code : d.status))).to.deep.equal(['conflict', 'created']);
    // The aborted first write left nothing: one link, one event, one quota place.
    expect(await db.collection('links').countDocuments({ workspace_id: ws._id })).to.equal(1);
    expect(await db.collection('events').countDocuments({ workspace_id: ws._id, type: 'link.created' })).to.equal(1);
    expect((await db.collection('quota_counters').findOne({ _id: ws._id as never }))!.links).to.equal(1);
  });
});
