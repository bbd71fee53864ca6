// Foundation benchmark: what auth (cached key), the shared rate limit, request logging and metrics cost, measured
// against a bare node:http server (the physical baseline) and a bare Koa app with one route (the framework floor).
import { MongoClient } from 'mongodb';
import { KeyService } from '../src/keys/key.service.ts';
import { KeyStore } from '../src/keys/key.store.ts';
import { WorkspaceStore } from '../src/workspace/workspace.store.ts';
import { PartnerStore } from '../src/partner/partner.store.ts';
import { newId } from '../src/platform/ids.ts';
import { pino } from 'pino';
import { natsPrefix, NATS_URL } from '../test/helpers/env.ts';
import { freePort, interleaved, pairedMedian, startChild, stopChild, summarise } from './harness.ts';

export interface BenchOptions {
  rounds: number;
  seconds: number;
  connections: number;
}

export async function foundationBench(options: BenchOptions): Promise<Record<string, unknown>> {
  const [dbPort, httpPort, koaPort, apiPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const mongoUri = `mongodb://127.0.0.1:${dbPort}/?directConnection=true`;
  const devdb = await startChild('src/devdb/main.ts', ['--port', String(dbPort)], {}, dbPort);
  const children = [devdb];
  try {
    const client = new MongoClient(mongoUri);
    await client.connect();
    const db = client.db('linkplane_bench');
    const workspaces = new WorkspaceStore(db);
    const keys = new KeyService({
      keys: new KeyStore(db),
      workspaces,
      partners: new PartnerStore(db),
      logger: pino({ level: 'silent' }),
      cacheTtlMs: 0,
      defaultRateLimits: { workspacePerMinute: 600, partnerPerMinute: 1200 },
    });
    const wsId = newId('ws');
    // A limit no benchmark reaches: the limiter still counts every request, which is the cost measured.
    await workspaces.insert({ _id: wsId, name: 'bench', plan_id: 'enterprise', partner_id: null, limits_override: { rate_limit_per_minute: 100_000_000 }, created_at: new Date() });
    // A typical integration key: a few scopes, not all of them.
    const { key } = await keys.create({ kind: 'workspace', ownerId: wsId, scopes: ['links:read', 'links:write', 'workspace:read'] });
    await client.close();

    children.push(
      await startChild(
        'src/main/run.ts',
        ['api'],
        { NODE_ENV: 'test', MONGODB_URI: mongoUri, MONGODB_DB: 'linkplane_bench', API_PORT: String(apiPort), HOST: '127.0.0.1', NATS_URL, NATS_PREFIX: natsPrefix(), LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' },
        `http://127.0.0.1:${apiPort}/readyz`,
      ),
    );
    const body = await (await fetch(`http://127.0.0.1:${apiPort}/v1/key`, { headers: { Authorization: `Bearer ${key}` } })).text();
    children.push(await startChild('bench/servers/bare-http.ts', [], { PORT: String(httpPort), BODY: body }, `http://127.0.0.1:${httpPort}/v1/key`));
    children.push(await startChild('bench/servers/bare-koa.ts', [], { PORT: String(koaPort), BODY: body }, `http://127.0.0.1:${koaPort}/v1/key`));

    const samples = await interleaved(
      [
        { name: 'node:http', url: `http://127.0.0.1:${httpPort}/v1/key` },
        { name: 'koa', url: `http://127.0.0.1:${koaPort}/v1/key` },
        { name: 'api GET /v1/key', url: `http://127.0.0.1:${apiPort}/v1/key`, headers: { Authorization: `Bearer ${key}` } },
      ],
      options.rounds,
      options.seconds,
      options.connections,
    );
    const rows = summarise(samples);
    const [bare, koa, api] = rows;
    return {
      rows,
      ratios: {
        api_vs_koa: api!.rps / koa!.rps,
        api_vs_node_http: api!.rps / bare!.rps,
        koa_vs_node_http: koa!.rps / bare!.rps,
        // Each round's servers ran back to back, so a per-round ratio cancels most of the machine's drift.
        api_vs_koa_per_round_median: pairedMedian(samples.get('api GET /v1/key')!, samples.get('koa')!),
      },
      target: 'api ≥ 60 % of koa',
    };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
  }
}
