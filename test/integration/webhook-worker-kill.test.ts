import { expect } from 'chai';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeliverPolicy } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { freePort, spawnProcess, waitForHttp, type Spawned } from '../helpers/processes.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { DELIVERY_DURABLE } from '../../src/webhooks/delivery.ts';
import { ensureDurable } from '../../src/platform/pull-runner.ts';
import { until } from '../helpers/wait.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TIMEOUT_MS = 1000;
const ACK_WAIT_MS = 2000;

describe('a worker killed mid-delivery (worker in a child process, SIGKILL)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let env: Record<string, string>;
  let api: RunningApi;
  let tenants: Tenants;
  let receiver: Server;
  let receiverUrl: string;
  const workers: Spawned[] = [];
  const seen: Array<{ id: string; at: number }> = [];
  const held: ServerResponse[] = [];

  before(async () => {
    mongo = await startTestMongo();
    env = testEnv(mongo, {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_ACK_WAIT_MS: String(ACK_WAIT_MS),
      WEBHOOK_RETRY_SCHEDULE: '100ms',
    });
    api = await startApi(env);
    tenants = await Tenants.open(mongo);
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ id: (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id, at: performance.now() });
        // The first request is held open: its worker dies before it can learn the answer.
        if (seen.length === 1) held.push(res);
        else res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });

  after(async () => {
    for (const w of workers) await w.stop();
    for (const res of held) res.destroy();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await api.stop();
    await tenants.close();
    await mongo.stop();
  });

  async function startWorker(): Promise<Spawned> {
    const port = await freePort();
    const worker = spawnProcess('worker', { ...env, WORKER_PORT: String(port) });
    workers.push(worker);
    // The worker listens once its consumers have started.
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, worker);
    return worker;
  }

  it('redelivers the same delivery id after WEBHOOK_ACK_WAIT_MS to a new worker, and it is acknowledged: nothing is lost', async () => {
    const nats = api.infra.nats;
    const stream = nats.subjects.stream('DELIVERIES');
    // The consumer as an earlier deployment left it (a long ack_wait): a starting worker brings it to its own.
    await ensureDurable(nats, {
      stream,
      durable: DELIVERY_DURABLE,
      filterSubject: `${nats.subjects.prefix}deliveries.>`,
      ackWaitMs: 60_000,
      maxDeliver: -1,
      deliverPolicy: DeliverPolicy.All,
    });

    const first = await startWorker();
    expect((await nats.jsm.consumers.info(stream, DELIVERY_DURABLE)).config.ack_wait, 'ack_wait updated at start').to.equal(nanos(ACK_WAIT_MS));

    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const key = (await tenants.aWorkspaceKey(ws._id)).key;
    const headers = { ...bearer(key), 'Content-Type': 'application/json' };
    const endpoint = (await (await fetch(`${api.url}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: `${receiverUrl}/hook`, events: ['link.created'] }) })).json()) as { id: string };
    expect((await fetch(`${api.url}/v1/links`, { method: 'POST', headers, body: JSON.stringify({ url: 'https://example.com/x' }) })).status).to.equal(201);

    await until(() => seen.length === 1, 15_000, 'the first POST');
    first.child.kill('SIGKILL');
    const killedAt = performance.now();
    await first.exited;
    expect(first.child.signalCode).to.equal('SIGKILL');

    await startWorker();
    await until(() => seen.length >= 2, 15_000, 'the redelivery');
    expect(seen[1]!.id, 'the same delivery').to.equal(seen[0]!.id);
    expect(seen[1]!.at - killedAt, 'after ack_wait, not before').to.be.at.least(ACK_WAIT_MS - (killedAt - seen[0]!.at) - 50);

    const log = async () =>
      ((await (await fetch(`${api.url}/v1/webhooks/${endpoint.id}/deliveries`, { headers: bearer(key) })).json()) as { data: Array<{ id: string; outcome: string; attempt: number }> }).data;
    await until(async () => (await log()).some((row) => row.outcome === 'succeeded'), 10_000, 'the success logged');
    const rows = await log();
    // The killed attempt was never logged, and a worker dying is our failure, not the receiver's: the redelivery is
    // attempt 1 (attempts count logged POSTs, not JetStream's deliveries).
    expect(rows.map((r) => [r.id, r.outcome, r.attempt])).to.deep.equal([[seen[0]!.id, 'succeeded', 1]]);
    await sleep(ACK_WAIT_MS + 500);
    expect(seen, 'acknowledged: not delivered a third time').to.have.length(2);
    const info = await nats.jsm.consumers.info(stream, DELIVERY_DURABLE);
    expect(info.num_ack_pending + info.num_pending, 'nothing left on the consumer').to.equal(0);
  });
});
