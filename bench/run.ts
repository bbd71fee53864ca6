// `npm run bench`: every benchmark, each in one interleaved run. BENCH_SECONDS, BENCH_ROUNDS and
// BENCH_CONNECTIONS shorten or lengthen it. Results go to stdout and bench/results/<name>.json. Whatever a
// benchmark created on the shared nats-server (streams of the prefixes it was handed) is deleted when it ends,
// fails or is interrupted.
import { mkdirSync, writeFileSync } from 'node:fs';
import { NATS_URL, usedPrefixes } from '../test/helpers/env.ts';
import { deletePrefixedStreams } from '../test/helpers/nats-cleanup.ts';
import { stopAll } from './harness.ts';
import { foundationBench } from './foundation.bench.ts';
import { linksBench } from './links.bench.ts';
import { webhooksBench } from './webhooks.bench.ts';
import { clickedBench } from './clicked.bench.ts';
import { redirectBench } from './redirect.bench.ts';
import { partnerBench } from './partner.bench.ts';
import { allInOneBench } from './all-in-one.bench.ts';
import { conversionsBench } from './conversions.bench.ts';
import { analyticsBench } from './analytics.bench.ts';
import { devdbBench } from './devdb.bench.ts';
import { devdbMemoryBench } from './devdb-memory.bench.ts';

const options = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  seconds: Number(process.env.BENCH_SECONDS ?? 5),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
};

const benches: Record<string, (o: typeof options) => Promise<Record<string, unknown>>> = {
  foundation: foundationBench,
  links: linksBench,
  webhooks: webhooksBench,
  clicked: clickedBench,
  redirect: redirectBench,
  partner: partnerBench,
  'all-in-one': allInOneBench,
  conversions: conversionsBench,
  analytics: analyticsBench,
  devdb: devdbBench,
  'devdb-memory': devdbMemoryBench,
};

async function cleanUp(): Promise<void> {
  await stopAll();
  const deleted = await deletePrefixedStreams(NATS_URL, usedPrefixes);
  if (deleted) console.error(`deleted ${deleted} JetStream streams of prefixes ${[...usedPrefixes].join(', ')}`);
  usedPrefixes.clear();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`${signal}: stopping the servers and deleting this run's streams`);
    void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

const only = process.argv[2];
if (only && !(only in benches)) throw new Error(`no benchmark named ${only}: ${Object.keys(benches).join(', ')}`);
mkdirSync('bench/results', { recursive: true });
for (const [name, bench] of Object.entries(benches)) {
  if (only && only !== name) continue;
  console.error(`== ${name} (${options.rounds} rounds × ${options.seconds} s, ${options.connections} connections)`);
  try {
    const result = { name, at: new Date().toISOString(), node: process.version, ...options, ...(await bench(options)) };
    writeFileSync(`bench/results/${name}.json`, JSON.stringify(result, null, 2));
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await cleanUp();
  }
}
