import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient, type Db } from 'mongodb';
import { pino } from 'pino';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { freePort } from '../helpers/processes.ts';
import { DestinationHealthChecker } from '../../src/clicks/health.ts';
import { RotatorHealthStore } from '../../src/clicks/rotator-health.store.ts';
import { RotatorCounters } from '../../src/clicks/counters.ts';
import { ClickStore } from '../../src/clicks/click.store.ts';
import { LinkStore, type LinkDoc } from '../../src/links/link.store.ts';
import type { Rotator } from '../../src/links/link.schemas.ts';

const logger = pino({ level: 'silent' });

/** A destination server whose answer the test switches: a status code, or hanging past the probe timeout. */
class Destination {
  status = 200;
  /** When set, the answer to HEAD requests (some servers do not implement HEAD). */
  headStatus: number | null = null;
  hang = false;
  readonly methods: string[] = [];
  readonly server: Server;
  private constructor(server: Server) {
    this.server = server;
  }

  static async start(): Promise<Destination> {
    const server = createServer();
    const destination = new Destination(server);
    server.on('request', (req, res) => {
      destination.methods.push(req.method ?? '');
      if (destination.hang) return;
      res.statusCode = req.method === 'HEAD' && destination.headStatus !== null ? destination.headStatus : destination.status;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return destination;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/landing`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function aRotator(destinations: Array<{ id: string; url: string; active?: boolean }>, overrides: Partial<Rotator> = {}): Rotator {
  return {
    enabled: true,
    mode: 'weighted',
    sticky_ttl_seconds: 0,
    fallback_url: null,
    auto_disable_unhealthy: true,
    destinations: destinations.map((d) => ({ weight: 1, active: true, ...d })),
    ...overrides,
  };
}

describe('rotator destination health (real HTTP destinations)', function () {
  this.timeout(30_000);
  let mongo: TestMongo;
  let client: MongoClient;
  let db: Db;
  let links: LinkStore;
  let health: RotatorHealthStore;
  const servers: Destination[] = [];
  let linkCount = 0;

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
    db = client.db(mongo.dbName);
    links = new LinkStore(db);
    health = new RotatorHealthStore(db);
    await health.ensureIndexes();
  });

  after(async () => {
    for (const server of servers) await server.close().catch(() => undefined);
    await client.close();
    await mongo.stop();
  });

  async function aDestination(): Promise<Destination> {
    const destination = await Destination.start();
    servers.push(destination);
    return destination;
  }

  async function aLink(rotator: Rotator): Promise<string> {
    const id = `lnk_health${linkCount++}`;
    await links.collection.insertOne({ _id: id, workspace_id: 'ws_h', domain: 'lp.test', slug: id, archived: false, rotator } as unknown as LinkDoc);
    return id;
  }

  function aChecker(allowPrivate = true): DestinationHealthChecker {
    return new DestinationHealthChecker({ links: links.collection, health, intervalMs: 60_000, timeoutMs: 300, allowPrivate, logger });
  }

  async function unhealthyOf(linkId: string): Promise<string[]> {
    return [...((await health.unhealthy([linkId])).get(linkId) ?? [])].sort();
  }

  it('marks a destination unhealthy after three consecutive failures, not before, and healthy again after one success', async () => {
    const good = await aDestination();
    const flaky = await aDestination();
    const linkId = await aLink(aRotator([{ id: 'good', url: good.url }, { id: 'flaky', url: flaky.url }]));
    const checker = aChecker();

    flaky.status = 503;
    await checker.runOnce();
    await checker.runOnce();
    expect(await unhealthyOf(linkId), 'two failures are not enough').to.deep.equal([]);
    await checker.runOnce();
    expect(await unhealthyOf(linkId)).to.deep.equal(['flaky']);

    flaky.status = 200;
    await checker.runOnce();
    expect(await unhealthyOf(linkId), 'one success revives it').to.deep.equal([]);
  });

  it('counts a refused connection and a timeout as failures', async () => {
    const hanging = await aDestination();
    hanging.hang = true;
    const closedUrl = `http://127.0.0.1:${await freePort()}/gone`;
    const linkId = await aLink(aRotator([{ id: 'dead', url: closedUrl }, { id: 'slow', url: hanging.url }]));
    const checker = aChecker();
    for (let i = 0; i < 3; i++) await checker.runOnce();
    expect(await unhealthyOf(linkId)).to.deep.equal(['dead', 'slow']);
  });

  it('falls back to GET when HEAD fails, and judges by the GET answer', async () => {
    const noHead = await aDestination();
    noHead.headStatus = 501;
    const linkId = await aLink(aRotator([{ id: 'd', url: noHead.url }]));
    const checker = aChecker();
    for (let i = 0; i < 3; i++) await checker.runOnce();
    expect(noHead.methods.slice(0, 2)).to.deep.equal(['HEAD', 'GET']);
    expect(await unhealthyOf(linkId)).to.deep.equal([]);
  });

  it('treats a 4xx answer as alive: only 5xx, network errors and timeouts are failures', async () => {
    const missing = await aDestination();
    missing.status = 404;
    const linkId = await aLink(aRotator([{ id: 'd', url: missing.url }]));
    const checker = aChecker();
    for (let i = 0; i < 3; i++) await checker.runOnce();
    expect(missing.methods.slice(0, 3)).to.deep.equal(['HEAD', 'HEAD', 'HEAD']);
    expect(await unhealthyOf(linkId)).to.deep.equal([]);
  });

  it('does not probe links without auto_disable_unhealthy, nor inactive destinations', async () => {
    const target = await aDestination();
    target.status = 500;
    await aLink(aRotator([{ id: 'x', url: target.url }], { auto_disable_unhealthy: false }));
    await aLink(aRotator([{ id: 'y', url: target.url, active: false }]));
    await aChecker().runOnce();
    expect(target.methods, 'no request reached the destination').to.deep.equal([]);
  });

  it('does not probe private addresses unless allowed (SSRF guard)', async () => {
    const target = await aDestination();
    target.status = 500;
    const linkId = await aLink(aRotator([{ id: 'z', url: target.url }]));
    const strict = aChecker(false);
    for (let i = 0; i < 3; i++) await strict.runOnce();
    expect(target.methods, 'no request reached the destination').to.deep.equal([]);
    expect(await unhealthyOf(linkId)).to.deep.equal([]);
    await aChecker(true).runOnce();
    expect(target.methods, 'allowed, it is probed').to.include('HEAD');
  });

  it('reaches the redirect through the counters snapshot', async () => {
    const dead = await aDestination();
    dead.status = 502;
    const linkId = await aLink(aRotator([{ id: 'down', url: dead.url }]));
    const checker = aChecker();
    for (let i = 0; i < 3; i++) await checker.runOnce();
    const counters = new RotatorCounters({ clicks: new ClickStore(db), health, refreshMs: 60_000, logger });
    counters.watch(linkId);
    expect(counters.unhealthy(linkId).size, 'nothing before the first refresh').to.equal(0);
    await counters.refresh();
    expect([...counters.unhealthy(linkId)]).to.deep.equal(['down']);
  });
});
