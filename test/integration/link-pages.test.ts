import { expect } from 'chai';
import { BSON, MongoClient, type Db } from 'mongodb';
import { LinkStore, type LinkDoc } from '../../src/links/link.store.ts';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { aLink as aPlainLink } from '../helpers/redirect-builders.ts';

/** The redirect tests' plain link, in this file's workspace, its slug its id, updated when created. */
function aLink(overrides: Partial<LinkDoc> & { _id: string; created_at: Date }): LinkDoc {
  return aPlainLink({ workspace_id: 'ws_pages', domain: 'lnk.test', slug: overrides._id, url: 'https://example.com/a', updated_at: overrides.created_at, ...overrides });
}

const ids = (rows: Uint8Array[]) => rows.map((bytes) => (BSON.deserialize(bytes) as LinkDoc)._id);

describe('link pages read as stored bytes', () => {
  let mongo: TestMongo;
  let client: MongoClient;
  let db: Db;
  let links: LinkStore;

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
    db = client.db(mongo.dbName);
    links = new LinkStore(db);
    await links.ensureIndexes();
  });

  after(async () => {
    await client.close();
    await mongo.stop();
  });

  it('reads a workspace newest first, ties by id, page after page from the last row, and never another workspace', async () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    await db.collection<LinkDoc>('links').insertMany([
      aLink({ _id: 'lnk_a', created_at: at(1) }),
      aLink({ _id: 'lnk_b', created_at: at(2) }),
      aLink({ _id: 'lnk_c', created_at: at(2) }),
      aLink({ _id: 'lnk_d', created_at: at(3) }),
      aLink({ _id: 'lnk_e', created_at: at(4) }),
      aLink({ _id: 'lnk_x', created_at: at(5), workspace_id: 'ws_other' }),
    ]);
    const first = await links.pageBytes({ workspaceId: 'ws_pages', after: null, limit: 3 });
    expect(ids(first)).to.deep.equal(['lnk_e', 'lnk_d', 'lnk_c']);
    const second = await links.pageBytes({ workspaceId: 'ws_pages', after: { created_at: at(2), id: 'lnk_c' }, limit: 3 });
    expect(ids(second)).to.deep.equal(['lnk_b', 'lnk_a']);
    const stored = await db.collection('links').findOne({ _id: 'lnk_d' as never }, { raw: true });
    expect(Buffer.from(first[1]!).equals(Buffer.from(stored as unknown as Uint8Array))).to.equal(true);
  });

  it('reads a whole page whose bytes exceed one reply (16 MiB)', async () => {
    const note = 'n'.repeat(6 * 1024 * 1024);
    for (let i = 0; i < 3; i++) {
      await db.collection<LinkDoc>('links').insertOne(aLink({ _id: `lnk_big${i}`, workspace_id: 'ws_big', created_at: new Date(Date.UTC(2026, 1, 1, 0, 0, i)), note }));
    }
    const page = await links.pageBytes({ workspaceId: 'ws_big', after: null, limit: 3 });
    expect(ids(page)).to.deep.equal(['lnk_big2', 'lnk_big1', 'lnk_big0']);
  });
});
