import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';

const PROMTOOL = '/usr/bin/promtool';

describe('the api /metrics', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let key: string;

  before(async () => {
    mongo = await startTestMongo();
    // A window large enough that no 429 joins the statuses under test.
    running = await startApi(testEnv(mongo, { RATE_LIMIT_WORKSPACE_PER_MIN: '100000' }));
    tenants = await Tenants.open(mongo);
    key = (await tenants.aWorkspaceKey((await tenants.aWorkspace())._id)).key;
  });

  after(async () => {
    await tenants.close();
    await running.stop();
    await mongo.stop();
  });

  const scrape = async () => (await fetch(`${running.url}/metrics`)).text();
  const durationSeries = (text: string) => text.split('\n').filter((line) => line.startsWith('http_request_duration_seconds_count{'));

  /** Requests answered before (or without) routing, each on a path of its own. */
  async function unroutedRequests(from: number, count: number): Promise<void> {
    for (let i = from; i < from + count; i += 25) {
      await Promise.all(
        Array.from({ length: 25 }, async (_, j) => {
          const n = i + j;
          const answers = await Promise.all([
            fetch(`${running.url}/v1/tags/x${n}`), // 401: no key
            fetch(`${running.url}/v1/links/lnk_${n}`, { headers: { Authorization: `Bearer lp_live_nope${n}` } }), // 401: unknown key
            fetch(`${running.url}/v1/nowhere-${n}`, { headers: bearer(key) }), // 404: no route
            fetch(`${running.url}/elsewhere/${n}`), // 404 outside /v1
            fetch(`${running.url}/v1/links/lnk_${n}`, { method: 'PATCH', headers: { ...bearer(key), 'Content-Type': 'application/json' }, body: '{' }), // 400 before routing
          ]);
          await Promise.all(answers.map((res) => res.arrayBuffer()));
        }),
      );
    }
  }

  it('labels requests answered before routing by route template or `unmatched`: distinct paths add no series', async () => {
    await unroutedRequests(0, 25);
    await scrape(); // the scrape is a request too: its own series is there from now on
    const before = durationSeries(await scrape());
    await unroutedRequests(25, 300);
    const after = durationSeries(await scrape());
    expect(after.length, after.join('\n')).to.equal(before.length);
    const routes = new Set(after.map((line) => /route="([^"]*)"/.exec(line)?.[1]));
    expect([...routes].filter((route) => /x\d|lnk_|nowhere|elsewhere/.test(route ?? '')), 'no raw path among the routes').to.deep.equal([]);
    expect(routes).to.include('/v1/tags/:id');
    expect(routes).to.include('/v1/links/:id');
    expect(routes).to.include('unmatched');
  });

  it('passes `promtool check metrics` without a remark', async () => {
    if (!existsSync(PROMTOOL)) throw new Error(`promtool not found at ${PROMTOOL}: apt-get install prometheus`);
    const checked = spawnSync(PROMTOOL, ['check', 'metrics'], { input: await scrape(), encoding: 'utf8' });
    expect(`${checked.stdout}${checked.stderr}`).to.equal('');
    expect(checked.status).to.equal(0);
  });
});
