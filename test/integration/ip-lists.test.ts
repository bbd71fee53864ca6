import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { connect } from '@nats-io/transport-node';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv, NATS_URL } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Json, type Reply, expectInvalid, expectRefused } from '../helpers/http.ts';
import { IpListListSchema, IpListSchema } from '../../src/iplists/ip-list.schemas.ts';
import type { IpListDoc } from '../../src/iplists/ip-list.store.ts';
import { until } from '../helpers/wait.ts';

// ajv-formats is CommonJS with a default export; under NodeNext its callable sits on `.default`.
const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv2020) => Ajv2020 };

/** `n` distinct IPv4 addresses in 10.0.0.0/8. */
const addresses = (n: number): string[] => Array.from({ length: n }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);

function anIpList(overrides: Json = {}): Json {
  return { name: 'Office', entries: ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32'], ...overrides };
}

describe('IP lists API over HTTP', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let env: Record<string, string>;
  let key: string;
  let workspaceId: string;
  let otherKey: string;

  before(async () => {
    mongo = await startTestMongo();
    env = testEnv(mongo);
    running = await startApi(env);
    tenants = await Tenants.open(mongo);
    workspaceId = (await tenants.aWorkspace({ plan_id: 'business' }))._id;
    key = (await tenants.aWorkspaceKey(workspaceId)).key;
    otherKey = (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'business' }))._id)).key;
  });

  after(async () => {
    await tenants.close();
    await running.stop();
    await mongo.stop();
  });

  const call = (method: string, path: string, body?: unknown, as: string = key): Promise<Reply> => callApi(running.url, method, path, { key: as, body });
  const create = (body: Json = anIpList(), as = key) => call('POST', '/ip-lists', body, as);
  const lists = () => tenants.client.db(mongo.dbName).collection<IpListDoc>('ip_lists');
  const aBusinessKey = async () => (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'business' }))._id)).key;

  describe('create, read, list, update, delete', () => {
    it('answers 201 with an ipl_ id and the Location, and reads back the same list', async () => {
      const res = await create(anIpList({ note: 'HQ and VPN exits' }));
      expect(res.status).to.equal(201);
      expect(res.body.id).to.match(/^ipl_[0-9A-Za-z]{20}$/);
      expect(res.body).to.deep.include({ name: 'Office', entries: ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32'], note: 'HQ and VPN exits' });
      expect(res.body.created_at).to.equal(res.body.updated_at);
      expect(res.headers.get('location')).to.equal(`/v1/ip-lists/${String(res.body.id)}`);
      const got = await call('GET', `/ip-lists/${String(res.body.id)}`);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(res.body);
    });

    it('stores entries trimmed and accepts an empty list', async () => {
      const res = await create(anIpList({ entries: [' 192.0.2.1 ', '::1'] }));
      expect(res.body.entries).to.deep.equal(['192.0.2.1', '::1']);
      const empty = await create(anIpList({ entries: [] }));
      expect(empty.status).to.equal(201);
      expect(empty.body).to.deep.include({ entries: [], note: null });
    });

    it('lists the lists of the workspace oldest first in a single page', async () => {
      const fresh = await aBusinessKey();
      const first = await create(anIpList({ name: 'First' }), fresh);
      const second = await create(anIpList({ name: 'Second' }), fresh);
      const list = await call('GET', '/ip-lists', undefined, fresh);
      expect(list.status).to.equal(200);
      expect(list.body.pagination).to.deep.equal({ next_cursor: null, has_more: false });
      expect(list.body.data).to.deep.equal([first.body, second.body]);
    });

    it('renames, replaces the entries, clears the note, and leaves unnamed fields alone', async () => {
      const { body: created } = await create(anIpList({ note: 'to clear' }));
      const renamed = await call('PATCH', `/ip-lists/${String(created.id)}`, { name: 'Partners' });
      expect(renamed.status).to.equal(200);
      expect(renamed.body).to.deep.include({ name: 'Partners', entries: created.entries, note: 'to clear', created_at: created.created_at });
      const replaced = await call('PATCH', `/ip-lists/${String(created.id)}`, { entries: ['192.0.2.0/28'], note: null });
      expect(replaced.body).to.deep.include({ name: 'Partners', entries: ['192.0.2.0/28'], note: null });
      expect(new Date(String(replaced.body.updated_at)).getTime()).to.be.at.least(new Date(String(created.updated_at)).getTime());
      expect((await call('GET', `/ip-lists/${String(created.id)}`)).body).to.deep.equal(replaced.body);
    });

    it('deletes a list: 204, then 404 on every route', async () => {
      const id = String((await create()).body.id);
      expect((await call('DELETE', `/ip-lists/${id}`)).status).to.equal(204);
      expectRefused(await call('GET', `/ip-lists/${id}`), 404, 'not_found');
      expectRefused(await call('PATCH', `/ip-lists/${id}`, { name: 'x' }), 404, 'not_found');
      expectRefused(await call('DELETE', `/ip-lists/${id}`), 404, 'not_found');
      expect(await lists().countDocuments({ _id: id })).to.equal(0);
    });
  });

  describe('validation', () => {
    it('accepts 10000 entries and refuses 10001, naming entries', async () => {
      const ok = await create(anIpList({ entries: addresses(10_000) }));
      expect(ok.status).to.equal(201);
      expect((ok.body.entries as string[]).length).to.equal(10_000);
      expectInvalid(await create(anIpList({ entries: addresses(10_001) })), 'entries');
      expectInvalid(await call('PATCH', `/ip-lists/${String(ok.body.id)}`, { entries: addresses(10_001) }), 'entries');
    });

    it('refuses an entry that is not an address or CIDR range, naming entries[i], and stores nothing', async () => {
      const fresh = await aBusinessKey();
      for (const bad of ['example.com', '300.1.2.3', '10.0.0.0/33', '2001:db8::/129', '127.1', '10.0.0.1/']) {
        const res = await create(anIpList({ entries: ['192.0.2.1', bad] }), fresh);
        expectInvalid(res, 'entries[1]');
        expect(res.body.error!.details).to.have.length(1);
      }
      expect((await call('GET', '/ip-lists', undefined, fresh)).body.data).to.deep.equal([]);
    });

    it('refuses a bad entry in a PATCH and keeps the stored entries', async () => {
      const { body: created } = await create();
      expectInvalid(await call('PATCH', `/ip-lists/${String(created.id)}`, { entries: ['192.0.2.1', '192.0.2.1/40', 'nope'] }), 'entries[2]');
      expect((await call('GET', `/ip-lists/${String(created.id)}`)).body.entries).to.deep.equal(created.entries);
    });

    it('bounds the name to 1–80 characters and refuses unknown fields and an empty patch', async () => {
      expect((await create(anIpList({ name: 'n'.repeat(80) }))).status).to.equal(201);
      expectInvalid(await create(anIpList({ name: 'n'.repeat(81) })), 'name');
      expectInvalid(await create(anIpList({ name: '' })), 'name');
      expectInvalid(await create({ name: 'No entries' }), 'entries');
      expectInvalid(await create(anIpList({ color: 'red' })), 'color');
      const id = String((await create()).body.id);
      expectRefused(await call('PATCH', `/ip-lists/${id}`, {}), 422, 'validation_failed');
    });
  });

  describe('plan, scopes and tenants', () => {
    it('answers 403 plan_restricted naming ip_lists for create and update on a plan without it, yet lets it read and delete', async () => {
      const ws = await tenants.aWorkspace({ plan_id: 'pro' });
      const proKey = (await tenants.aWorkspaceKey(ws._id)).key;
      const refused = await create(anIpList(), proKey);
      expectRefused(refused, 403, 'plan_restricted');
      expect(refused.body.error!.message).to.contain('ip_lists');
      // A list kept from a former plan: readable and deletable, not editable.
      const now = new Date();
      await lists().insertOne({ _id: 'ipl_kept_from_business', workspace_id: ws._id, name: 'Kept', entries: ['192.0.2.1'], note: null, created_at: now, updated_at: now });
      expect((await call('GET', '/ip-lists', undefined, proKey)).body.data).to.have.length(1);
      expect((await call('GET', '/ip-lists/ipl_kept_from_business', undefined, proKey)).status).to.equal(200);
      expectRefused(await call('PATCH', '/ip-lists/ipl_kept_from_business', { name: 'Edited' }, proKey), 403, 'plan_restricted');
      expect((await call('DELETE', '/ip-lists/ipl_kept_from_business', undefined, proKey)).status).to.equal(204);
    });

    it('needs workspace:write to change lists and workspace:read to read them', async () => {
      const reader = (await tenants.aWorkspaceKey(workspaceId, ['workspace:read'])).key;
      const refused = await create(anIpList(), reader);
      expectRefused(refused, 403, 'insufficient_scope');
      expect(refused.body.error!.message).to.contain('workspace:write');
      expect((await call('GET', '/ip-lists', undefined, reader)).status).to.equal(200);
      const linksOnly = (await tenants.aWorkspaceKey(workspaceId, ['links:read', 'links:write'])).key;
      expectRefused(await call('GET', '/ip-lists', undefined, linksOnly), 403, 'insufficient_scope');
    });

    it('answers 404 on every {id} route for a list of another workspace, and leaves it untouched', async () => {
      const { body: created } = await create();
      const id = String(created.id);
      for (const [method, body] of [['GET'], ['PATCH', { name: 'mine now' }], ['DELETE']] as Array<[string, unknown?]>) {
        expectRefused(await call(method, `/ip-lists/${id}`, body, otherKey), 404, 'not_found');
      }
      expect((await call('GET', '/ip-lists', undefined, otherKey)).body.data).to.deep.equal([]);
      expect((await call('GET', `/ip-lists/${id}`)).body).to.deep.equal(created);
    });

    it('allows 100 lists per workspace and answers the 101st with 422 quota_exceeded', async () => {
      const ws = await tenants.aWorkspace({ plan_id: 'business' });
      const fresh = (await tenants.aWorkspaceKey(ws._id)).key;
      for (let i = 0; i < 100; i++) expect((await create(anIpList({ name: `List ${i}`, entries: [] }), fresh)).status).to.equal(201);
      expectRefused(await create(anIpList(), fresh), 422, 'quota_exceeded');
      expect(await lists().countDocuments({ workspace_id: ws._id })).to.equal(100);
      const first = ((await call('GET', '/ip-lists', undefined, fresh)).body.data as Json[])[0]!;
      expect((await call('DELETE', `/ip-lists/${String(first.id)}`, undefined, fresh)).status).to.equal(204);
      expect((await create(anIpList(), fresh)).status).to.equal(201);
    });
  });

  describe('cache invalidation', () => {
    it('broadcasts a workspace invalidation on create, update and delete, and none on reads or refusals', async () => {
      const nc = await connect({ servers: NATS_URL });
      try {
        const received: Array<{ kind: string; id: string }> = [];
        const sub = nc.subscribe(`${env.NATS_PREFIX}cache.invalidate`);
        void (async () => {
          for await (const m of sub) received.push(m.json());
        })();
        await nc.flush();
        const ws = await tenants.aWorkspace({ plan_id: 'business' });
        const own = (await tenants.aWorkspaceKey(ws._id)).key;
        const id = String((await create(anIpList(), own)).body.id);
        await call('GET', `/ip-lists/${id}`, undefined, own);
        await call('PATCH', `/ip-lists/${id}`, { entries: ['bad entry'] }, own);
        await call('PATCH', `/ip-lists/${id}`, { name: 'Renamed' }, own);
        await call('DELETE', `/ip-lists/${id}`, undefined, own);
        // A marker published after the last change: once it arrives, everything before it has arrived too.
        nc.publish(`${env.NATS_PREFIX}cache.invalidate`, JSON.stringify({ kind: 'link', id: 'marker' }));
        await until(() => received.some((m) => m.id === 'marker'), 10_000, 'the marker invalidation');
        expect(received.filter((m) => m.id === ws._id)).to.deep.equal([
          { kind: 'workspace', id: ws._id },
          { kind: 'workspace', id: ws._id },
          { kind: 'workspace', id: ws._id },
        ]);
      } finally {
        await nc.drain();
      }
    });
  });

  describe('contract', () => {
    it('answers exactly the documented response schemas', async () => {
      const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
      const check = (schema: TSchema, reply: Reply) => {
        const validate = ajv.getSchema(String(schema.$id)) ?? ajv.compile(schema);
        expect(validate(reply.body), JSON.stringify(validate.errors)).to.equal(true);
      };
      const created = await create(anIpList({ note: 'n' }));
      check(IpListSchema, created);
      check(IpListSchema, await call('GET', `/ip-lists/${String(created.body.id)}`));
      check(IpListSchema, await call('PATCH', `/ip-lists/${String(created.body.id)}`, { note: null }));
      check(IpListListSchema, await call('GET', '/ip-lists'));
    });

    it('publishes every IP list operation in the OpenAPI document, with what deleting a used list does', async () => {
      const doc = (await (await fetch(`${running.url}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string; description?: string }>> };
      expect(doc.paths['/ip-lists']!.post!.operationId).to.equal('createIpList');
      expect(doc.paths['/ip-lists']!.get!.operationId).to.equal('listIpLists');
      expect(Object.keys(doc.paths['/ip-lists/{id}']!)).to.include.members(['get', 'patch', 'delete']);
      expect(doc.paths['/ip-lists/{id}']!.delete!.description).to.contain('never matches');
    });
  });
});

