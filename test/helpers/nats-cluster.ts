import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { accepts, freePort } from './processes.ts';

const BINARY = process.env.NATS_SERVER_BIN ?? 'nats-server';

interface Node {
  name: string;
  port: number;
  clusterPort: number;
  storeDir: string;
  configFile: string;
  child: ChildProcess | null;
}

/**
 * A real JetStream cluster on loopback: `size` nats-server processes joined by routes, each with its own store
 * folder and random client and cluster ports. Nodes can be killed (SIGKILL) and started again on the same ports and
 * store, as a crashed and rescheduled pod would be.
 */
export class NatsCluster {
  readonly nodes: readonly Node[];
  private readonly root: string;

  private constructor(root: string, nodes: Node[]) {
    this.root = root;
    this.nodes = nodes;
  }

  static async start(size = 3): Promise<NatsCluster> {
    const root = mkdtempSync(join(tmpdir(), 'lp-nats-cluster-'));
    const nodes: Node[] = [];
    for (let i = 0; i < size; i++) {
      nodes.push({ name: `n${i + 1}`, port: await freePort(), clusterPort: await freePort(), storeDir: join(root, `n${i + 1}`), configFile: join(root, `n${i + 1}.conf`), child: null });
    }
    const routes = nodes.map((n) => `nats-route://127.0.0.1:${n.clusterPort}`);
    for (const node of nodes) {
      writeFileSync(
        node.configFile,
        [
          `server_name: ${node.name}`,
          'listen: 127.0.0.1:' + node.port,
          `jetstream { store_dir: "${node.storeDir}" }`,
          'cluster {',
          '  name: lp',
          `  listen: 127.0.0.1:${node.clusterPort}`,
          `  routes: [${routes.join(', ')}]`,
          '}',
          '',
        ].join('\n'),
      );
    }
    const cluster = new NatsCluster(root, nodes);
    await Promise.all(nodes.map((n) => cluster.startNode(n.name)));
    await cluster.waitForMeta();
    return cluster;
  }

  /** Every node's client URL, comma-separated: what NATS_URL holds. */
  get url(): string {
    return this.nodes.map((n) => `nats://127.0.0.1:${n.port}`).join(',');
  }

  urlOf(name: string): string {
    return `nats://127.0.0.1:${this.node(name).port}`;
  }

  node(name: string): Node {
    const node = this.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no node ${name}`);
    return node;
  }

  async startNode(name: string): Promise<void> {
    const node = this.node(name);
    node.child = spawn(BINARY, ['-c', node.configFile], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (await accepts(node.port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`nats-server ${name} did not start on ${node.port}`);
  }

  /** SIGKILL: no goodbye to the routes, as when a machine dies. */
  async kill(name: string): Promise<void> {
    const node = this.node(name);
    const child = node.child;
    node.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** A connection to the given nodes (all of them by default), for the test's own look at the cluster. */
  connect(names?: string[]): Promise<NatsConnection> {
    const servers = (names ?? this.nodes.map((n) => n.name)).map((n) => this.urlOf(n));
    return connect({ servers, name: 'lp-cluster-test', reconnectTimeWait: 200, maxReconnectAttempts: -1 });
  }

  /** The server name of the stream's leader, or null while it has none. */
  async streamLeader(stream: string, names?: string[]): Promise<string | null> {
    const nc = await this.connect(names);
    try {
      const jsm = await jetstreamManager(nc, { timeout: 3000 });
      const info = await jsm.streams.info(stream);
      return info.cluster?.leader ?? null;
    } finally {
      await nc.close();
    }
  }

  /**
   * What a stream holds and where each of its consumers stands, asked of the nodes still running: printed beside the
   * test's figures, so that a click answered and not stored can be placed (never published, held unacknowledged,
   * or delivered and not written).
   */
  async streamState(stream: string): Promise<Record<string, unknown>> {
    const alive = this.nodes.filter((n) => n.child !== null).map((n) => n.name);
    const nc = await this.connect(alive);
    try {
      const jsm = await jetstreamManager(nc, { timeout: 3000 });
      const { state, cluster } = await jsm.streams.info(stream);
      const consumers: Record<string, unknown>[] = [];
      for await (const c of jsm.consumers.list(stream)) {
        consumers.push({
          name: c.name,
          pending: c.num_pending,
          ack_pending: c.num_ack_pending,
          redelivered: c.num_redelivered,
          delivered_stream_seq: c.delivered.stream_seq,
          ack_floor_stream_seq: c.ack_floor.stream_seq,
          max_deliver: c.config.max_deliver,
        });
      }
      return { messages: state.messages, first_seq: state.first_seq, last_seq: state.last_seq, leader: cluster?.leader ?? null, consumers };
    } catch (error) {
      return { error: String(error) };
    } finally {
      await nc.close();
    }
  }

  /** Waits until the JetStream meta group has a leader and answers account info (the cluster takes requests). */
  async waitForMeta(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown = null;
    while (Date.now() < deadline) {
      const alive = this.nodes.filter((n) => n.child !== null).map((n) => n.name);
      try {
        const nc = await this.connect(alive);
        try {
          const jsm = await jetstreamManager(nc, { timeout: 2000 });
          await jsm.getAccountInfo();
          return;
        } finally {
          await nc.close();
        }
      } catch (error) {
        last = error;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    throw new Error(`the JetStream cluster has no meta leader after ${timeoutMs} ms: ${String(last)}`);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.kill(n.name)));
    rmSync(this.root, { recursive: true, force: true });
  }
}
