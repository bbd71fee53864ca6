import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accepts, freePort } from './processes.ts';

const BINARY = process.env.NATS_SERVER_BIN ?? 'nats-server';

/**
 * A nats-server of the test's own (real binary, JetStream on, its own store folder), so a test can stop and
 * restart it without disturbing the shared server other tests use.
 */
export class OwnNatsServer {
  readonly port: number;
  readonly storeDir: string;
  private child: ChildProcess | null = null;

  private constructor(port: number, storeDir: string) {
    this.port = port;
    this.storeDir = storeDir;
  }

  static async start(): Promise<OwnNatsServer> {
    const server = new OwnNatsServer(await freePort(), mkdtempSync(join(tmpdir(), 'lp-nats-')));
    await server.restart();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async restart(): Promise<void> {
    this.child = spawn(BINARY, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (await accepts(this.port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`nats-server did not start on ${this.port}`);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}
