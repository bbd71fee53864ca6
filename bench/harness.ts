// Shared by the benchmarks: child processes for every server (so the load generator never shares their event
// loop), autocannon runs, and the report.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { MongoClient, type Db } from 'mongodb';
import { pino } from 'pino';
import { accepts, freePort, ROOT } from '../test/helpers/processes.ts';
import { KeyService } from '../src/tenancy/key.service.ts';
import { KeyStore } from '../src/tenancy/key.store.ts';
import { ALL_SCOPES, type Scope } from '../src/tenancy/scopes.ts';
import { WorkspaceStore } from '../src/tenancy/workspace.store.ts';
import { PartnerStore } from '../src/tenancy/partner.store.ts';
import { newId } from '../src/platform/ids.ts';

export interface Target {
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** The process answering: its CPU time per request is measured too (steadier than the rate on a shared machine). */
  server?: ChildProcess;
}

export interface Sample {
  target: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** CPU µs of the target's `server` per request (absent without one). */
  cpuUs?: number;
}

/** Every child a benchmark started and that has not exited: what the runner stops when it is interrupted. */
const live = new Set<ChildProcess>();

/** Counts `child` among the live ones until it exits (for children a benchmark spawns itself). */
export function track<C extends ChildProcess>(child: C): C {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Stops every child still running (the runner, on SIGINT or SIGTERM). */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((child) => stopChild(child)));
}

/**
 * Ready when `ready` (a URL) answers below 500, or (a port) accepts a TCP connection. A child that does not become
 * ready is stopped before the error is thrown: the caller never got it, so it could not.
 */
export async function startChild(script: string, args: string[], env: Record<string, string>, ready: string | number, readyWithinMs = 30_000): Promise<ChildProcess> {
  const child = track(
    spawn(process.execPath, [script, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      // Logs go where production sends them, out of the process; reading them here would load the measuring side.
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    }),
  );
  const deadline = Date.now() + readyWithinMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    if (typeof ready === 'number' ? await accepts(ready) : await answers(ready)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  await stopChild(child);
  throw new Error(`${script} did not become ready at ${ready}`);
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).status < 500;
  } catch {
    return false;
  }
}

/** SIGTERM, and SIGKILL if it has not exited 15 s later (a stuck shutdown must not hold the run and its cleanup). */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(kill);
}

export { freePort };

export async function load(target: Target, seconds: number, connections: number): Promise<Sample> {
  const cpuBefore = target.server ? cpuSecondsOf(target.server) : 0;
  const result = await autocannon({
    url: target.url,
    connections,
    duration: seconds,
    headers: target.headers ?? {},
  });
  return {
    target: target.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    ...(target.server ? { cpuUs: Math.round(((cpuSecondsOf(target.server) - cpuBefore) * 1e6) / Math.max(1, result.requests.total)) } : {}),
  };
}

/** Runs every target once per round, in turn, so drift on the machine touches all of them alike. */
export async function interleaved(targets: Target[], rounds: number, seconds: number, connections: number): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
  for (const t of targets) await load(t, 1, connections); // warm-up: JIT, caches, connection pools
  for (let round = 1; round <= rounds; round++) {
    for (const t of targets) {
      const s = await load(t, seconds, connections);
      samples.get(t.name)!.push(s);
      console.error(`round ${round} ${t.name}: ${Math.round(s.rps)} req/s p99 ${s.p99} ms${s.cpuUs !== undefined ? ` cpu/request ${s.cpuUs} µs` : ''}${s.non2xx || s.errors ? ` (non-2xx ${s.non2xx}, errors ${s.errors})` : ''}`);
    }
  }
  return samples;
}

/** CPU seconds (user + system, every thread) a child process has used so far. */
export function cpuSecondsOf(child: ChildProcess): number {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarise(samples: Map<string, Sample[]>): Array<{ target: string; rps: number; p50: number; p99: number; non2xx: number; cpu_us?: number }> {
  return [...samples].map(([target, s]) => ({
    target,
    rps: Math.round(median(s.map((x) => x.rps))),
    p50: median(s.map((x) => x.p50)),
    p99: median(s.map((x) => x.p99)),
    non2xx: s.reduce((n, x) => n + x.non2xx + x.errors, 0),
    ...(s[0]?.cpuUs !== undefined ? { cpu_us: median(s.map((x) => x.cpuUs!)) } : {}),
  }));
}

/** The median over rounds of `b`'s CPU per request divided by `a`'s (how much of `b`'s efficiency `a` reaches). */
export function pairedCpuMedian(a: Sample[], b: Sample[]): number {
  return median(a.map((s, i) => b[i]!.cpuUs! / Math.max(1, s.cpuUs!)));
}

/** The median over rounds of `a`'s rate divided by `b`'s in the same round. */
export function pairedMedian(a: Sample[], b: Sample[]): number {
  return median(a.map((s, i) => s.rps / b[i]!.rps));
}

export interface BenchDatabase {
  child: ChildProcess;
  uri: string;
  db: Db;
  /** A workspace whose rate limit no benchmark reaches (the limiter still counts every request), and a key for it. */
  aWorkspace(name: string, scopes?: readonly Scope[]): Promise<{ id: string; key: string }>;
  /** Closes this process's client; the devdb child stops with the others. */
  close(): Promise<void>;
}

/**
 * A devdb of the benchmark's own, in a child process, with a client to set up tenants in it. With `dataDir` it keeps
 * its data there (its journal), and starts from what a run before left there: replaying gigabytes takes minutes.
 */
export async function benchDatabase(env: Record<string, string> = {}, dataDir?: string): Promise<BenchDatabase> {
  const port = await freePort();
  const args = ['--port', String(port), ...(dataDir ? ['--data', dataDir] : [])];
  const child = await startChild('src/devdb/main.ts', args, env, port, dataDir ? 30 * 60_000 : 30_000);
  const uri = `mongodb://127.0.0.1:${port}/?directConnection=true`;
  const client = new MongoClient(uri);
  await client.connect();
  const db = client.db('linkplane_bench');
  const workspaces = new WorkspaceStore(db);
  const keys = new KeyService({
    keys: new KeyStore(db),
    workspaces,
    partners: new PartnerStore(db),
    logger: pino({ level: 'silent' }),
    cacheTtlMs: 0,
    defaultRateLimits: { workspacePerMinute: 600, partnerPerMinute: 1200 },
  });
  return {
    child,
    uri,
    db,
    async aWorkspace(name, scopes = ALL_SCOPES) {
      const id = newId('ws');
      await workspaces.insert({ _id: id, name, plan_id: 'enterprise', partner_id: null, owner_email: null, limits_override: { rate_limit_per_minute: 100_000_000 }, created_at: new Date() });
      return { id, key: (await keys.create({ kind: 'workspace', ownerId: id, scopes })).key };
    },
    close: () => client.close(),
  };
}
