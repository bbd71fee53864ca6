// Foundation benchmark: what auth (cached key), the shared rate limit, request logging and metrics cost, measured
// against a bare node:http server (the physical baseline) and a bare Koa app with one route (the framework floor).
import { natsPrefix, NATS_URL } from '../test/helpers/env.ts';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { benchDatabase, freePort, interleaved, pairedCpuMedian, pairedMedian, startChild, stopChild, summarise, type Target } from './harness.ts';
import { UserStore } from '../src/tenancy/user.store.ts';
import { MembershipStore } from '../src/tenancy/membership.store.ts';
import { createUser, grant } from '../src/users/accounts.ts';

export interface BenchOptions {
  rounds: number;
  seconds: number;
  connections: number;
}

export async function foundationBench(options: BenchOptions): Promise<Record<string, unknown>> {
  const [httpPort, koaPort, apiPort] = await Promise.all([freePort(), freePort(), freePort()]);
  // BENCH_PROFILE=<dir>: the api and devdb write a CPU profile there when they stop.
  const profile: Record<string, string> = process.env.BENCH_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE} --cpu-prof-interval=${process.env.BENCH_PROFILE_INTERVAL_US ?? 1000}` } : {};
  const database = await benchDatabase(profile);
  const mongoUri = database.uri;
  const children = [database.child];
  try {
    // A typical integration key: a few scopes, not all of them.
    const { id: workspaceId, key } = await database.aWorkspace('bench', ['links:read', 'links:write', 'workspace:read']);
    // A dashboard user of the same workspace: the cookie path of the gate, measured next to the bearer path.
    const users = new UserStore(database.db);
    await users.ensureIndexes();
    const user = await createUser(users, { email: 'bench@example.com', password: 'bench-password' });
    await grant(new MembershipStore(database.db), { exists: () => Promise.resolve(true) }, { userId: user._id, kind: 'workspace', targetId: workspaceId, role: 'member' });
    await database.close();

    // On a loaded machine the api takes a while to load its modules: as long as the links benchmark gives it.
    const apiChild = await startChild(
      'src/main/run.ts',
      ['api'],
      { NODE_ENV: 'test', MONGODB_URI: mongoUri, MONGODB_DB: 'linkplane_bench', API_PORT: String(apiPort), HOST: '127.0.0.1', NATS_URL, NATS_PREFIX: natsPrefix(), LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', ...profile },
      `http://127.0.0.1:${apiPort}/readyz`,
      120_000,
    );
    children.push(apiChild);
    // BENCH_BASELINE_ROOT: another checkout (say, the commit before a change) whose api runs in the same rounds.
    const baselineRoot = process.env.BENCH_BASELINE_ROOT;
    const baselinePort = baselineRoot ? await freePort() : 0;
    let baselineApi: ChildProcess | undefined;
    if (baselineRoot) {
      children.push(
        (baselineApi = await startChild(
          join(baselineRoot, 'src/main/run.ts'),
          ['api'],
          { NODE_ENV: 'test', MONGODB_URI: mongoUri, MONGODB_DB: 'linkplane_bench', API_PORT: String(baselinePort), HOST: '127.0.0.1', NATS_URL, NATS_PREFIX: natsPrefix(), LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' },
          `http://127.0.0.1:${baselinePort}/readyz`,
          120_000,
        )),
      );
    }
    const signIn = await fetch(`http://127.0.0.1:${apiPort}/auth/sign-in`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password' }),
    });
    const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
    const body = await (await fetch(`http://127.0.0.1:${apiPort}/v1/key`, { headers: { Authorization: `Bearer ${key}` } })).text();
    const bareHttp = await startChild('bench/servers/bare-http.ts', [], { PORT: String(httpPort), BODY: body }, `http://127.0.0.1:${httpPort}/v1/key`);
    children.push(bareHttp);
    const bareKoa = await startChild('bench/servers/bare-koa.ts', [], { PORT: String(koaPort), BODY: body }, `http://127.0.0.1:${koaPort}/v1/key`);
    children.push(bareKoa);

    // Each target's server: its CPU per request is measured beside the rate (the rate moves with the neighbours'
    // load on a shared machine, CPU per request much less).
    const targets: Target[] = [
      { name: 'node:http', url: `http://127.0.0.1:${httpPort}/v1/key`, server: bareHttp },
      { name: 'koa', url: `http://127.0.0.1:${koaPort}/v1/key`, server: bareKoa },
      { name: 'api GET /v1/key', url: `http://127.0.0.1:${apiPort}/v1/key`, headers: { Authorization: `Bearer ${key}` }, server: apiChild },
      { name: 'api GET /v1/key (dashboard session)', url: `http://127.0.0.1:${apiPort}/v1/key`, headers: { Cookie: cookie, 'Linkplane-Context': workspaceId }, server: apiChild },
    ];
    if (baselineApi) targets.push({ name: 'baseline api GET /v1/key', url: `http://127.0.0.1:${baselinePort}/v1/key`, headers: { Authorization: `Bearer ${key}` }, server: baselineApi });
    const samples = await interleaved(
      targets,
      options.rounds,
      options.seconds,
      options.connections,
    );
    const rows = summarise(samples);
    const [bare, koa, api, session] = rows;
    const baseline = rows[4];
    return {
      rows,
      ratios: {
        api_vs_koa: api!.rps / koa!.rps,
        api_vs_node_http: api!.rps / bare!.rps,
        koa_vs_node_http: koa!.rps / bare!.rps,
        // Each round's servers ran back to back, so a per-round ratio cancels most of the machine's drift.
        api_vs_koa_per_round_median: pairedMedian(samples.get('api GET /v1/key')!, samples.get('koa')!),
        session_vs_api: session!.rps / api!.rps,
        ...(baseline ? { api_vs_baseline_per_round_median: pairedMedian(samples.get('api GET /v1/key')!, samples.get('baseline api GET /v1/key')!) } : {}),
        // The same ratios from CPU per request: koa's CPU per request over the api's (1: as cheap as koa).
        api_vs_koa_cpu_per_round_median: pairedCpuMedian(samples.get('api GET /v1/key')!, samples.get('koa')!),
        session_vs_api_cpu_per_round_median: pairedCpuMedian(samples.get('api GET /v1/key (dashboard session)')!, samples.get('api GET /v1/key')!),
        ...(baseline
          ? {
              baseline_vs_koa_cpu_per_round_median: pairedCpuMedian(samples.get('baseline api GET /v1/key')!, samples.get('koa')!),
              api_vs_baseline_cpu_per_round_median: pairedCpuMedian(samples.get('api GET /v1/key')!, samples.get('baseline api GET /v1/key')!),
            }
          : {}),
      },
      target: 'api ≥ 60 % of koa',
    };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
  }
}
