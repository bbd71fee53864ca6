import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { natsPrefix, NATS_URL } from '../helpers/env.ts';
import { ROOT } from '../helpers/processes.ts';
import { ALL_SCOPES } from '../../src/tenancy/scopes.ts';

// The machine's own Node (20) when there is one: the command must start under it and hand over to Node 24.
const SYSTEM_NODE = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => existsSync(p)) ?? process.execPath;

describe('linkplane CLI', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let env: Record<string, string>;

  before(async () => {
    mongo = await startTestMongo();
    env = { MONGODB_URI: mongo.uri, MONGODB_DB: mongo.dbName, NATS_URL, NATS_PREFIX: natsPrefix() };
  });
  after(() => mongo.stop());

  // Asynchronous on purpose: the devdb serving the CLI runs in this very process.
  async function cli(...args: string[]): Promise<{ code: number | null; json: Record<string, unknown>; stderr: string }> {
    const child = spawn(SYSTEM_NODE, ['bin/linkplane.js', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(code === 0 ? stdout : stderr) as Record<string, unknown>;
    } catch {
      // usage errors print text
    }
    return { code, json, stderr };
  }

  it('creates a workspace, a partner and keys, lists and revokes them, printing JSON', async () => {
    const ws = await cli('workspace', 'create', '--name', 'Acme', '--plan', 'business');
    expect(ws.code, ws.stderr).to.equal(0);
    expect(ws.json).to.include({ name: 'Acme', plan: 'business' });
    expect(ws.json.id).to.match(/^ws_/);

    const partner = await cli('partner', 'create', '--name', 'Agency');
    expect(partner.json.id).to.match(/^ptr_/);

    const key = await cli('key', 'create', '--workspace', String(ws.json.id), '--scopes', 'links:read,links:write', '--name', 'ci', '--expires-at', '2099-01-01T00:00:00Z');
    expect(key.code, key.stderr).to.equal(0);
    expect(key.json.key).to.match(/^lp_live_[0-9A-Za-z]{40}$/);
    expect(key.json).to.deep.include({ scopes: ['links:read', 'links:write'], name: 'ci', expires_at: '2099-01-01T00:00:00.000Z' });

    const all = await cli('key', 'create', '--partner', String(partner.json.id), '--scopes', 'all');
    expect(all.json.key).to.match(/^lpp_live_/);
    expect(all.json.scopes).to.deep.equal(ALL_SCOPES);

    const list = await cli('key', 'list');
    const data = list.json.data as Array<Record<string, unknown>>;
    expect(data).to.have.length(2);
    expect(JSON.stringify(data)).not.to.contain(String(key.json.key)).and.not.to.contain('key_hash');

    const revoked = await cli('key', 'revoke', String(key.json.id));
    expect(revoked.code).to.equal(0);
    expect(revoked.json.revoked_at).to.be.a('string');
    expect(revoked.json.broadcast).to.equal(true);
  });

  it("records the owner's e-mail address with --email, and refuses a malformed one", async () => {
    const ws = await cli('workspace', 'create', '--name', 'Mailed', '--email', 'owner@acme.example');
    expect(ws.code, ws.stderr).to.equal(0);
    expect(ws.json.owner_email).to.equal('owner@acme.example');
    const partner = await cli('partner', 'create', '--name', 'Agency', '--email', 'ops@agency.example');
    expect(partner.json.owner_email).to.equal('ops@agency.example');
    expect((await cli('workspace', 'create', '--name', 'Plain')).json.owner_email).to.equal(null);
    for (const command of ['workspace', 'partner']) {
      const bad = await cli(command, 'create', '--name', 'Bad', '--email', 'not-an-address');
      expect(bad.code).to.equal(1);
      expect(bad.json.error).to.deep.include({ code: 'validation_failed' });
    }
  });

  it('refuses unknown scopes, plans and ids with a JSON error', async () => {
    const ws = await cli('workspace', 'create', '--name', 'X', '--plan', 'platinum');
    expect(ws.code).to.equal(1);
    expect((ws.json.error as { code: string }).code).to.equal('validation_failed');
    const key = await cli('key', 'create', '--workspace', 'ws_nope', '--scopes', 'links:fly');
    expect((key.json.error as { code: string }).code).to.equal('validation_failed');
    const missing = await cli('key', 'create', '--workspace', 'ws_nope', '--scopes', 'all');
    expect((missing.json.error as { code: string }).code).to.equal('not_found');
    const revoke = await cli('key', 'revoke', 'key_nope');
    expect((revoke.json.error as { code: string }).code).to.equal('not_found');
  });

  it('answers usage errors with exit code 2', async () => {
    expect((await cli('key', 'create', '--scopes', 'all')).code).to.equal(2);
    expect((await cli('frobnicate')).code).to.equal(2);
  });

  it('publishes the scope list', async () => {
    const scopes = await cli('key', 'scopes');
    expect(scopes.json.scopes).to.include.members(['links:read', 'links:write', 'analytics:read', 'domains:write']);
  });
});
