// Child of the devdb-memory benchmark: starts devdb on the data folder given, in a process of its own (so that the
// memory measured is this devdb's alone), reads a workspace's 50 latest clicks, and prints the start-up time and the
// memory held as JSON. `node bench/devdb-start.ts <dataDir> [<devdb module>]`: the module defaults to this tree's.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pathToFileURL } from 'node:url';
import { MongoClient } from 'mongodb';
import type { startDevDb as Start } from '../src/devdb/index.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MB = 1024 * 1024;

const [dataDir, module] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: node bench/devdb-start.ts <dataDir> [<devdb module>]');
const { startDevDb } = (await import(module ? pathToFileURL(module).href : '../src/devdb/index.ts')) as { startDevDb: typeof Start };
const baseRss = process.memoryUsage().rss;
const started = performance.now();
let replay: Record<string, unknown> | undefined;
const devdb = await startDevDb({ port: 0, dataDir, log: (msg, fields) => msg === 'devdb: journal replayed' && (replay = fields) });
const startMs = Math.round(performance.now() - started);
const client = new MongoClient(devdb.uri);
const clicks = client.db('linkplane').collection('clicks');
const count = await clicks.countDocuments();
const latestStarted = performance.now();
const latest = await clicks.find({ workspace_id: 'ws_bench1aaaaaaaaaaaaaaa' }).sort({ ts: -1 }).limit(50).toArray();
const latestMs = Math.round(performance.now() - latestStarted);
for (let i = 0; i < 3; i++) gc();
const m = process.memoryUsage();
await client.close();
await devdb.stop();
console.log(
  JSON.stringify({
    clicks: count,
    start_ms: startMs,
    replay,
    latest_50: latest.length,
    latest_50_ms: latestMs,
    heap_mb: Math.round(m.heapUsed / MB),
    buffers_mb: Math.round(m.arrayBuffers / MB),
    rss_mb: Math.round(m.rss / MB),
    base_rss_mb: Math.round(baseRss / MB),
    rss_bytes_per_click: Math.round((m.rss - baseRss) / count),
    heap_and_buffers_bytes_per_click: Math.round((m.heapUsed + m.arrayBuffers) / count),
  }),
);
