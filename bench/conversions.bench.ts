// Conversions benchmark: POST /v1/conversions recording new conversions (each request a different genuine click id:
// signature check, click lookup, conversion and its conversion.created outbox row in one transaction), the same
// external_id again (the de-duplicated answer), and a bare node:http server reading the same body and answering the
// same bytes, in interleaved rounds on devdb.
import autocannon from 'autocannon';
import { natsPrefix, NATS_URL } from '../test/helpers/env.ts';
import { ClickIds } from '../src/clicks/click-id.ts';
import { toClickDoc } from '../src/clicks/click.store.ts';
import { randomClick, seeded as seededRandom } from '../test/helpers/analytics-clicks.ts';
import { benchDatabase, freePort, median, startChild, stopChild } from './harness.ts';
import type { BenchOptions } from './foundation.bench.ts';

const SECRET = 'bench-conversions-secret-key-0123456789abcdef';

export async function conversionsBench(options: BenchOptions): Promise<Record<string, unknown>> {
  const [apiPort, httpPort] = await Promise.all([freePort(), freePort()]);
  const database = await benchDatabase();
  const children = [database.child];
  try {
    const { id: workspaceId, key } = await database.aWorkspace('bench');
    await database.db.collection('workspaces').updateOne({ _id: workspaceId as never }, { $set: { conversion_tracking: true } });
    // Clicks as the ingestion stores them (every field the analytics read), one per conversion the run may record.
    const clickIds = new ClickIds(SECRET);
    const seeded = Number(process.env.BENCH_CLICKS ?? 60_000);
    const ids: string[] = [];
    const rand = seededRandom(1);
    const link = { id: 'lnk_bench', domain_id: 'dom_default', domain: 'lp.bench', slug: 'bench', tag_ids: [], folder_id: null };
    const now = Date.now();
    for (let batch = 0; batch * 1000 < seeded; batch++) {
      const docs = Array.from({ length: 1000 }, () => {
        const click = randomClick(rand, workspaceId, [link], now - 3_600_000, now, 10_000);
        click.id = clickIds.issue(workspaceId);
        ids.push(click.id);
        // Ingested: counted, and its analytics figures rolled up (the conversion adds to the same cells).
        return { ...toClickDoc(click), counted: true, rolled_up: true };
      });
      await database.db.collection('clicks').insertMany(docs as never[]);
    }
    await database.close();
    children.push(
      await startChild(
        'src/main/run.ts',
        ['api'],
        { NODE_ENV: 'test', MONGODB_URI: database.uri, MONGODB_DB: 'linkplane_bench', API_PORT: String(apiPort), HOST: '127.0.0.1', NATS_URL, NATS_PREFIX: natsPrefix(), LOG_LEVEL: 'warn', SECRET_KEY: SECRET },
        `http://127.0.0.1:${apiPort}/readyz`,
      ),
    );
    const base = `http://127.0.0.1:${apiPort}/v1`;
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const first = await fetch(`${base}/conversions`, { method: 'POST', headers, body: JSON.stringify({ click_id: ids.pop(), type: 'order', amount: 4999, currency: 'EUR', external_id: 'order-dup' }) });
    const answer = await first.text();
    if (first.status !== 201) throw new Error(`seed conversion: ${first.status} ${answer}`);
    children.push(await startChild('bench/servers/bare-http.ts', [], { PORT: String(httpPort), BODY: answer, ROUTE: '/v1/conversions' }, `http://127.0.0.1:${httpPort}/v1/conversions`));

    const run = async (name: string, opts: autocannon.Options) => {
      const r = await autocannon({ connections: 10, duration: options.seconds, method: 'POST', headers, ...opts });
      console.error(`${name}: ${Math.round(r.requests.average)} req/s p99 ${r.latency.p99} ms non-2xx ${r.non2xx}`);
      return { target: name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
    };
    const order = (clickId: string | undefined) => JSON.stringify({ click_id: clickId, type: 'order', amount: 4999, currency: 'EUR' });
    const targets: Array<[string, autocannon.Options]> = [
      ['node:http (same bytes)', { url: `http://127.0.0.1:${httpPort}/v1/conversions`, body: order(ids[0]) }],
      ['POST /v1/conversions (new)', { url: `${base}/conversions`, requests: [{ setupRequest: (req) => ({ ...req, body: order(ids.pop()) }) }] }],
      ['POST /v1/conversions (same external_id)', { url: `${base}/conversions`, body: JSON.stringify({ click_id: ids[0], type: 'order', amount: 4999, currency: 'EUR', external_id: 'order-dup' }) }],
    ];
    const samples = new Map<string, Array<Awaited<ReturnType<typeof run>>>>(targets.map(([name]) => [name, []]));
    for (let round = 0; round < options.rounds; round++) {
      for (const [name, opts] of targets) samples.get(name)!.push(await run(name, opts));
    }
    const rows = [...samples].map(([target, s]) => ({
      target,
      rps: Math.round(median(s.map((x) => x.rps))),
      p50: median(s.map((x) => x.p50)),
      p99: median(s.map((x) => x.p99)),
      non2xx: s.reduce((n, x) => n + x.non2xx, 0),
    }));
    const recorded = rows[1]!.rps;
    return { database: 'devdb (src/devdb, separate process)', clicks_seeded: seeded, clicks_left_unused: ids.length, rows, ratios: { new_vs_node_http: recorded / rows[0]!.rps, dedup_vs_node_http: rows[2]!.rps / rows[0]!.rps } };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
  }
}
