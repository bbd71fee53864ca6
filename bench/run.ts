// `npm run bench`: every benchmark, each in one interleaved run. BENCH_SECONDS, BENCH_ROUNDS and
// BENCH_CONNECTIONS shorten or lengthen it. Results go to stdout and bench/results/<name>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { foundationBench } from './foundation.bench.ts';
import { linksBench } from './links.bench.ts';
import { webhooksBench } from './webhooks.bench.ts';
import { redirectBench } from './redirect.bench.ts';
import { partnerBench } from './partner.bench.ts';
import { allInOneBench } from './all-in-one.bench.ts';
import { conversionsBench } from './conversions.bench.ts';
import { analyticsBench } from './analytics.bench.ts';

const options = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  seconds: Number(process.env.BENCH_SECONDS ?? 5),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
};

const benches: Record<string, (o: typeof options) => Promise<Record<string, unknown>>> = {
  foundation: foundationBench,
  links: linksBench,
  webhooks: webhooksBench,
  redirect: redirectBench,
  partner: partnerBench,
  'all-in-one': allInOneBench,
  conversions: conversionsBench,
  analytics: analyticsBench,
};
const only = process.argv[2];
mkdirSync('bench/results', { recursive: true });
for (const [name, bench] of Object.entries(benches)) {
  if (only && only !== name) continue;
  console.error(`== ${name} (${options.rounds} rounds × ${options.seconds} s, ${options.connections} connections)`);
  const result = { name, at: new Date().toISOString(), node: process.version, ...options, ...(await bench(options)) };
  writeFileSync(`bench/results/${name}.json`, JSON.stringify(result, null, 2));
  console.log(JSON.stringify(result, null, 2));
}
