// Webhooks benchmark: one api and one worker (child processes, devdb child) delivering to a local receiver in
// this process. Throughput: 1,000 endpoints subscribed to link.created in one workspace, N links created through
// the api, deliveries per second at the receiver (all deliveries / first to last). Latency: POST /links to the
// receiver seeing that link's link.created, on a separate single-endpoint workspace, links one at a time, with
// the 1,000-endpoint load idle (measured after it has drained). BENCH_WEBHOOK_LINKS (default 10) and
// BENCH_WEBHOOK_SAMPLES (default 50) change the sizes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookStore, type WebhookDoc } from '../src/webhooks/webhook.store.ts';
import { newSigningSecret, SecretBox } from '../src/webhooks/secret-box.ts';
import { newEndpointDoc } from '../src/webhooks/webhook.service.ts';
import { natsPrefix, NATS_URL } from '../test/helpers/env.ts';
import { benchDatabase, freePort, median, startChild, stopChild } from './harness.ts';
import type { BenchOptions } from './foundation.bench.ts';

const ENDPOINTS = 1000;
const SECRET_KEY = 'webhooks-bench-secret-key-0123456789abcdef';

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

export async function webhooksBench(_options: BenchOptions): Promise<Record<string, unknown>> {
  const links = Number(process.env.BENCH_WEBHOOK_LINKS ?? 10);
  const samples = Number(process.env.BENCH_WEBHOOK_SAMPLES ?? 50);

  // The receiver: 204 to everything; records when each load delivery and each latency probe arrives.
  let loadCount = 0;
  let firstAt = 0;
  let lastAt = 0;
  const probeSeen = new Map<string, number>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      if (req.url === '/load') {
        if (loadCount === 0) firstAt = now;
        lastAt = now;
        loadCount++;
      } else {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { id: string } };
        if (body.type === 'link.created') probeSeen.set(body.data.id, now);
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const [apiPort, workerPort] = await Promise.all([freePort(), freePort()]);
  const database = await benchDatabase();
  const mongoUri = database.uri;
  const children = [database.child];
  try {
    const loadWs = await database.aWorkspace('webhooks load');
    const probeWs = await database.aWorkspace('webhooks latency');
    // The 20-per-tenant quota is the api's: the 1,000 endpoints are written through the store.
    const box = new SecretBox(SECRET_KEY);
    const endpoint = (workspaceId: string, path: string): WebhookDoc =>
      newEndpointDoc({ kind: 'workspace', id: workspaceId }, { url: `${receiverUrl}${path}`, events: ['link.created'], name: null }, newSigningSecret(), box, new Date());
    const webhooks = new WebhookStore(database.db);
    await webhooks.collection.insertMany(Array.from({ length: ENDPOINTS }, () => endpoint(loadWs.id, '/load')));
    await webhooks.insert(endpoint(probeWs.id, '/probe'));
    await database.close();

    const env = {
      NODE_ENV: 'test',
      MONGODB_URI: mongoUri,
      MONGODB_DB: 'linkplane_bench',
      HOST: '127.0.0.1',
      NATS_URL,
      NATS_PREFIX: natsPrefix(),
      SECRET_KEY,
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      OUTBOX_POLL_MS: '50',
    };
    children.push(await startChild('src/main/run.ts', ['api'], { ...env, API_PORT: String(apiPort) }, `http://127.0.0.1:${apiPort}/readyz`));
    children.push(await startChild('src/main/run.ts', ['worker'], { ...env, WORKER_PORT: String(workerPort) }, `http://127.0.0.1:${workerPort}/readyz`));
    const base = `http://127.0.0.1:${apiPort}/v1`;
    const post = (key: string, i: number) =>
      fetch(`${base}/links`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ url: `https://example.com/${i}` }) });

    // Warm-up: one probe link through the whole path (JIT, connections, consumers).
    const warm = (await (await post(probeWs.key, -1)).json()) as { id: string };
    const waitFor = async (check: () => boolean, timeoutMs: number) => {
      const deadline = performance.now() + timeoutMs;
      while (!check() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      return check();
    };
    await waitFor(() => probeSeen.has(warm.id), 15_000);

    // Throughput: N links at once, N × 1,000 deliveries.
    const expected = links * ENDPOINTS;
    const started = performance.now();
    const created = await Promise.all(Array.from({ length: links }, (_, i) => post(loadWs.key, i).then((r) => r.status)));
    const drained = await waitFor(() => loadCount >= expected, 40_000);
    const throughput = {
      endpoints: ENDPOINTS,
      links,
      links_created: created.filter((s) => s === 201).length,
      expected_deliveries: expected,
      deliveries: loadCount,
      complete: drained,
      seconds_first_to_last: round1((lastAt - firstAt) / 1000),
      deliveries_per_second: Math.round(loadCount / Math.max((lastAt - firstAt) / 1000, 0.001)),
      first_delivery_after_ms: Math.round(firstAt - started),
    };
    console.error(`webhooks throughput: ${throughput.deliveries}/${expected} deliveries to ${ENDPOINTS} endpoints in ${throughput.seconds_first_to_last} s: ${throughput.deliveries_per_second}/s`);

    // Latency: one link at a time on the single-endpoint workspace, the load above idle (drained).
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      const res = await post(probeWs.key, i);
      const { id } = (await res.json()) as { id: string };
      if (await waitFor(() => probeSeen.has(id), 10_000)) latencies.push(probeSeen.get(id)! - t0);
    }
    const latency = {
      load: 'idle (measured after the 1,000-endpoint load drained)',
      samples: latencies.length,
      p50_ms: round1(percentile(latencies, 50)),
      p99_ms: round1(percentile(latencies, 99)),
      median_ms: round1(median(latencies)),
      max_ms: round1(Math.max(...latencies)),
    };
    console.error(`webhooks latency POST /links → receiver: p50 ${latency.p50_ms} ms p99 ${latency.p99_ms} ms (${latency.samples} samples, load idle)`);
    return { database: 'devdb (src/devdb, separate process)', processes: 'api + worker (child processes), receiver in the bench process', throughput, latency };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}
