import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Resolver } from 'node:dns/promises';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { TestDns } from '../helpers/dns-server.ts';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { DestinationHealthChecker } from '../../src/clicks/health.ts';
import { RotatorHealthStore } from '../../src/clicks/rotator-health.store.ts';
import { LinkStore, type LinkDoc } from '../../src/links/link.store.ts';
import { outboundAgents, send, type OutboundError } from '../../src/platform/outbound/outbound.ts';
import type { ResolvedAddress, TargetOptions } from '../../src/platform/outbound/ssrf.ts';

/**
 * DNS rebinding: a name that answers a public address when checked and a loopback one when connected. The test DNS
 * server answers `localhost` with a public address the first time (PUBLIC: globally routable unicast, the only kind
 * the check lets through, asked on a port nothing serves there, so no answer comes) and 127.0.0.1 afterwards; the machine's own resolver answers 127.0.0.1 for it too. A client that checks with one resolution and
 * connects after another reaches the receiver on 127.0.0.1; one that connects to the checked address never does.
 */
/** example.com's former address: public unicast. (198.51.100.7, a documentation address, is refused by the check.) */
const PUBLIC = '93.184.215.14';

describe('SSRF: outbound requests connect to the address that was checked (real DNS server)', function () {
  this.timeout(30_000);
  let dns: TestDns;
  let receiver: Server;
  let port: number;
  const hits: string[] = [];
  let lookup: (hostname: string) => Promise<ResolvedAddress[]>;

  before(async () => {
    dns = await TestDns.start();
    const resolver = new Resolver();
    resolver.setServers([`127.0.0.1:${dns.port}`]);
    lookup = async (hostname) => (await resolver.resolve4(hostname)).map((address) => ({ address, family: 4 }));
    receiver = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
  });

  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await dns.stop();
  });

  beforeEach(() => {
    hits.length = 0;
    dns.aAnswers.clear();
    dns.zone.set('localhost', { A: [PUBLIC], thenA: ['127.0.0.1'] });
  });

  it('a webhook delivery POST resolves once and never reaches the loopback address the name turns into', async () => {
    const targets: TargetOptions = { allowPrivate: false, lookup };
    const agents = outboundAgents(targets);
    try {
      const error = await send(agents, targets, { method: 'POST', url: `http://localhost:${port}/hook`, body: '{}', timeoutMs: 500 }).then(
        () => null,
        (e: unknown) => e as OutboundError,
      );
      expect(error?.kind, 'no answer: nothing listens on the checked address').to.be.oneOf(['timeout', 'network']);
      expect(hits).to.deep.equal([]);
      expect(dns.aAnswers.get('localhost'), 'one resolution, the one checked').to.equal(1);
    } finally {
      agents.http.destroy();
    }
  });

  it('refuses the connection when the one resolution answers loopback', async () => {
    dns.zone.set('localhost', { A: ['127.0.0.1'] });
    const targets: TargetOptions = { allowPrivate: false, lookup };
    const agents = outboundAgents(targets);
    try {
      const error = await send(agents, targets, { method: 'POST', url: `http://localhost:${port}/hook`, body: '{}', timeoutMs: 500 }).then(
        () => null,
        (e: unknown) => e as OutboundError,
      );
      expect(error?.kind).to.equal('refused');
      expect(error?.message).to.match(/loopback/);
      expect(hits).to.deep.equal([]);
    } finally {
      agents.http.destroy();
    }
  });

  describe('destination health checks', () => {
    let mongo: TestMongo;
    let client: MongoClient;
    let links: LinkStore;
    let health: RotatorHealthStore;

    before(async () => {
      mongo = await startTestMongo();
      client = new MongoClient(mongo.uri);
      await client.connect();
      links = new LinkStore(client.db(mongo.dbName));
      health = new RotatorHealthStore(client.db(mongo.dbName));
    });

    after(async () => {
      await client.close();
      await mongo.stop();
    });

    it('probe the checked address, not the loopback one the name answers next', async () => {
      const now = new Date();
      const link = {
        _id: 'lnk_rebind',
        workspace_id: 'ws_rebind',
        rotator: {
          enabled: true,
          mode: 'weighted',
          sticky_ttl_seconds: 0,
          fallback_url: null,
          auto_disable_unhealthy: true,
          destinations: [{ id: 'd0', url: `http://localhost:${port}/probe`, weight: 1, active: true }],
        },
        archived: false,
        created_at: now,
        updated_at: now,
      } as unknown as LinkDoc;
      await links.collection.insertOne(link);
      const checker = new DestinationHealthChecker({
        links: links.collection,
        health,
        intervalMs: 60_000,
        timeoutMs: 500,
        allowPrivate: false,
        lookup,
        logger: pino({ level: 'silent' }),
      });
      try {
        await checker.runOnce(now);
      } finally {
        await checker.stop();
      }
      expect(hits, 'the loopback receiver was never probed').to.deep.equal([]);
      expect(dns.aAnswers.get('localhost'), 'each probe resolves once (HEAD, then GET)').to.be.at.most(2);
    });
  });
});
