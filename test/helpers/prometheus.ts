// A real Prometheus (Debian's `prometheus`, /usr/bin) for tests: its own temporary directory and free port,
// short scrape and evaluation intervals, static targets, and the rule files given. Queried over its HTTP API.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dump } from 'js-yaml';
import { freePort } from './processes.ts';
import { until } from './wait.ts';

export const PROMETHEUS = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';
export const PROMTOOL = process.env.PROMTOOL_BIN ?? '/usr/bin/promtool';

export interface Target { job: string; port: number; labels?: Record<string, string> }

export interface Sample { metric: Record<string, string>; value: [number, string] }
export interface AlertState { labels: Record<string, string>; state: 'pending' | 'firing'; value: string }

export class TestPrometheus {
  readonly url: string;
  private readonly child: ChildProcess;
  private readonly dir: string;
  private output = '';

  private constructor(url: string, child: ChildProcess, dir: string) {
    this.url = url;
    this.child = child;
    this.dir = dir;
    child.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
  }

  static async start(options: { targets: Target[]; ruleFiles: string[]; intervalSeconds?: number }): Promise<TestPrometheus> {
    const dir = await mkdtemp(path.join(tmpdir(), 'linkplane-prometheus-'));
    const interval = `${options.intervalSeconds ?? 1}s`;
    const config = {
      global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
      rule_files: options.ruleFiles,
      scrape_configs: options.targets.map((t) => ({
        job_name: t.job,
        static_configs: [{ targets: [`127.0.0.1:${t.port}`], labels: t.labels ?? {} }],
      })),
    };
    const file = path.join(dir, 'prometheus.yml');
    await writeFile(file, dump(config));
    const port = await freePort();
    const child = spawn(PROMETHEUS, [
      `--config.file=${file}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ], { stdio: 'pipe' });
    const prometheus = new TestPrometheus(`http://127.0.0.1:${port}`, child, dir);
    await until(async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited: ${prometheus.output}`);
      return fetch(`${prometheus.url}/-/ready`).then((r) => r.ok || false, () => false);
    }, 60_000, 'prometheus ready');
    return prometheus;
  }

  logs(): string {
    return this.output;
  }

  private async api<T>(pathAndQuery: string): Promise<T> {
    const res = await fetch(`${this.url}/api/v1/${pathAndQuery}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${pathAndQuery}: ${body.error ?? res.status}`);
    return body.data;
  }

  /** An instant query's vector (a scalar answers as one sample without labels). */
  async query(expr: string): Promise<Sample[]> {
    const data = await this.api<{ resultType: string; result: Sample[] | [number, string] }>(`query?query=${encodeURIComponent(expr)}`);
    if (data.resultType === 'scalar') return [{ metric: {}, value: data.result as [number, string] }];
    return data.result as Sample[];
  }

  async alerts(): Promise<AlertState[]> {
    return (await this.api<{ alerts: AlertState[] }>('alerts')).alerts;
  }

  async rules(): Promise<Array<{ name: string; rules: Array<{ type: 'recording' | 'alerting'; name: string; health: string; lastError?: string }> }>> {
    return (await this.api<{ groups: Array<{ name: string; rules: Array<{ type: 'recording' | 'alerting'; name: string; health: string; lastError?: string }> }> }>('rules')).groups;
  }

  async targets(): Promise<Array<{ labels: Record<string, string>; health: string; lastError: string }>> {
    return (await this.api<{ activeTargets: Array<{ labels: Record<string, string>; health: string; lastError: string }> }>('targets')).activeTargets;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      await exited;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Runs promtool with `args` (and `stdin`); answers its exit code and output. */
export function promtool(args: string[], stdin?: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PROMTOOL, args, { stdio: 'pipe' });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, output }));
    child.stdin.end(stdin ?? '');
  });
}
