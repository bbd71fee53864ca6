// The API commands of `linkplane` as real child processes against a live api: `login` saving profiles (mode 0600,
// several of them, --profile), `links create|list|get`, `analytics summary`, text by default and JSON with --json,
// the API's refusals as a sentence (or the envelope with --json) and exit 1, mistakes on the command line exit 2.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { ROOT } from '../helpers/processes.ts';
import { Tenants } from '../helpers/tenants.ts';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('linkplane API commands (login, links, analytics) against a live api', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let config: string;
  let mainKey: string;
  let stagingKey: string;
  let stagingWs: string;

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo));
    tenants = await Tenants.open(mongo);
    config = mkdtempSync(join(tmpdir(), 'linkplane-config-'));
    mainKey = (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'business' }))._id)).key;
    stagingWs = (await tenants.aWorkspace({ plan_id: 'business' }))._id;
    stagingKey = (await tenants.aWorkspaceKey(stagingWs)).key;
  });

  after(async () => {
    rmSync(config, { recursive: true, force: true });
    await api?.stop();
    await tenants?.close();
    await mongo?.stop();
  });

  /** The command, its stdin piped from `input`, with a config folder of its own and no API settings inherited. */
  function cli(args: string[], options: { input?: string; env?: Record<string, string>; xdg?: string } = {}): Promise<Run> {
    const { LINKPLANE_API_KEY: _k, LINKPLANE_API_URL: _u, LINKPLANE_PROFILE: _p, ...inherited } = process.env;
    const child = spawn(process.execPath, ['bin/linkplane.js', ...args], {
      cwd: ROOT,
      env: { ...inherited, XDG_CONFIG_HOME: options.xdg ?? config, ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(options.input ?? '');
    return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  }

  const json = (run: Run): ReturnType<typeof JSON.parse> => {
    expect(run.code, run.stderr).to.equal(0);
    return JSON.parse(run.stdout);
  };
  const file = (): string => join(config, 'linkplane', 'config.json');
  const saved = (): ReturnType<typeof JSON.parse> => JSON.parse(readFileSync(file(), 'utf8'));

  it('logs in with a key piped on stdin, saving the profile readable by its owner only', async () => {
    const run = await cli(['login', '--api-url', `${api.url}/`], { input: `${mainKey}\n` });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(new RegExp(`^Logged in to ${api.url} with key lp_live_`)).and.to.include('Saved as profile "default"');
    expect(run.stdout).not.to.include(mainKey);
    expect(statSync(file()).mode & 0o777).to.equal(0o600);
    expect(statSync(join(config, 'linkplane')).mode & 0o777).to.equal(0o700);
    expect(saved().profiles.default).to.deep.include({ api_url: api.url, api_key: mainKey, kind: 'workspace' });
  });

  it('keeps several named profiles; --json prints what was saved; profile list never shows a key', async () => {
    const login = json(await cli(['login', '--api-url', api.url, '--profile', 'staging', '--json'], { input: stagingKey }));
    expect(login).to.deep.include({ profile: 'staging', api_url: api.url, file: file() });
    expect(login.key.workspace_id).to.equal(stagingWs);
    expect(Object.keys(saved().profiles).sort()).to.deep.equal(['default', 'staging']);
    expect(statSync(file()).mode & 0o777).to.equal(0o600);

    const list = await cli(['profile', 'list', '--json']);
    expect(json(list).map((p: { name: string }) => p.name).sort()).to.deep.equal(['default', 'staging']);
    expect(list.stdout).not.to.include(mainKey).and.not.to.include(stagingKey);
    const text = await cli(['profile', 'list']);
    expect(text.stdout).to.match(/^PROFILE +API +KEY OF +SAVED\n/).and.to.include(`staging  ${api.url}`);
  });

  it('refuses a key the API refuses and saves nothing', async () => {
    const run = await cli(['login', '--api-url', api.url, '--profile', 'wrong'], { input: 'lp_live_notakey' });
    expect(run.code).to.equal(1);
    expect(run.stdout).to.equal('');
    expect(run.stderr).to.match(/^linkplane: .*\(unauthorized, HTTP 401\)\n$/);
    expect(saved().profiles).not.to.have.property('wrong');
    const empty = await cli(['login', '--api-url', api.url]);
    expect(empty.code).to.equal(2);
    expect(empty.stderr).to.match(/^linkplane: no API key given/);
  });

  it('creates and reads links with the default profile or --profile, each in its own workspace', async () => {
    const created = await cli(['links', 'create', '--url', 'https://example.com/cli', '--title', 'From the CLI']);
    expect(created.code, created.stderr).to.equal(0);
    const [, id, shortUrl] = /^Created (lnk_\S+): (\S+) → https:\/\/example\.com\/cli\n$/.exec(created.stdout) ?? [];
    expect(id, created.stdout).to.be.a('string');

    const got = json(await cli(['links', 'get', id!, '--json']));
    expect(got).to.deep.include({ id, short_url: shortUrl, url: 'https://example.com/cli', title: 'From the CLI' });
    const text = await cli(['links', 'get', id!]);
    expect(text.stdout).to.include(`short url    ${shortUrl}`).and.to.include('title        From the CLI');

    const staged = json(await cli(['links', 'create', '--url', 'https://example.com/staged', '--slug', 'staged-cli', '--profile', 'staging', '--json']));
    expect(staged.slug).to.equal('staged-cli');
    expect(json(await cli(['links', 'get', staged.id, '--json'], { env: { LINKPLANE_PROFILE: 'staging' } })).id).to.equal(staged.id);
    // Another workspace's link is not found with the default profile.
    const other = await cli(['links', 'get', staged.id]);
    expect(other.code).to.equal(1);
    expect(other.stderr).to.match(/\(not_found, HTTP 404\)\n$/);
  });

  it('lists the first --limit links, or every page with --all', async () => {
    const xdg = mkdtempSync(join(tmpdir(), 'linkplane-config-'));
    try {
      const ws = await tenants.aWorkspace({ plan_id: 'business' });
      const key = (await tenants.aWorkspaceKey(ws._id)).key;
      expect((await cli(['login', '--api-url', api.url], { input: key, xdg })).code).to.equal(0);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(json(await cli(['links', 'create', '--url', `https://example.com/l/${i}`, '--json'], { xdg })).id);
      const all = json(await cli(['links', 'list', '--all', '--limit', '2', '--json'], { xdg }));
      expect(all.map((l: { id: string }) => l.id).sort()).to.deep.equal([...ids].sort());
      expect(json(await cli(['links', 'list', '--limit', '2', '--json'], { xdg }))).to.have.length(2);
      const table = await cli(['links', 'list'], { xdg });
      expect(table.stdout.split('\n')[0]).to.match(/^ID +SHORT URL +DESTINATION +CREATED$/);
      expect(table.stdout.trimEnd().split('\n')).to.have.length(6);
      const bad = await cli(['links', 'list', '--limit', '0'], { xdg });
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.match(/--limit must be/);
    } finally {
      rmSync(xdg, { recursive: true, force: true });
    }
  });

  it('prints the analytics summary as a table, or as the API answered it with --json', async () => {
    const summary = json(await cli(['analytics', 'summary', '--interval', '7d', '--json']));
    expect(summary).to.include({ clicks: 0, conversions: 0 });
    expect(summary.range.interval).to.equal('7d');
    const text = await cli(['analytics', 'summary', '--interval', '7d']);
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.match(/\n +NOW +BEFORE\nclicks +0 +0\n/);
    const bad = await cli(['analytics', 'summary', '--interval', 'week']);
    expect(bad.code).to.equal(2);
  });

  it("prints the API's refusal as a sentence with the fields, or the envelope with --json; exit 1", async () => {
    const text = await cli(['links', 'create', '--url', 'not a url']);
    expect(text.code).to.equal(1);
    expect(text.stdout).to.equal('');
    expect(text.stderr).to.match(/^linkplane: .*\(validation_failed, HTTP 422\)\n {2}url: /);
    const asJson = await cli(['links', 'create', '--url', 'not a url', '--json']);
    expect(asJson.code).to.equal(1);
    const envelope = JSON.parse(asJson.stderr);
    expect(envelope.error.code).to.equal('validation_failed');
    expect(envelope.error.details.map((d: { path: string }) => d.path)).to.include('url');
    const missing = await cli(['links', 'create']);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.equal('linkplane: missing --url\nRun `linkplane links create --help` for its usage.\n');
  });

  it('says how to log in when nothing is saved, and names a missing profile; exit 1', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'linkplane-config-'));
    try {
      const none = await cli(['links', 'list'], { xdg: empty });
      expect(none.code).to.equal(1);
      expect(none.stderr).to.equal('linkplane: not logged in: run `linkplane login` (or set LINKPLANE_API_KEY)\n');
      const named = await cli(['links', 'list', '--profile', 'nope']);
      expect(named.code).to.equal(1);
      expect(named.stderr).to.match(/^linkplane: no profile "nope" in .*: run `linkplane login --profile nope`\n$/);
      // LINKPLANE_API_KEY works without any profile, as before.
      const env = json(await cli(['links', 'list', '--json'], { xdg: empty, env: { LINKPLANE_API_URL: api.url, LINKPLANE_API_KEY: stagingKey } }));
      expect(env.map((l: { slug: string }) => l.slug)).to.deep.equal(['staged-cli']);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('exports with a saved profile, and logs out', async () => {
    const run = await cli(['export', '--format', 'jsonl', '--profile', 'staging']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { slug: string }).slug)).to.deep.equal(['staged-cli']);
    const out = await cli(['logout', '--profile', 'staging']);
    expect(out.code, out.stderr).to.equal(0);
    expect(Object.keys(saved().profiles)).to.deep.equal(['default']);
    expect((await cli(['links', 'list', '--profile', 'staging'])).code).to.equal(1);
  });
});
