// Partner benchmark: GET /v1/partner/payments for a partner with BENCH_PARTNER_CLIENTS (1,000) clients and
// BENCH_PAYMENTS (1,000,000) payments on devdb (first page and a page deep into a period, by cursor), against a bare
// node:http server answering the same bytes; then processor events ingested per second at the per-partner Stripe URL
// (each a new invoice.paid, signed as Stripe signs, so each writes a payment, its event and the event id).
import autocannon from 'autocannon';
import Stripe from 'stripe';
import { pino } from 'pino';
import { natsPrefix, NATS_URL } from '../test/helpers/env.ts';
import { MongoClient } from 'mongodb';
import { freePort, interleaved, startChild, stopChild, summarise } from './harness.ts';
import type { BenchOptions } from './foundation.bench.ts';
import { KeyService } from '../src/tenancy/key.service.ts';
import { KeyStore } from '../src/tenancy/key.store.ts';
import { WorkspaceStore, type WorkspaceDoc } from '../src/tenancy/workspace.store.ts';
import { PartnerStore } from '../src/tenancy/partner.store.ts';
import { LedgerStore, type PaymentDoc } from '../src/partner/ledger.store.ts';
import { SecretBox } from '../src/webhooks/secret-box.ts';
import { initialSubscription } from '../src/tenancy/subscription.ts';
import { splitPayment } from '../src/partner/fees.ts';
import { encodeCursor } from '../src/http/cursor.ts';
import { newId, randomBase62 } from '../src/platform/ids.ts';

const SECRET_KEY = 'bench-secret-key-bench-secret-key-0123456789';
const ENDPOINT_SECRET = 'whsec_benchbenchbenchbenchbench';
const PERIODS = ['2026-01', '2026-02', '2026-03', '2026-04', '2026-05', '2026-06', '2026-07', '2026-08', '2026-09', '2026-10'];

export async function partnerBench(options: BenchOptions): Promise<Record<string, unknown>> {
  const [apiPort, httpPort, dbPort] = await Promise.all([freePort(), freePort(), freePort()]);
  // A devdb of its own with room for a million payments and their indexes (the default heap would spend the seeding
  // in garbage collection), and a client patient with it while it is busy taking them in.
  const children = [await startChild('src/devdb/main.ts', ['--port', String(dbPort)], { NODE_OPTIONS: '--max-old-space-size=12288' }, dbPort)];
  const uri = `mongodb://127.0.0.1:${dbPort}/?directConnection=true`;
  const seeder = new MongoClient(uri, { serverSelectionTimeoutMS: 600_000, connectTimeoutMS: 600_000, socketTimeoutMS: 0, heartbeatFrequencyMS: 60_000 });
  await seeder.connect();
  try {
    const db = seeder.db('linkplane_bench');
    const clientsTotal = Number(process.env.BENCH_PARTNER_CLIENTS ?? 1_000);
    const paymentsTotal = Number(process.env.BENCH_PAYMENTS ?? 1_000_000);
    const partnerId = newId('ptr');
    await new PartnerStore(db).insert({
      _id: partnerId,
      name: 'Bench partner',
      rate_limit_per_minute: 100_000_000,
      created_at: new Date(),
      client_quota: clientsTotal + 10,
      clients_count: clientsTotal,
      stripe_secret_sealed: new SecretBox(SECRET_KEY).seal(ENDPOINT_SECRET, `partner-billing:${partnerId}`),
    });
    const keys = new KeyService({ keys: new KeyStore(db), workspaces: new WorkspaceStore(db), partners: new PartnerStore(db), logger: pino({ level: 'silent' }), cacheTtlMs: 0, defaultRateLimits: { workspacePerMinute: 600, partnerPerMinute: 1200 } });
    const key = (await keys.create({ kind: 'partner', ownerId: partnerId, scopes: ['billing:read', 'billing:write'] })).key;

    // Indexes first, so the seeded rows are indexed as they land (as in production).
    const ledger = new LedgerStore(db);
    const workspaces = new WorkspaceStore(db);
    await Promise.all([ledger.ensureIndexes(), workspaces.ensureIndexes()]);
    const seedStart = Date.now();
    const clients: WorkspaceDoc[] = Array.from({ length: clientsTotal }, (_, i) => ({
      _id: newId('ws'),
      name: `Client ${i}`,
      plan_id: 'free',
      partner_id: partnerId,
      limits_override: null,
      created_at: new Date(),
      subscription: { ...initialSubscription(new Date()), state: 'subscribed' },
      billing_customer_id: `cus_${i}`,
      metadata: {},
    }));
    await workspaces.collection.insertMany(clients);
    const batch = 10_000;
    for (let start = 0; start < paymentsTotal; start += batch) {
      const rows: PaymentDoc[] = [];
      for (let i = start; i < Math.min(paymentsTotal, start + batch); i++) {
        const period = PERIODS[i % PERIODS.length]!;
        const paidAt = new Date(Date.parse(`${period}-01T00:00:00Z`) + ((i * 7919) % (27 * 86_400)) * 1000);
        const gross = 1000 + (i % 50) * 100;
        rows.push({
          _id: newId('pmt'),
          partner_id: partnerId,
          workspace_id: clients[i % clientsTotal]!._id,
          plan_id: null,
          status: 'succeeded',
          source: 'stripe',
          ...splitPayment(gross, 59, 500),
          refunded: 0,
          currency: 'USD',
          period,
          paid_at: paidAt,
          external: { invoice_id: `in_seed_${i}`, charge_id: `ch_seed_${i}`, customer_id: `cus_${i % clientsTotal}`, subscription_id: null, reference: null },
          created_at: paidAt,
          payout_id: null,
        });
      }
      await ledger.payments.insertMany(rows, { ordered: false });
      if ((start / batch) % 10 === 9) console.error(`seeded ${start + batch} payments (${Math.round((Date.now() - seedStart) / 1000)} s)`);
    }
    const seedSeconds = Math.round((Date.now() - seedStart) / 1000);
    console.error(`seeded ${clientsTotal} clients and ${paymentsTotal} payments in ${seedSeconds} s`);
    // A position in the middle of a period: a page a client reaches by following cursors.
    const period = PERIODS[2]!;
    const [middle] = await ledger.payments
      .find({ partner_id: partnerId, period })
      .sort({ paid_at: -1, _id: -1 })
      .skip(Math.floor(paymentsTotal / PERIODS.length / 2))
      .limit(1)
      .toArray();
    await seeder.close();

    children.push(
      await startChild(
        'src/main/run.ts',
        ['api'],
        { NODE_ENV: 'test', MONGODB_URI: uri, MONGODB_DB: 'linkplane_bench', API_PORT: String(apiPort), HOST: '127.0.0.1', NATS_URL, NATS_PREFIX: natsPrefix(), LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', SECRET_KEY },
        `http://127.0.0.1:${apiPort}/readyz`,
      ),
    );
    const headers = { Authorization: `Bearer ${key}` };
    const firstPage = `http://127.0.0.1:${apiPort}/v1/partner/payments?period=${period}&limit=100`;
    const deepPage = `${firstPage}&cursor=${encodeCursor({ t: middle!.paid_at.getTime(), id: middle!._id })}`;
    const body = await (await fetch(firstPage, { headers })).text();
    if (!body.includes('"has_more":true')) throw new Error(`unexpected first page: ${body.slice(0, 200)}`);
    children.push(await startChild('bench/servers/bare-http.ts', [], { PORT: String(httpPort), BODY: body, ROUTE: '/v1/partner/payments' }, `http://127.0.0.1:${httpPort}/v1/partner/payments`));

    // Latency (the p99 target) with one connection, then throughput with ten (a partner's dashboards and exports,
    // not a load test of the whole platform).
    const connections = Math.min(options.connections, 10);
    const targets = [
      { name: 'node:http (same bytes)', url: `http://127.0.0.1:${httpPort}/v1/partner/payments` },
      { name: 'GET /v1/partner/payments (first page of 100)', url: firstPage, headers },
      { name: 'GET /v1/partner/payments (cursor mid-period)', url: deepPage, headers },
    ];
    const latency = summarise(await interleaved(targets, options.rounds, options.seconds, 1));
    const rows = summarise(await interleaved(targets, options.rounds, options.seconds, connections));

    // Ingestion: every request a new invoice of a random client, signed as Stripe signs.
    let n = 0;
    const ingest = await autocannon({
      url: `http://127.0.0.1:${apiPort}/v1/billing/stripe/${partnerId}`,
      method: 'POST',
      connections,
      duration: options.seconds * options.rounds,
      setupClient(client) {
        client.setHeaders({ 'Content-Type': 'application/json' });
      },
      requests: [
        {
          setupRequest(request) {
            const i = n++;
            const payload = JSON.stringify({
              id: `evt_bench_${i}_${randomBase62(8)}`,
              object: 'event',
              type: 'invoice.paid',
              created: Math.floor(Date.now() / 1000),
              data: { object: { id: `in_bench_${i}_${randomBase62(8)}`, object: 'invoice', customer: `cus_${i % clientsTotal}`, amount_paid: 4900, currency: 'usd', status_transitions: { paid_at: null } } },
            });
            return { ...request, body: payload, headers: { ...request.headers, 'Content-Type': 'application/json', 'Stripe-Signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: ENDPOINT_SECRET }) } };
          },
        },
      ],
    });
    const ingestion = { events_per_second: Math.round(ingest.requests.average), p50: ingest.latency.p50, p99: ingest.latency.p99, non2xx: ingest.non2xx, errors: ingest.errors };
    console.error(`ingestion: ${ingestion.events_per_second} events/s p99 ${ingestion.p99} ms non-2xx ${ingestion.non2xx}`);
    return {
      database: 'devdb (src/devdb, separate process)',
      clients: clientsTotal,
      payments: paymentsTotal,
      payments_per_period: Math.round(paymentsTotal / PERIODS.length),
      seed_seconds: seedSeconds,
      latency_one_connection: latency,
      connections,
      rows,
      ingestion,
      target: 'GET /v1/partner/payments p99 < 50 ms',
    };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
  }
}
