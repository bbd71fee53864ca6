import { expect } from 'chai';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { check, folderEdges, sdkEscapes, specifiers } from '../../scripts/layers.ts';

/** A throwaway src/ tree: path → file text. */
function tree(files: Record<string, string>): string {
  const src = join(mkdtempSync(join(tmpdir(), 'layers-')), 'src');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, path)), { recursive: true });
    writeFileSync(join(src, path), text);
  }
  return src;
}

describe('layers check', () => {
  it('refuses an SDK file importing from outside the SDK (server code), and lets packages and its own files through', () => {
    const sdk = tree({
      'client.ts': "import createClient from 'openapi-fetch';\nimport { x } from './errors.ts';\nimport { createHmac } from 'node:crypto';",
      'errors.ts': "import type { ErrorCode } from '../../src/platform/errors.ts';\nexport const x = 1;",
      'generated/types.ts': "import type { x } from '../errors.ts';",
    });
    expect(sdkEscapes(sdk).map((e) => e.replace(/^.*?(errors\.ts|client\.ts|types\.ts) → /, '$1 → '))).to.deep.equal(['errors.ts → ../../src/platform/errors.ts']);
  });

  it('reads every form of import: static, type-only, re-export, dynamic, import types', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b/b.ts';",
      "import './side-effect.ts';",
      "export { c } from '../c/c.ts';",
      "export * from '../d/d.ts';",
      "const e = await import('../e/e.ts');",
      "type F = typeof import('../f/f.ts');",
      "const g = await import(name);",
      "import { readFileSync } from 'node:fs';",
      "// import { h } from '../h/h.ts';",
    ].join('\n');
    expect(specifiers('x.ts', text)).to.deep.equal(['./a.ts', '../b/b.ts', './side-effect.ts', '../c/c.ts', '../d/d.ts', '../e/e.ts', '../f/f.ts', 'node:fs']);
  });

  it('maps imports to folders, without a folder importing itself', () => {
    const src = tree({
      'a/one.ts': "import { two } from './two.ts';\nimport type { B } from '../b/b.ts';\nexport const one = 1;",
      'a/two.ts': "export const two = 2;",
      'b/b.ts': "export type B = number;",
    });
    const edges = folderEdges(src);
    expect([...edges.get('a')!.keys()]).to.deep.equal(['b']);
    expect(edges.get('a')!.get('b')).to.deep.equal(['src/a/one.ts']);
    expect([...edges.get('b')!.keys()]).to.deep.equal([]);
  });

  it('names two folders importing each other, a dynamic import included, and the cycle they make', () => {
    const src = tree({
      'a/a.ts': "export const a = async () => (await import('../b/b.ts')).b;",
      'b/b.ts': "import type { a } from '../a/a.ts';\nexport const b: typeof a | null = null;",
    });
    const findings = check(folderEdges(src), [['a', 'b']]);
    expect(findings.pairs).to.deep.equal([['a', 'b']]);
    expect(findings.cycles).to.deep.equal([['a', 'b', 'a']]);
  });

  it('names a cycle of three folders that no pair shows', () => {
    const src = tree({
      'a/a.ts': "import '../b/b.ts';",
      'b/b.ts': "import '../c/c.ts';",
      'c/c.ts': "import type { X } from '../a/x.ts';",
      'a/x.ts': 'export type X = 1;',
    });
    const findings = check(folderEdges(src), [['a'], ['b'], ['c']]);
    expect(findings.pairs).to.deep.equal([]);
    expect(findings.cycles).to.deep.equal([['a', 'b', 'c', 'a']]);
  });

  it('refuses an import up or sideways in the layer map, and a folder the map does not place', () => {
    const src = tree({
      'low/low.ts': "import '../high/high.ts';",
      'high/high.ts': "import '../side/side.ts';",
      'side/side.ts': 'export {};',
      'new/new.ts': "import '../low/low.ts';",
    });
    const findings = check(folderEdges(src), [['low'], ['high', 'side']]);
    expect(findings.violations.map((v) => `${v.from}→${v.to}`).sort()).to.deep.equal(['high→side', 'low→high']);
    expect(findings.unplaced).to.deep.equal(['new']);
  });

  it('passes a tree that imports only down', () => {
    const src = tree({
      'low/low.ts': 'export const low = 1;',
      'mid/mid.ts': "import { low } from '../low/low.ts';\nexport const mid = low;",
      'top/top.ts': "import { low } from '../low/low.ts';\nimport { mid } from '../mid/mid.ts';\nexport const top = low + mid;",
    });
    expect(check(folderEdges(src), [['low'], ['mid'], ['top']])).to.deep.equal({ pairs: [], cycles: [], violations: [], unplaced: [] });
  });
});
