// Summarises a V8 .cpuprofile (node --cpu-prof, or BENCH_PROFILE=<dir> in the benchmarks): self and total time by
// function and by file, the top rows of each. `node scripts/cpuprofile-summary.ts <file.cpuprofile> [rows] [filter]`;
// `filter` keeps only functions whose file contains it (say, `src/`), for the rows by function.
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, rowsArg, filter] = process.argv.slice(2);
if (!file) throw new Error('usage: node scripts/cpuprofile-summary.ts <file.cpuprofile> [rows] [filter]');
const rows = Number(rowsArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Time per node from the samples (µs): each sample's delta is charged to the node it landed in.
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const totalUs = [...self.values()].reduce((a, b) => a + b, 0);

const shortUrl = (url: string) => url.replace(/^file:\/\//, '').replace(/^.*\/(src|bench|test|node_modules)\//, '$1/');
const fnKey = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
const fileKey = (f: CallFrame) => shortUrl(f.url) || `(${f.functionName})`;

function aggregate(key: (f: CallFrame) => string): Array<[string, number, number]> {
  const selfBy = new Map<string, number>();
  const totalBy = new Map<string, number>();
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    const k = key(node.callFrame);
    selfBy.set(k, (selfBy.get(k) ?? 0) + us);
    // Total: once per distinct key on the stack (recursion counted once).
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const kk = key(byId.get(cur)!.callFrame);
      if (seen.has(kk)) continue;
      seen.add(kk);
      totalBy.set(kk, (totalBy.get(kk) ?? 0) + us);
    }
  }
  return [...totalBy.keys()].map((k) => [k, selfBy.get(k) ?? 0, totalBy.get(k) ?? 0]);
}

const pct = (us: number) => `${((100 * us) / totalUs).toFixed(1).padStart(5)} %`;
function print(title: string, table: Array<[string, number, number]>, sortBy: 1 | 2, keep: (k: string) => boolean = () => true): void {
  console.log(`\n== ${title}`);
  console.log('   self   total');
  for (const [k, s, t] of table.filter(([k]) => keep(k)).sort((a, b) => b[sortBy] - a[sortBy]).slice(0, rows)) console.log(`${pct(s)} ${pct(t)}  ${k}`);
}

console.log(`${file}: ${(totalUs / 1e6).toFixed(2)} s sampled`);
const byFn = aggregate(fnKey);
const keep = filter ? (k: string) => k.includes(filter) : undefined;
print('by function, self time', byFn, 1, keep);
print('by function, total time', byFn, 2, keep);
const byFile = aggregate(fileKey);
print('by file, self time', byFile, 1);
print('by file, total time', byFile, 2);
