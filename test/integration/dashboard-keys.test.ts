import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { Browser, Users, expectError } from '../helpers/users.ts';
import { until } from '../helpers/wait.ts';
import { ALL_SCOPES } from '../../src/tenancy/scopes.ts';
import type { WorkspaceDoc } from '../../src/tenancy/workspace.store.ts';

interface KeyRecord {
  id: string;
  name: string | null;
  prefix: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

describe('dashboard API keys: /auth/keys and /auth/scopes (real HTTP)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let users: Users;
  let workspace: WorkspaceDoc;
  let other: WorkspaceDoc;
  let partnerId: string;
  let owner: Browser;
  let member: Browser;

  const signedIn = async (role: 'owner' | 'member', memberships?: Array<{ kind: 'workspace' | 'partner'; id: string; role: 'owner' | 'member' }>) => {
    const user = await users.aUser({ in: memberships ?? [{ kind: 'workspace', id: workspace._id, role }] });
    const b = new Browser(api.url);
    expect((await b.signIn(user.email, user.password)).status).to.equal(200);
    return b;
  };
  const createKey = (b: Browser, body: Record<string, unknown>) =>
    b.request('POST', '/auth/keys', { body: { context: workspace._id, name: 'CI deploys', scopes: ['links:read'], expires_at: null, ...body } });

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo));
    tenants = await Tenants.open(mongo);
    users = new Users(tenants.client, mongo.dbName);
    partnerId = await tenants.aPartner();
    workspace = await tenants.aWorkspace({ name: 'Acme' });
    other = await tenants.aWorkspace({ name: 'Someone else' });
    owner = await signedIn('owner');
    member = await signedIn('member');
  });

  after(async () => {
    await tenants?.close();
    await api?.stop();
    await mongo?.stop();
  });

  it('lists every scope with what it allows', async () => {
    const res = await owner.request('GET', '/auth/scopes');
    expect(res.status, res.text).to.equal(200);
    const data = res.body.data as Array<{ scope: string; description: string }>;
    expect(data.map((s) => s.scope)).to.deep.equal([...ALL_SCOPES]);
    expect(data.find((s) => s.scope === 'links:write')!.description).to.match(/^Change links/);
  });

  it('lists, for a context, only the scopes its kind of key can use: no partner scopes for a workspace, none the other way', async () => {
    const forWorkspace = ((await owner.request('GET', `/auth/scopes?context=${workspace._id}`)).body.data as Array<{ scope: string }>).map((s) => s.scope);
    expect(forWorkspace).to.include.members(['links:write', 'analytics:read', 'webhooks:write']);
    // Checked inside the tool server rather than by its route: a key for an assistant that may change things needs it.
    expect(forWorkspace).to.include.members(['tools:read', 'tools:write']);
    expect(forWorkspace).to.not.include.members(['clients:read']);
    expect(forWorkspace.some((s) => /^(clients|plans|billing):/.test(s)), 'partner scopes offered to a workspace key').to.equal(false);
    const partnerOwner = await signedIn('owner', [{ kind: 'partner', id: partnerId, role: 'owner' }]);
    const forPartner = ((await partnerOwner.request('GET', `/auth/scopes?context=${partnerId}`)).body.data as Array<{ scope: string }>).map((s) => s.scope);
    expect(forPartner).to.include.members(['clients:write', 'plans:read', 'billing:write', 'tools:write']);
    expect(forPartner).to.not.include('links:write');
    expectError(await owner.request('GET', `/auth/scopes?context=${other._id}`), 403, 'forbidden');
  });

  it('creates a key shown once, which then works against /v1 with its scopes only, and lists it without the secret', async () => {
    const expires = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const res = await createKey(owner, { name: 'Reporting', scopes: ['links:read', 'analytics:read'], expires_at: expires });
    expect(res.status, res.text).to.equal(201);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const key = res.body.key as string;
    const record = res.body.record as KeyRecord;
    expect(key).to.match(/^lp_live_[A-Za-z0-9]{40}$/);
    expect(record).to.include({ name: 'Reporting', prefix: key.slice(0, 12), expires_at: expires, revoked_at: null, last_used_at: null });
    expect(record.scopes).to.deep.equal(['links:read', 'analytics:read']);

    const read = await fetch(`${api.url}/v1/links`, { headers: bearer(key) });
    expect(read.status, await read.text()).to.equal(200);
    const write = await fetch(`${api.url}/v1/links`, { method: 'POST', headers: { ...bearer(key), 'Content-Type': 'application/json' }, body: JSON.stringify({ url: 'https://example.com/' }) });
    expect(write.status).to.equal(403);
    expect(((await write.json()) as { error: { code: string } }).error.code).to.equal('insufficient_scope');

    // The last use is recorded after the answer, off the request path.
    const listed = await until(
      async () => {
        const list = await owner.request('GET', `/auth/keys?context=${workspace._id}`);
        const found = (list.body.data as KeyRecord[]).find((k) => k.id === record.id)!;
        return found.last_used_at !== null && { list, found };
      },
      10_000,
      'the key’s last use recorded',
    );
    expect(listed.list.text).not.to.include(key.slice(12));
    expect(listed.found).to.not.have.property('key_hash');
    expect(Date.parse(listed.found.last_used_at!)).to.be.at.least(Date.parse(record.created_at));
  });

  it('revokes a key at once: the next /v1 call with it is refused, and revoking again keeps the first time', async () => {
    const created = await createKey(owner, {});
    const key = created.body.key as string;
    const id = (created.body.record as KeyRecord).id;
    expect((await fetch(`${api.url}/v1/links`, { headers: bearer(key) })).status).to.equal(200);

    const revoked = await owner.request('DELETE', `/auth/keys/${id}?context=${workspace._id}`);
    expect(revoked.status, revoked.text).to.equal(200);
    const revokedAt = (revoked.body as unknown as KeyRecord).revoked_at;
    expect(revokedAt).to.be.a('string');
    const refused = await fetch(`${api.url}/v1/links`, { headers: bearer(key) });
    expect(refused.status).to.equal(401);

    const again = await owner.request('DELETE', `/auth/keys/${id}?context=${workspace._id}`);
    expect((again.body as unknown as KeyRecord).revoked_at).to.equal(revokedAt);
    const list = await owner.request('GET', `/auth/keys?context=${workspace._id}`);
    expect((list.body.data as KeyRecord[]).find((k) => k.id === id)!.revoked_at).to.equal(revokedAt);
  });

  it('lets a member list the keys but not create or revoke one (403 forbidden)', async () => {
    const created = await createKey(owner, { name: 'Owner made' });
    const id = (created.body.record as KeyRecord).id;
    const list = await member.request('GET', `/auth/keys?context=${workspace._id}`);
    expect(list.status).to.equal(200);
    expect((list.body.data as KeyRecord[]).map((k) => k.id)).to.include(id);
    expectError(await createKey(member, {}), 403, 'forbidden');
    expectError(await member.request('DELETE', `/auth/keys/${id}?context=${workspace._id}`), 403, 'forbidden');
    const after = await owner.request('GET', `/auth/keys?context=${workspace._id}`);
    expect((after.body.data as KeyRecord[]).find((k) => k.id === id)!.revoked_at).to.equal(null);
  });

  it('cannot be reached with an API key, even one holding every scope: no key mints or lists keys', async () => {
    const { key } = await tenants.aWorkspaceKey(workspace._id);
    for (const [method, path, body] of [
      ['GET', `/auth/keys?context=${workspace._id}`, undefined],
      ['POST', '/auth/keys', { context: workspace._id, name: 'x', scopes: ['links:read'], expires_at: null }],
      ['GET', '/auth/scopes', undefined],
    ] as const) {
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: { ...bearer(key), 'Content-Type': 'application/json', Origin: api.url },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(res.status, `${method} ${path}`).to.equal(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('unauthorized');
    }
    const list = await owner.request('GET', `/auth/keys?context=${workspace._id}`);
    expect((list.body.data as KeyRecord[]).map((k) => k.name)).not.to.include('x');
  });

  it('refuses a creation without the CSRF token or from another origin', async () => {
    expectError(await owner.request('POST', '/auth/keys', { csrf: false, body: { context: workspace._id, name: 'x', scopes: ['links:read'], expires_at: null } }), 403, 'forbidden');
    expectError(
      await owner.request('POST', '/auth/keys', { origin: 'https://evil.example', body: { context: workspace._id, name: 'x', scopes: ['links:read'], expires_at: null } }),
      403,
      'forbidden',
    );
  });

  it('keeps each workspace’s keys to its own people: another context is forbidden, another’s key id is not found', async () => {
    const { id: foreignKey } = await tenants.aWorkspaceKey(other._id);
    expectError(await owner.request('GET', `/auth/keys?context=${other._id}`), 403, 'forbidden');
    expectError(await createKey(owner, { context: other._id }), 403, 'forbidden');
    expectError(await owner.request('DELETE', `/auth/keys/${foreignKey}?context=${workspace._id}`), 404, 'not_found');
    expectError(await owner.request('DELETE', `/auth/keys/key_doesnotexist?context=${workspace._id}`), 404, 'not_found');
    const stillThere = await fetch(`${api.url}/v1/key`, { headers: bearer((await tenants.aWorkspaceKey(other._id)).key) });
    expect(stillThere.status).to.equal(200);
  });

  it('validates the request: scopes, name, expiry and context, with the error envelope', async () => {
    for (const body of [{ scopes: [] }, { scopes: ['links:admin'] }, { scopes: ['links:read', 'links:read'] }, { name: '' }, { name: '   ' }, { expires_at: 'tomorrow' }, { context: 'nope' }, { extra: 1 }]) {
      expectError(await createKey(owner, body), 422, 'validation_failed');
    }
    const past = await createKey(owner, { expires_at: new Date(Date.now() - 60_000).toISOString() });
    expectError(past, 422, 'validation_failed');
    expect(JSON.stringify(past.body)).to.include('expires_at');
    expectError(await owner.request('GET', '/auth/keys'), 422, 'validation_failed');
  });

  it('creates partner keys in a partner context', async () => {
    const partnerOwner = await signedIn('owner', [{ kind: 'partner', id: partnerId, role: 'owner' }]);
    const res = await partnerOwner.request('POST', '/auth/keys', { body: { context: partnerId, name: 'Billing sync', scopes: ['clients:read'], expires_at: null } });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.key).to.match(/^lpp_live_/);
    const me = await fetch(`${api.url}/v1/key`, { headers: bearer(res.body.key as string) });
    expect(((await me.json()) as { kind: string; partner_id: string }).partner_id).to.equal(partnerId);
    const list = await partnerOwner.request('GET', `/auth/keys?context=${partnerId}`);
    expect((list.body.data as KeyRecord[]).map((k) => k.name)).to.deep.equal(['Billing sync']);
  });
});
