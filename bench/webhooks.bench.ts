// Webhooks benchmark, in the split deployment: an api and a worker in child processes of their own (devdb child),
// the api waking the worker's outbox relay with an `outbox.wake` message on NATS, the relay's poll at its production
// default (OUTBOX_POLL_MS 250 ms, so an event that waited for it would show), delivering to a local receiver in this
// process. Throughput: 1,000 endpoints subscribed to link.created in one workspace, N links created through the api,
// deliveries per second at the receiver (all deliveries / first to last), with the milestones of the way there.
// Latency: POST /links to the receiver seeing that link's link.created, on a separate single-endpoint workspace,
// links one at a time, with the 1,000-endpoint load idle (measured after it has drained), and where that time went
// (api, relay, fan-out and delivery consumer, POST) from the times the processes stored. BENCH_WEBHOOK_LINKS
// (default 10) and BENCH_WEBHOOK_SAMPLES (default 200: a p99 of 50 samples is their maximum) change the sizes;
// BENCH_PROFILE=<dir> writes CPU profiles of the api and the worker.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient } from 'mongodb';
import type { EventDoc } from '../src/events/event.store.ts';
import type { WebhookDeliveryDoc } from '../src/webhooks/delivery.store.ts';
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

/** Wall-clock milliseconds of a `performance.now()` reading, comparable with the times the servers store. */
const wall = (now: number) => performance.timeOrigin + now;

interface Probe {
  linkId: string;
  sent: number;
  answered: number;
  received: number;
}

/** When the throughput phase's events were written and published, and its first and last attempts started. */
async function milestonesOf(uri: string, workspaceId: string, start: number): Promise<Record<string, number>> {
  const client = new MongoClient(uri);
  try {
    const db = client.db('linkplane_bench');
    const [e] = await db
      .collection<EventDoc>('events')
      .aggregate<{ w0: Date; w1: Date; p0: Date; p1: Date }>([{ $match: { workspace_id: workspaceId } }, { $group: { _id: null, w0: { $min: '$created_at' }, w1: { $max: '$created_at' }, p0: { $min: '$published_at' }, p1: { $max: '$published_at' } } }])
      .toArray();
    const [d] = await db
      .collection<WebhookDeliveryDoc>('webhook_deliveries')
      .aggregate<{ a0: Date; a1: Date }>([{ $match: { workspace_id: workspaceId } }, { $group: { _id: null, a0: { $min: '$created_at' }, a1: { $max: '$created_at' } } }])
      .toArray();
    const at = (date: Date | undefined) => (date ? Math.round(date.getTime() - start) : -1);
    return { first_event_written: at(e?.w0), last_event_written: at(e?.w1), first_event_published: at(e?.p0), last_event_published: at(e?.p1), first_attempt: at(d?.a0), last_attempt: at(d?.a1) };
  } finally {
    await client.close();
  }
}

/**
 * Where a probe's time went, from the times the processes stored: the api's answer; the event row's wait for the
 * relay (written → published: the wake-up over NATS, the read and the publish); the fan-out and the delivery
 * consumer (published → attempt started); the POST (attempt started → received).
 */
async function stagesOf(uri: string, workspaceId: string, probes: Probe[]): Promise<Record<string, { p50_ms: number; p99_ms: number }>> {
  const client = new MongoClient(uri);
  try {
    const db = client.db('linkplane_bench');
    const events = await db.collection<EventDoc>('events').find({ workspace_id: workspaceId, type: 'link.created' }).toArray();
    const eventOf = new Map(events.map((e) => [String(e.data.id), e]));
    const attempts = await db.collection<WebhookDeliveryDoc>('webhook_deliveries').find({ workspace_id: workspaceId, attempt: 1 }).toArray();
    const attemptOf = new Map(attempts.map((a) => [a.event_id, a]));
    const rows: Record<string, number[]> = { api_answer: [], outbox_relay: [], fanout_and_delivery_consumer: [], post: [] };
    for (const probe of probes) {
      const event = eventOf.get(probe.linkId);
      const attempt = event && attemptOf.get(event._id);
      if (!event?.published_at || !attempt) continue;
      rows.api_answer!.push(probe.answered - probe.sent);
      rows.outbox_relay!.push(event.published_at.getTime() - event.created_at.getTime());
      rows.fanout_and_delivery_consumer!.push(attempt.created_at.getTime() - event.published_at.getTime());
      rows.post!.push(probe.received - attempt.created_at.getTime());
    }
    return Object.fromEntries(Object.entries(rows).map(([stage, v]) => [stage, { p50_ms: round1(percentile(v, 50)), p99_ms: round1(percentile(v, 99)) }]));
  } finally {
    await client.close();
  }
}

export async function webhooksBench(_options: BenchOptions): Promise<Record<string, unknown>> {
  const links = Number(process.env.BENCH_WEBHOOK_LINKS ?? 10);
  const samples = Number(process.env.BENCH_WEBHOOK_SAMPLES ?? 200);

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
    };
    // BENCH_PROFILE=<dir>: the api and the worker write a CPU profile there when they stop.
    const profile: Record<string, string> = process.env.BENCH_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}` } : {};
    children.push(await startChild('src/main/run.ts', ['api'], { ...env, ...profile, API_PORT: String(apiPort) }, `http://127.0.0.1:${apiPort}/readyz`));
    children.push(await startChild('src/main/run.ts', ['worker'], { ...env, ...profile, WORKER_PORT: String(workerPort) }, `http://127.0.0.1:${workerPort}/readyz`));
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
    const answeredAt = performance.now();
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
      // From the start, when each step was reached: every POST answered, the outbox rows published, the fan-out's
      // delivery messages, the first and last attempts started by the delivery consumer.
      milestones_ms: { links_answered: Math.round(answeredAt - started), ...(await milestonesOf(mongoUri, loadWs.id, wall(started))), first_received: Math.round(firstAt - started), last_received: Math.round(lastAt - started) },
    };
    console.error(`webhooks throughput: ${throughput.deliveries}/${expected} deliveries to ${ENDPOINTS} endpoints in ${throughput.seconds_first_to_last} s: ${throughput.deliveries_per_second}/s`);

    // Latency: one link at a time on the single-endpoint workspace, the load above idle (drained).
    const latencies: number[] = [];
    const probes: Probe[] = [];
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      const res = await post(probeWs.key, i);
      const answered = performance.now();
      const { id } = (await res.json()) as { id: string };
      if (await waitFor(() => probeSeen.has(id), 10_000)) {
        latencies.push(probeSeen.get(id)! - t0);
        probes.push({ linkId: id, sent: wall(t0), answered: wall(answered), received: wall(probeSeen.get(id)!) });
      }
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
    const stages = await stagesOf(mongoUri, probeWs.id, probes);
    for (const [stage, { p50_ms, p99_ms }] of Object.entries(stages)) console.error(`  ${stage}: p50 ${p50_ms} ms p99 ${p99_ms} ms`);
    return { database: 'devdb (src/devdb, separate process)', processes: 'api + worker (child processes, relay woken over NATS, 250 ms poll), receiver in the bench process', throughput, latency: { ...latency, stages } };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}
