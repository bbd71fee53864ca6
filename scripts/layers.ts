// The layer check behind `npm run lint`: reads the imports of src/**/*.ts (static imports, `export ... from`,
// `import type`, dynamic `import()` and `typeof import()` types), maps each file to its folder under src/ and fails
// when two folders import each other, when folders form a cycle, or when a folder imports one that the layer map
// below does not place beneath it. The map is the one docs/architecture.md explains; a new folder under src/ must
// be placed in it before the check passes, so the decision where it stands is made when it is created.
//
//   node scripts/layers.ts            check (exit 1 on any finding)
//   node scripts/layers.ts --edges    also print every folder → folder edge with the files that make it
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Folders under src/, bottom up (docs/architecture.md explains each). A folder may import only folders of lower
 * layers: never up, never sideways within its own layer.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['config', 'platform', 'devdb'],
  ['visitor'],
  ['rules'],
  ['tenancy'],
  ['http'],
  ['events'],
  ['links', 'webhooks', 'iplists'],
  ['clicks', 'domains', 'users'],
  ['redirect', 'conversions', 'keys', 'oauth'],
  ['analytics'],
  ['workspace', 'partner', 'alerts', 'reports', 'imports', 'mcp', 'dashboard'],
  ['cli', 'main'],
];

export interface Edge { from: string; to: string; files: string[] }
export interface Findings { pairs: [string, string][]; cycles: string[][]; violations: Edge[]; unplaced: string[] }

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.(ts|tsx|mts|cts)$/.test(e.name) ? [p] : [];
  });
}

/** Every module specifier a file names, whatever the form of the import. */
export function specifiers(fileName: string, text: string): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier
      && ts.isStringLiteralLike(node.moduleSpecifier)) {
      out.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)
      && ts.isStringLiteralLike(node.moduleReference.expression)) {
      out.push(node.moduleReference.expression.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      // A computed dynamic import cannot be checked; the house style names its module literally.
      if (arg && ts.isStringLiteralLike(arg)) out.push(arg.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)
      && ts.isStringLiteralLike(node.argument.literal)) {
      out.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The folder under `srcDir` a path belongs to ('.' for a file directly in it), or undefined outside it. */
function folderOf(srcDir: string, path: string): string | undefined {
  const rel = relative(srcDir, path);
  if (rel.startsWith('..') || rel === '') return undefined;
  const parts = rel.split(sep);
  return parts.length > 1 ? parts[0] : '.';
}

export function folderEdges(srcDir = SRC): Map<string, Map<string, string[]>> {
  const edges = new Map<string, Map<string, string[]>>();
  for (const file of sourceFiles(srcDir)) {
    const from = folderOf(srcDir, file);
    if (!from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    for (const spec of specifiers(file, readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue; // packages and node: builtins are not ours
      const to = folderOf(srcDir, resolve(dirname(file), spec));
      if (!to || to === from) continue;
      const byTo = edges.get(from)!;
      const files = byTo.get(to) ?? [];
      files.push(relative(dirname(srcDir), file));
      byTo.set(to, files);
    }
  }
  return edges;
}

/** Strongly connected components with more than one folder (Tarjan), each as one cycle through it. */
function cycles(edges: Map<string, Map<string, string[]>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const sccs: string[][] = [];
  let next = 0;
  const strong = (v: string): void => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) { strong(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do { w = stack.pop()!; onStack.delete(w); scc.push(w); } while (w !== v);
      if (scc.length > 1) sccs.push(scc.sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) strong(v);
  // Name one concrete cycle per component (shortest path back to its first folder) so the report is actionable.
  return sccs.map((scc) => {
    const inScc = new Set(scc);
    const start = scc[0]!;
    const prev = new Map<string, string>();
    const queue = [start];
    while (queue.length) {
      const v = queue.shift()!;
      for (const w of edges.get(v)?.keys() ?? []) {
        if (!inScc.has(w)) continue;
        if (w === start) {
          const path = [start];
          for (let u = v; u !== start; u = prev.get(u)!) path.splice(1, 0, u);
          return [...path, start];
        }
        if (!prev.has(w)) { prev.set(w, v); queue.push(w); }
      }
    }
    return scc;
  });
}

const SDK = join(ROOT, 'sdk', 'src');

/**
 * The SDK (sdk/) is a client published on its own: it may import packages, node: builtins and its own files, never
 * the server's. Each finding is `file → specifier`.
 */
export function sdkEscapes(sdkDir = SDK): string[] {
  return sourceFiles(sdkDir).flatMap((file) =>
    specifiers(file, readFileSync(file, 'utf8'))
      .filter((spec) => (spec.startsWith('.') || spec.startsWith('/')) && relative(sdkDir, resolve(dirname(file), spec)).startsWith('..'))
      .map((spec) => `${relative(ROOT, file)} → ${spec}`),
  );
}

export function check(edges = folderEdges(), layers = LAYERS): Findings {
  const rank = new Map<string, number>();
  layers.forEach((folders, i) => folders.forEach((f) => rank.set(f, i)));
  const pairs: [string, string][] = [];
  const violations: Edge[] = [];
  for (const [from, byTo] of edges) {
    for (const [to, files] of byTo) {
      if (from < to && edges.get(to)?.has(from)) pairs.push([from, to]);
      const rf = rank.get(from);
      const rt = rank.get(to);
      if (rf !== undefined && rt !== undefined && rt >= rf) violations.push({ from, to, files });
    }
  }
  const unplaced = [...edges.keys()].filter((f) => !rank.has(f)).sort();
  return { pairs: pairs.sort(), cycles: cycles(edges), violations, unplaced };
}

function main(): void {
  const edges = folderEdges();
  const { pairs, cycles: loops, violations, unplaced } = check(edges);
  if (process.argv.includes('--edges')) {
    const byName = <T>([x]: [string, T], [y]: [string, T]): number => x.localeCompare(y);
    for (const [from, byTo] of [...edges].sort(byName)) {
      for (const [to, files] of [...byTo].sort(byName)) console.log(`${from} → ${to}  (${[...new Set(files)].join(', ')})`);
    }
  }
  const filesOf = (from: string, to: string): string => [...new Set(edges.get(from)?.get(to) ?? [])].join(', ');
  for (const [a, b] of pairs) console.log(`two-way: ${a} ↔ ${b}  (${filesOf(a, b)} | ${filesOf(b, a)})`);
  for (const loop of loops) console.log(`cycle: ${loop.join(' → ')}`);
  for (const v of violations) {
    console.log(`layer: ${v.from} imports ${v.to}, which is not below it  (${[...new Set(v.files)].join(', ')})`);
  }
  for (const f of unplaced) console.log(`unplaced: src/${f}/ is not in the layer map (scripts/layers.ts, docs/architecture.md)`);
  const escapes = sdkEscapes();
  for (const e of escapes) console.log(`sdk: imports from outside sdk/src (the SDK is a client of the API, not of its code): ${e}`);
  const total = pairs.length + loops.length + violations.length + unplaced.length + escapes.length;
  console.log(`layers: ${edges.size} folders, ${pairs.length} two-way pairs, ${loops.length} cycles, `
    + `${violations.length} layer violations, ${unplaced.length} unplaced, ${escapes.length} SDK imports from outside sdk/src`);
  if (total > 0) process.exitCode = 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
