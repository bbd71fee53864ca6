// `linkplane export` against a live api: the CLI writes exactly what GET /v1/links/export answers, to stdout or a
// file; a refusal prints the API's envelope with exit 1 and leaves no file; on a terminal, a progress line on stderr.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { ROOT } from '../helpers/processes.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi } from '../helpers/http.ts';
import { runExport } from '../../src/cli/export-command.ts';

describe('linkplane export (CLI)', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let key: string;
  let dir: string;

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo));
    tenants = await Tenants.open(mongo);
    dir = mkdtempSync(join(tmpdir(), 'linkplane-export-'));
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    key = (await tenants.aWorkspaceKey(ws._id)).key;
    for (const [slug, title] of [['exp-one', 'First, "quoted"'], ['exp-two', null], ['exp-three', '=1+1']] as const) {
      const res = await callApi(api.url, 'POST', '/links', { key, body: { url: `https://example.com/${slug}`, slug, ...(title === null ? {} : { title }) } });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    }
  });

  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await api?.stop();
    await tenants?.close();
    await mongo?.stop();
  });

  function cli(apiKey: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, ['bin/linkplane.js', ...args], { cwd: ROOT, env: { ...process.env, LINKPLANE_API_URL: api.url, LINKPLANE_API_KEY: apiKey } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  }

  async function fromApi(format: string): Promise<string> {
    const res = await fetch(`${api.url}/v1/links/export?format=${format}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status).to.equal(200);
    return res.text();
  }

  it('writes the JSON Lines export to stdout as the API answers it, and nothing on a piped stderr', async () => {
    const { code, stdout, stderr } = await cli(key, 'export', '--format', 'jsonl');
    expect(code, stderr).to.equal(0);
    expect(stderr).to.equal('');
    expect(stdout).to.equal(await fromApi('jsonl'));
    const links = stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { slug: string; title: string | null });
    expect(links.map((l) => l.slug)).to.deep.equal(['exp-one', 'exp-two', 'exp-three']);
    expect(links.map((l) => l.title)).to.deep.equal(['First, "quoted"', null, '=1+1']);
  });

  it('writes CSV by default, and to a file with --output', async () => {
    const csv = await fromApi('csv');
    expect(csv).to.match(/^id,short_url,/);
    const piped = await cli(key, 'export');
    expect(piped.code, piped.stderr).to.equal(0);
    expect(piped.stdout).to.equal(csv);

    const file = join(dir, 'links.csv');
    const written = await cli(key, 'export', '--output', file);
    expect(written.code, written.stderr).to.equal(0);
    expect(written.stdout).to.equal('');
    expect(readFileSync(file, 'utf8')).to.equal(csv);
  });

  it("prints the API's refusal on stderr with exit 1 and leaves no file", async () => {
    const ws = await tenants.aWorkspace();
    const readOnlyAnalytics = (await tenants.aWorkspaceKey(ws._id, ['analytics:read'])).key;
    const file = join(dir, 'refused.jsonl');
    const forbidden = await cli(readOnlyAnalytics, 'export', '--format', 'jsonl', '--output', file);
    expect(forbidden.code).to.equal(1);
    expect(forbidden.stdout).to.equal('');
    expect((JSON.parse(forbidden.stderr) as { error: { code: string } }).error.code).to.equal('insufficient_scope');
    expect(existsSync(file)).to.equal(false);

    const unknown = await cli('lp_live_0000000000000000000000000000000000000000', 'export');
    expect(unknown.code).to.equal(1);
    expect((JSON.parse(unknown.stderr) as { error: { code: string } }).error.code).to.equal('unauthorized');
  });

  it('on a terminal: a progress line on stderr, then what was exported and where', async () => {
    let out = '';
    let err = '';
    const stdout = new Writable({
      write(chunk: Buffer, _encoding, done) {
        out += chunk.toString();
        done();
      },
    });
    const file = join(dir, 'tty.jsonl');
    const code = await runExport({ format: 'jsonl', output: file }, { env: { LINKPLANE_API_URL: api.url, LINKPLANE_API_KEY: key }, stdout, stderrTty: true, writeErr: (t) => (err += t) });
    expect(code).to.equal(0);
    expect(out).to.equal('');
    expect(readFileSync(file, 'utf8')).to.equal(await fromApi('jsonl'));
    expect(err).to.include('\r\x1b[2K');
    expect(err).to.match(new RegExp(`exported 3 links · [\\d.]+ (B|KB) to ${file.replace(/[.]/g, '\\.')}\\n$`));

    let quiet = '';
    await runExport({ format: 'csv' }, { env: { LINKPLANE_API_URL: api.url, LINKPLANE_API_KEY: key }, stdout, stderrTty: false, writeErr: (t) => (quiet += t) });
    expect(quiet).to.equal('');
    expect(out).to.equal(await fromApi('csv'));
  });
});
