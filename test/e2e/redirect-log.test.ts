// The redirect's request log: a visit recorded as a click is not logged again (its click is its record) unless
// REDIRECT_ACCESS_LOG_CLICKS asks for it; everything else is.
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi } from '../helpers/http.ts';

class Lines extends Writable {
  readonly lines: Array<{ msg?: string; route?: string; status?: number; method?: string }> = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') this.lines.push(JSON.parse(line) as Lines['lines'][number]);
    done();
  }
  requests(): string[] {
    return this.lines.filter((l) => l.msg === 'request' && l.route === 'redirect').map((l) => `${l.method} ${l.status}`);
  }
}

describe('Redirect request log', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let key: string;
  let env: Record<string, string>;
  let base: string;

  before(async () => {
    mongo = await startTestMongo();
    ({ env, base } = await shortLinkEnv(mongo));
    api = await startApi(env);
    const tenants = await Tenants.open(mongo);
    key = (await tenants.aWorkspaceKey((await tenants.aWorkspace())._id)).key;
    await tenants.close();
    expect((await callApi(api.url, 'POST', '/links', { key, body: { url: 'https://example.com/logged', slug: 'logged' } })).status).to.equal(201);
  });

  after(async () => {
    await api.stop();
    await mongo.stop();
  });

  async function visits(overrides: Record<string, string>): Promise<string[]> {
    const log = new Lines();
    const redirect = await startRedirect({ ...env, LOG_LEVEL: 'info', ...overrides }, log);
    try {
      await fetch(`${base}/logged`, { redirect: 'manual' });
      await fetch(`${base}/logged`, { method: 'HEAD', redirect: 'manual' });
      await fetch(`${base}/no-such-link`, { redirect: 'manual' });
    } finally {
      await redirect.stop();
    }
    return log.requests();
  }

  it('logs HEAD and not-found answers, not the redirect its click records', async () => {
    expect(await visits({})).to.deep.equal(['HEAD 302', 'GET 404']);
  });

  it('logs every request with REDIRECT_ACCESS_LOG_CLICKS', async () => {
    expect(await visits({ REDIRECT_ACCESS_LOG_CLICKS: 'true' })).to.deep.equal(['GET 302', 'HEAD 302', 'GET 404']);
  });
});
