// Summarises a V8 .cpuprofile (what BENCH_PROFILE writes) by self time: the top functions and the top files.
// `node bench/profile-summary.ts <file.cpuprofile> [rows]`
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, rowsArg] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [rows]');
const rows = Number(rowsArg ?? 40);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const shortUrl = (url: string): string => url.replace(/^file:\/\/.*?\/(node_modules|src|bench|test)\//, '$1/') || '(native)';
const functions = new Map<string, number>();
const files = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const where = shortUrl(url);
  const key = `${functionName || '(anonymous)'}  ${where}${url ? `:${lineNumber + 1}` : ''}`;
  functions.set(key, (functions.get(key) ?? 0) + us);
  files.set(where, (files.get(where) ?? 0) + us);
}
const print = (title: string, m: Map<string, number>): void => {
  console.log(`\n${title} (total ${(total / 1e6).toFixed(2)} s sampled)`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
    console.log(`${((us / total) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
  }
};
print('self time by function', functions);
print('self time by file', files);

// `CALLERS=<function name>`: the call stacks (up to 6 frames) that spend self time in that function.
const callersOf = process.env.CALLERS;
if (callersOf) {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stacks = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (byId.get(id)!.callFrame.functionName !== callersOf) continue;
    const frames: string[] = [];
    for (let p = parent.get(id); p !== undefined && frames.length < 6; p = parent.get(p)) {
      const f = byId.get(p)!.callFrame;
      frames.push(`${f.functionName || '(anonymous)'}@${shortUrl(f.url)}:${f.lineNumber + 1}`);
    }
    const key = frames.join(' < ');
    stacks.set(key, (stacks.get(key) ?? 0) + us);
  }
  print(`stacks into ${callersOf}`, stacks);
}

// `INCLUSIVE=1`: time with each function anywhere on the stack (counted once per sample), top `rows`.
if (process.env.INCLUSIVE) {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let p: number | undefined = id; p !== undefined; p = parent.get(p)) {
      const f = byId.get(p)!.callFrame;
      const key = `${f.functionName || '(anonymous)'}  ${shortUrl(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  print('inclusive time by function', inclusive);
}
