// `linkplane import <source>`: the command starts a job through the API and follows it; piped, it writes JSON lines
// (progress, each row error, the job as it ended); on a terminal, a progress bar redrawn in place.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, startWorker, type RunningApi, type RunningWorker } from '../helpers/api.ts';
import { ROOT } from '../helpers/processes.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi } from '../helpers/http.ts';
import { startDubServer, type DubServer } from '../helpers/import-servers/dub.ts';
import { runImport } from '../../src/cli/import-command.ts';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube-apiserver.ts';
import { IMPORT_CASES, SHORT_HOST, expectImportedCase, type Link, type ServiceServer } from '../helpers/import-cases.ts';

const TOKEN = 'dub_cli_token';

describe('linkplane import (CLI)', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let worker: RunningWorker;
  let tenants: Tenants;
  let server: DubServer;
  let kube: KubeApiServer;
  let files: string;
  const servers: ServiceServer[] = [];

  before(async () => {
    mongo = await startTestMongo();
    kube = await startKubeApiServer();
    files = await mkdtemp(join(tmpdir(), 'linkplane-import-cli-'));
    const env = testEnv(mongo, {
      SHORT_LINK_BASE_URL: `https://${SHORT_HOST}`,
      PUBLIC_API_URL: 'https://api.imports.test',
      DOMAINS_KUBE: 'kubeconfig',
      KUBECONFIG: kube.kubeconfigFile(),
      DOMAIN_NAMESPACE: 'linkplane',
      DOMAIN_CNAME_TARGET: 'ingress.linkplane.test',
      IMPORT_ALLOW_PRIVATE_SOURCES: 'true',
      IMPORT_POLL_MS: '100',
    });
    api = await startApi(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
    server = await startDubServer({
      token: TOKEN,
      links: [
        { id: 'c1', domain: 'dub.sh', key: 'cli-one', url: 'https://example.com/1', tags: ['cli'] },
        { id: 'c2', domain: 'dub.sh', key: 'cli-two', url: 'https://example.com/2' },
        { id: 'c3', domain: 'dub.sh', key: 'cli-taken', url: 'https://example.com/3' },
      ],
    });
  });

  after(async () => {
    await server?.close();
    for (const s of servers) await s.close();
    await worker?.stop();
    await api?.stop();
    await tenants?.close();
    await kube?.stop();
    await mongo?.stop();
    if (files) await rm(files, { recursive: true, force: true });
  });

  async function aKey(): Promise<string> {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    return (await tenants.aWorkspaceKey(ws._id)).key;
  }

  function cli(key: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, ['bin/linkplane.js', ...args], {
      cwd: ROOT,
      env: { ...process.env, LINKPLANE_API_URL: api.url, LINKPLANE_API_KEY: key },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  }

  it('piped: JSON lines of progress, the row errors, and the job as it ended', async () => {
    const key = await aKey();
    expect((await callApi(api.url, 'POST', '/links', { key, body: { url: 'https://example.com/old', slug: 'cli-taken' } })).status).to.equal(201);
    const { code, stdout, stderr } = await cli(key, 'import', 'dub', '--token', TOKEN, '--base-url', server.url);
    // The job succeeded (a row failing does not fail the import): exit code 0.
    expect(code, stderr).to.equal(0);
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).to.deep.include({ type: 'progress', status: 'queued', done: 0 });
    const last = lines.at(-1)!;
    expect(last).to.deep.include({ type: 'import', status: 'succeeded', created: 2, failed: 1, skipped: 0 });
    const rowErrors = lines.filter((l) => l.type === 'row_error');
    expect(rowErrors.map((e) => [e.ref, e.code, e.slug])).to.deep.equal([['c3', 'conflict', 'cli-taken']]);
  });

  // Every source through the real command, as a person would run it: `linkplane import <source> --token … --base-url …`
  // or `--file …`, against the same accounts as the API run (test/helpers/import-cases.ts).
  for (const c of IMPORT_CASES) {
    it(`${c.source}: the command imports tags, the custom domain, the expiry${c.lacks.length ? ` (lacks ${c.lacks.join('; ')})` : ''}, and reports the taken slug`, async () => {
      const key = await aKey();
      let domainId: string | undefined;
      if (c.oldHost) {
        const domain = await callApi(api.url, 'POST', '/domains', { key, body: { hostname: c.oldHost } });
        expect(domain.status, JSON.stringify(domain.body)).to.equal(201);
        domainId = domain.body.id as string;
        await tenants.client.db(mongo.dbName).collection('domains').updateOne({ _id: domainId as never }, { $set: { status: 'active' } });
      }
      const existing = await callApi(api.url, 'POST', '/links', { key, body: { url: 'https://example.com/existing', slug: c.clashSlug, ...(domainId ? { domain_id: domainId } : {}) } });
      expect(existing.status, JSON.stringify(existing.body)).to.equal(201);
      const { server: own, body } = await c.start();
      if (own) servers.push(own);

      const args = ['import', c.source];
      if (typeof body.token === 'string') args.push('--token', body.token);
      if (typeof body.base_url === 'string') args.push('--base-url', body.base_url);
      if (typeof body.file === 'string') {
        const path = join(files, `${c.source}.csv`);
        await writeFile(path, body.file);
        args.push('--file', path);
      }
      const { code, stdout, stderr } = await cli(key, ...args);
      expect(code, stderr || stdout).to.equal(0);
      const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.at(-1)).to.deep.include({ type: 'import', status: 'succeeded', created: c.rows - 1, failed: 1, skipped: 0 });
      expect(lines.filter((l) => l.type === 'row_error').map((e) => [e.code, e.slug])).to.deep.equal([['conflict', c.clashSlug]]);

      const links = ((await callApi(api.url, 'GET', '/links?limit=100', { key })).body as unknown as { data: Link[] }).data;
      expectImportedCase(c, links);
      expect(links, 'the existing link, and the rows less the clash').to.have.length(c.rows);
    });
  }

  it('answers a refused job with the API error envelope on stderr', async () => {
    const key = await aKey();
    const { code, stderr } = await cli(key, 'import', 'shlink', '--token', 'x');
    expect(code).to.equal(1);
    expect((JSON.parse(stderr) as { error: { code: string } }).error.code).to.equal('validation_failed');
  });

  it('on a terminal: a progress bar redrawn in place, then a summary', async () => {
    const key = await aKey();
    const own = await startDubServer({
      token: TOKEN,
      links: [
        { id: 't1', domain: 'dub.sh', key: 'tty-one', url: 'https://example.com/t1' },
        { id: 't2', domain: 'dub.sh', key: 'tty-two', url: 'https://example.com/t2' },
      ],
    });
    let text = '';
    const code = await runImport('dub', { token: TOKEN, 'base-url': own.url }, { env: { LINKPLANE_API_URL: api.url, LINKPLANE_API_KEY: key }, tty: true, write: (t) => (text += t), pollMs: 50 });
    await own.close();
    expect(code, text).to.equal(0);
    expect(text).to.include('\r\x1b[2K');
    expect(text).to.match(/2 rows · 2 created · 0 skipped · 0 failed · succeeded\n/);
    expect(text).to.match(/import imp_\w+\n$/);
  });
});
