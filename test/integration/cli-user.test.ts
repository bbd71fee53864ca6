import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { ROOT } from '../helpers/processes.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { Browser } from '../helpers/users.ts';

describe('linkplane user create: the first dashboard owner', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let env: Record<string, string>;

  before(async () => {
    mongo = await startTestMongo();
    env = testEnv(mongo);
    api = await startApi(env);
    tenants = await Tenants.open(mongo);
  });
  after(async () => {
    await tenants?.close();
    await api?.stop();
    await mongo?.stop();
  });

  async function cli(...args: string[]): Promise<{ code: number | null; json: Record<string, unknown>; stderr: string }> {
    const child = spawn(process.execPath, ['bin/linkplane.js', ...args], { cwd: ROOT, env: { ...process.env, MONGODB_URI: mongo.uri, MONGODB_DB: mongo.dbName } });
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

  it('creates an owner with a generated password shown once, who can then sign in and act in the workspace', async () => {
    const ws = await tenants.aWorkspace({ name: 'Bootstrapped' });
    const partnerId = await tenants.aPartner();
    const res = await cli('user', 'create', '--email', 'First.Owner@Example.com', '--name', 'First Owner', '--workspace', ws._id, '--partner', partnerId);
    expect(res.code, res.stderr).to.equal(0);
    expect(res.json).to.deep.include({ email: 'first.owner@example.com', name: 'First Owner' });
    expect(res.json.id).to.match(/^usr_/);
    expect(res.json.password).to.match(/^[0-9A-Za-z]{20}$/);
    expect(res.json.memberships).to.deep.equal([
      { kind: 'workspace', id: ws._id, role: 'owner' },
      { kind: 'partner', id: partnerId, role: 'owner' },
    ]);

    const b = new Browser(api.url);
    const signedIn = await b.signIn('first.owner@example.com', String(res.json.password));
    expect(signedIn.status, signedIn.text).to.equal(200);
    b.context = ws._id;
    expect((await b.request('GET', '/v1/workspace')).body.name).to.equal('Bootstrapped');
  });

  it('takes a given password and a member role, without echoing the password', async () => {
    const ws = await tenants.aWorkspace();
    const res = await cli('user', 'create', '--email', 'member@example.com', '--password', 'a-chosen-password', '--workspace', ws._id, '--role', 'member');
    expect(res.code, res.stderr).to.equal(0);
    expect(res.json).not.to.have.property('password');
    expect(res.json.memberships).to.deep.equal([{ kind: 'workspace', id: ws._id, role: 'member' }]);
    expect((await new Browser(api.url).signIn('member@example.com', 'a-chosen-password')).status).to.equal(200);
  });

  it('refuses a taken e-mail (conflict), an unknown workspace (not_found, nothing created), a bad role and a short password', async () => {
    const taken = await cli('user', 'create', '--email', 'FIRST.owner@example.com');
    expect(taken.code).to.equal(1);
    expect((taken.json.error as { code: string }).code).to.equal('conflict');
    const unknown = await cli('user', 'create', '--email', 'ghost@example.com', '--workspace', 'ws_missing');
    expect((unknown.json.error as { code: string }).code).to.equal('not_found');
    const retry = await cli('user', 'create', '--email', 'ghost@example.com');
    expect(retry.code, retry.stderr).to.equal(0);
    expect((await cli('user', 'create', '--email', 'x@example.com', '--role', 'admin')).code).to.equal(2);
    const short = await cli('user', 'create', '--email', 'y@example.com', '--password', 'short');
    expect((short.json.error as { code: string }).code).to.equal('validation_failed');
    const bad = await cli('user', 'create', '--email', 'not-an-address');
    expect((bad.json.error as { code: string }).code).to.equal('validation_failed');
  });
});
