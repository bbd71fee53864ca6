import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { natsPrefix, testEnv } from '../helpers/env.ts';
import { freePort, spawnProcess, waitForHttp, ROOT, type Spawned } from '../helpers/processes.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { Browser, Users } from '../helpers/users.ts';

/** Two real api processes against one database and one NATS: what the spec promises across replicas. */
describe('two api processes', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let tenants: Tenants;
  let env: Record<string, string>;
  const procs: Spawned[] = [];
  const urls: string[] = [];

  before(async () => {
    mongo = await startTestMongo();
    tenants = await Tenants.open(mongo);
    // One prefix for both, so they share the cache-invalidation subject, as replicas of one installation do.
    env = testEnv(mongo, { NATS_PREFIX: natsPrefix() });
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const proc = spawnProcess('api', { ...env, API_PORT: String(port) });
      procs.push(proc);
      urls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(urls.map((url, i) => waitForHttp(`${url}/readyz`, procs[i]!)));
  });

  after(async () => {
    const codes = await Promise.all(procs.map((p) => p.stop()));
    await tenants.close();
    await mongo.stop();
    expect(codes, 'both processes exit cleanly on SIGTERM').to.deep.equal([0, 0]);
  });

  it('enforce one sliding-window limit between them, counting rejected requests', async () => {
    const ws = await tenants.aWorkspace({ limits: { rate_limit_per_minute: 10 } });
    const { key } = await tenants.aWorkspaceKey(ws._id);
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (let i = 0; i < 16; i++) {
      const res = await fetch(`${urls[i % 2]}/v1/workspace`, { headers: bearer(key) });
      statuses.push(res.status);
      remaining.push(res.headers.get('x-ratelimit-remaining') ?? '');
      expect(res.headers.get('x-ratelimit-limit')).to.equal('10');
      expect(Number(res.headers.get('x-ratelimit-reset'))).to.be.greaterThan(Date.now() / 1000 - 1);
      if (res.status === 429) {
        const body = (await res.json()) as { error: { code: string } };
        expect(body.error.code).to.equal('rate_limited');
        expect(Number(res.headers.get('retry-after'))).to.be.within(1, 60);
      } else {
        await res.arrayBuffer();
      }
    }
    expect(statuses.filter((s) => s === 200)).to.have.length(10);
    expect(statuses.slice(10).every((s) => s === 429)).to.equal(true);
    expect(remaining.slice(0, 10)).to.deep.equal(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);
  });

  it('enforce the limit under concurrent bursts to both', async () => {
    const ws = await tenants.aWorkspace({ limits: { rate_limit_per_minute: 25 } });
    const { key } = await tenants.aWorkspaceKey(ws._id);
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => fetch(`${urls[i % 2]}/v1/workspace`, { headers: bearer(key) }).then(async (r) => (await r.arrayBuffer(), r.status))),
    );
    expect(results.filter((s) => s === 200)).to.have.length(25);
    expect(results.filter((s) => s === 429)).to.have.length(35);
  });

  it('both stop accepting a key within a second of its revocation by the CLI', async () => {
    const ws = await tenants.aWorkspace();
    const { id, key } = await tenants.aWorkspaceKey(ws._id);
    // Warm both caches: the key is now served from memory in each process.
    for (const url of urls) expect((await fetch(`${url}/v1/workspace`, { headers: bearer(key) })).status).to.equal(200);

    const cli = spawn(process.execPath, ['bin/linkplane.js', 'key', 'revoke', id], { cwd: ROOT, env: { ...process.env, ...env } });
    let out = '';
    cli.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => cli.once('exit', resolve));
    expect(code, out).to.equal(0);
    const printed = JSON.parse(out) as { id: string; broadcast: boolean; revoked_at: string };
    expect(printed).to.include({ id, broadcast: true });
    // Measured from the revocation itself (the time the CLI wrote), not from the CLI's own start-up.
    const revokedAt = Date.parse(printed.revoked_at);

    for (const url of urls) {
      let status = 200;
      while (status === 200 && Date.now() - revokedAt < 5000) {
        status = (await fetch(`${url}/v1/workspace`, { headers: bearer(key) })).status;
      }
      const lag = Date.now() - revokedAt;
      expect(status, `${url} still accepted the key ${lag} ms after revocation`).to.equal(401);
      expect(lag, `${url} refused the key only ${lag} ms after revocation`).to.be.below(1000);
    }
  });

  /** Polls `url` as `browser` until it stops answering 200, for at most a second; the last status. */
  async function statusWithin(browser: Browser, path: string, since: number): Promise<number> {
    let status = 200;
    while (status === 200 && Date.now() - since < 1000) status = (await browser.request('GET', path)).status;
    return status;
  }

  it("both stop accepting a dashboard session at once when it signs out on either, though each answered it from memory", async () => {
    const users = new Users(tenants.client, mongo.dbName);
    const ws = await tenants.aWorkspace();
    const user = await users.aUser({ in: [{ kind: 'workspace', id: ws._id, role: 'owner' }] });
    const [a, b] = urls.map((url) => new Browser(url)) as [Browser, Browser];
    expect((await a.signIn(user.email, user.password)).status).to.equal(200);
    // One session, seen by both processes: the same cookie in two clients.
    for (const [name, value] of a.cookies) b.cookies.set(name, value);
    a.context = ws._id;
    b.context = ws._id;
    for (const browser of [a, b]) expect((await browser.request('GET', '/v1/workspace')).status).to.equal(200);

    expect((await a.request('POST', '/auth/sign-out')).status).to.equal(204);
    const signedOutAt = Date.now();
    expect(await statusWithin(b, '/v1/workspace', signedOutAt), 'the other process still accepted the session').to.equal(401);
  });

  it("both stop giving a removed member the workspace at once, and keep giving it to the members who stay", async () => {
    const users = new Users(tenants.client, mongo.dbName);
    const ws = await tenants.aWorkspace();
    const owner = await users.aUser({ in: [{ kind: 'workspace', id: ws._id, role: 'owner' }] });
    const member = await users.aUser({ in: [{ kind: 'workspace', id: ws._id, role: 'member' }] });
    const [ownerAtA, memberAtB] = [new Browser(urls[0]!), new Browser(urls[1]!)];
    expect((await ownerAtA.signIn(owner.email, owner.password)).status).to.equal(200);
    expect((await memberAtB.signIn(member.email, member.password)).status).to.equal(200);
    ownerAtA.context = ws._id;
    memberAtB.context = ws._id;
    expect((await memberAtB.request('GET', '/v1/workspace')).status).to.equal(200);

    const removed = await ownerAtA.request('DELETE', `/auth/members?context=${ws._id}&user_id=${member._id}`);
    expect(removed.status, removed.text).to.equal(204);
    expect(await statusWithin(memberAtB, '/v1/workspace', Date.now()), 'the removed member still had the workspace').to.equal(403);
    expect((await ownerAtA.request('GET', '/v1/workspace')).status).to.equal(200);
  });

  it('replay one answer to concurrent duplicates with one Idempotency-Key, executing once', async () => {
    const partnerId = await tenants.aPartner();
    const { key } = await tenants.aPartnerKey(partnerId);
    const send = (i: number, body: string) =>
      fetch(`${urls[i % 2]}/v1/partner/clients`, {
        method: 'POST',
        headers: { ...bearer(key), 'Content-Type': 'application/json', 'Idempotency-Key': 'create-acme-1' },
        body,
      });
    const body = JSON.stringify({ name: 'Acme client' });
    const responses = await Promise.all(Array.from({ length: 8 }, (_, i) => send(i, body)));
    const bodies = await Promise.all(responses.map((r) => r.json()));
    expect(responses.map((r) => r.status)).to.deep.equal(Array(8).fill(201));
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).to.equal(1);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).to.have.length(7);
    expect(await tenants.workspaces.collection.countDocuments({ partner_id: partnerId })).to.equal(1);

    const later = await send(0, body);
    expect(later.status).to.equal(201);
    expect(later.headers.get('location')).to.match(/^\/v1\/partner\/clients\/ws_/);
    expect(await later.json()).to.deep.equal(bodies[0]);

    const other = await send(1, JSON.stringify({ name: 'Another client' }));
    expect(other.status).to.equal(409);
    expect(((await other.json()) as { error: { code: string } }).error.code).to.equal('conflict');
    expect(await tenants.workspaces.collection.countDocuments({ partner_id: partnerId })).to.equal(1);
  });

  it('replay a validation failure too, and refuse a malformed Idempotency-Key', async () => {
    const partnerId = await tenants.aPartner();
    const { key } = await tenants.aPartnerKey(partnerId);
    const headers = { ...bearer(key), 'Content-Type': 'application/json', 'Idempotency-Key': 'bad-body' };
    const first = await fetch(`${urls[0]}/v1/partner/clients`, { method: 'POST', headers, body: '{"name":""}' });
    const second = await fetch(`${urls[1]}/v1/partner/clients`, { method: 'POST', headers, body: '{"name":""}' });
    expect([first.status, second.status]).to.deep.equal([422, 422]);
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
    const bad = await fetch(`${urls[0]}/v1/partner/clients`, {
      method: 'POST',
      headers: { ...headers, 'Idempotency-Key': 'x'.repeat(256) },
      body: '{"name":"ok"}',
    });
    expect(bad.status).to.equal(400);
  });
});
