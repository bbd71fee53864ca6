// `link.clicked` benchmark: clicks streamed to a webhook receiver in batches. A worker in a child process of its own
// (devdb child; click ingestion runs beside it, as in production), one workspace endpoint subscribed to
// `link.clicked`, a receiver in this process. Clicks are published on CLICKS as the redirect publishes them (its wire
// form, 50 clicks of one workspace per message), as fast as JetStream takes them. Throughput: clicks per second at
// the receiver (first to last), the deliveries they came in and clicks per delivery, every click counted once.
// Latency: one click at a time, the load idle: publish → receiver, which the batch wait (WEBHOOK_CLICK_BATCH_WAIT_MS)
// dominates by design. BENCH_CLICKED_CLICKS (default 20000) and BENCH_CLICKED_SAMPLES (default 20) change the
// sizes; the worker runs with the production defaults of WEBHOOK_CLICK_BATCH_SIZE (100) and its wait (1000 ms)
// unless they are set in the environment of the run.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { WebhookStore } from '../src/webhooks/webhook.store.ts';
import { newSigningSecret, SecretBox } from '../src/webhooks/secret-box.ts';
import { newEndpointDoc } from '../src/webhooks/webhook.service.ts';
import { connectNats, provisionStreams } from '../src/platform/nats.ts';
import { encodeClicks } from '../src/clicks/click-wire.ts';
import { ClickIds } from '../src/clicks/click-id.ts';
import { aClickRecord } from '../test/helpers/click-builders.ts';
import { natsPrefix, NATS_URL } from '../test/helpers/env.ts';
import { benchDatabase, freePort, median, startChild, stopChild } from './harness.ts';
import type { BenchOptions } from './foundation.bench.ts';

const SECRET_KEY = 'clicked-bench-secret-key-0123456789abcdef';
const PER_MESSAGE = 50;

const round1 = (n: number) => Math.round(n * 10) / 10;

export async function clickedBench(_options: BenchOptions): Promise<Record<string, unknown>> {
  const total = Number(process.env.BENCH_CLICKED_CLICKS ?? 20_000);
  const samples = Number(process.env.BENCH_CLICKED_SAMPLES ?? 20);
  const batchSize = process.env.WEBHOOK_CLICK_BATCH_SIZE ?? '100';
  const batchWaitMs = process.env.WEBHOOK_CLICK_BATCH_WAIT_MS ?? '1000';

  // The receiver: 204 to everything; counts clicks and deliveries, remembers when each click arrived.
  const seen = new Map<string, number>();
  let deliveries = 0;
  let duplicates = 0;
  let largest = 0;
  let firstAt = 0;
  let lastAt = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { clicks: { id: string }[] } };
      if (body.type === 'link.clicked') {
        deliveries++;
        largest = Math.max(largest, body.data.clicks.length);
        if (firstAt === 0) firstAt = now;
        lastAt = now;
        for (const click of body.data.clicks) {
          if (seen.has(click.id)) duplicates++;
          else seen.set(click.id, now);
        }
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const workerPort = await freePort();
  const database = await benchDatabase();
  const children = [database.child];
  const prefix = natsPrefix();
  const nats = await connectNats({ url: NATS_URL, prefix, name: 'clicked-bench', logger: pino({ level: 'silent' }) });
  try {
    await provisionStreams(nats, 3_600_000);
    const ws = await database.aWorkspace('clicked');
    const webhooks = new WebhookStore(database.db);
    await webhooks.insert(newEndpointDoc({ kind: 'workspace', id: ws.id }, { url: `${receiverUrl}/clicks`, events: ['link.clicked'], name: null }, newSigningSecret(), new SecretBox(SECRET_KEY), new Date()));
    await database.close();
    const env = {
      NODE_ENV: 'test',
      MONGODB_URI: database.uri,
      MONGODB_DB: 'linkplane_bench',
      HOST: '127.0.0.1',
      NATS_URL,
      NATS_PREFIX: prefix,
      SECRET_KEY,
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_CLICK_BATCH_SIZE: batchSize,
      WEBHOOK_CLICK_BATCH_WAIT_MS: batchWaitMs,
      LINK_PREVIEW_INTERVAL_MS: '3600000',
    };
    children.push(await startChild('src/main/run.ts', ['worker'], { ...env, WORKER_PORT: String(workerPort) }, `http://127.0.0.1:${workerPort}/readyz`));

    const ids = new ClickIds(SECRET_KEY);
    const publish = async (count: number): Promise<string[]> => {
      const clicks = Array.from({ length: count }, () => aClickRecord(ids.issue(ws.id), { workspace_id: ws.id, link_id: 'lnk_bench' }));
      await nats.js.publish(nats.subjects.click(ws.id), encodeClicks(ws.id, clicks), { msgID: clicks[0]!.id });
      return clicks.map((c) => c.id);
    };
    const waitFor = async (check: () => boolean, timeoutMs: number) => {
      const deadline = performance.now() + timeoutMs;
      while (!check() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      return check();
    };

    // Warm-up: one click through the whole path (consumers created, connections open).
    const [warm] = await publish(1);
    await waitFor(() => seen.has(warm!), 20_000);
    seen.clear();
    deliveries = 0;
    largest = 0;
    firstAt = 0;

    // Throughput: `total` clicks, 50 a message, 8 publishes in flight.
    const started = performance.now();
    let sent = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent < total) {
          const n = Math.min(PER_MESSAGE, total - sent);
          sent += n;
          await publish(n);
        }
      }),
    );
    const publishedAt = performance.now();
    const complete = await waitFor(() => seen.size >= total, 120_000);
    const throughput = {
      clicks: total,
      received: seen.size,
      duplicates,
      complete,
      deliveries,
      clicks_per_delivery: round1(seen.size / Math.max(deliveries, 1)),
      largest_delivery: largest,
      published_in_ms: Math.round(publishedAt - started),
      first_delivery_after_ms: Math.round(firstAt - started),
      seconds_first_to_last: round1((lastAt - firstAt) / 1000),
      seconds_start_to_last: round1((lastAt - started) / 1000),
      clicks_per_second: Math.round(seen.size / Math.max((lastAt - started) / 1000, 0.001)),
    };
    console.error(
      `link.clicked throughput: ${throughput.received}/${total} clicks in ${deliveries} deliveries (${throughput.clicks_per_delivery} a delivery, largest ${largest}) ` +
        `in ${throughput.seconds_start_to_last} s from the first publish: ${throughput.clicks_per_second} clicks/s; duplicates ${duplicates}`,
    );

    // Latency: one click at a time, the load drained.
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      const [id] = await publish(1);
      if (await waitFor(() => seen.has(id!), 15_000)) latencies.push(seen.get(id!)! - t0);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const latency = {
      samples: latencies.length,
      p50_ms: round1(sorted[Math.floor(sorted.length / 2)] ?? 0),
      max_ms: round1(sorted.at(-1) ?? 0),
      median_ms: round1(median(latencies)),
      note: `a lone click waits for company up to the batch wait (${batchWaitMs} ms)`,
    };
    console.error(`link.clicked latency publish → receiver: p50 ${latency.p50_ms} ms, max ${latency.max_ms} ms (${latency.samples} samples)`);
    return {
      database: 'devdb (src/devdb, separate process)',
      processes: 'worker (child process: click ingestion and the link.clicked batcher), receiver and publisher in the bench process',
      batching: { batch_size: Number(batchSize), batch_wait_ms: Number(batchWaitMs) },
      throughput,
      latency,
    };
  } finally {
    await nats.drain();
    for (const child of children.reverse()) await stopChild(child);
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}
