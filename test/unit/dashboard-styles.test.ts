// The dashboard's own style sheets use no CSS nesting. Nesting is valid CSS, so a rule left unclosed does not fail
// the build: every rule after it silently becomes a nested rule that matches nothing (it happened: a lost `}` turned
// every later rule of styles.css into a descendant of `.qr-preview figcaption button`). Only at-rules (@media,
// @supports, @layer, @font-face) may hold rules.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../helpers/processes.ts';

function cssFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return cssFiles(path);
    return entry.name.endsWith('.css') ? [path] : [];
  });
}

/** Selectors of rules opened inside another rule (not inside an at-rule), with their line. */
export function nestedRules(css: string): string[] {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '));
  const stack: Array<{ atRule: boolean }> = [];
  const nested: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '{') {
      const prelude = text.slice(start, i).trim();
      const inRule = stack.some((frame) => !frame.atRule);
      if (inRule) nested.push(`line ${text.slice(0, i).split('\n').length}: ${prelude.split('\n').pop()}`);
      stack.push({ atRule: prelude.startsWith('@') });
      start = i + 1;
    } else if (char === '}') {
      stack.pop();
      start = i + 1;
    } else if (char === ';') {
      start = i + 1;
    }
  }
  if (stack.length > 0) nested.push(`${stack.length} block(s) never closed`);
  return nested;
}

describe('dashboard style sheets', () => {
  it('finds a rule left unclosed', () => {
    expect(nestedRules('.a {\n  color: red;\n.b {\n  color: blue;\n}\n')).to.deep.equal(['line 3: .b', '1 block(s) never closed']);
    expect(nestedRules('@media (max-width: 10px) {\n  .a { color: red; }\n}\n.b { color: blue; }\n')).to.deep.equal([]);
  });

  for (const file of cssFiles(join(ROOT, 'web', 'src'))) {
    it(`${file.slice(ROOT.length)} has no nested rule and closes every block`, () => {
      expect(nestedRules(readFileSync(file, 'utf8'))).to.deep.equal([]);
    });
  }
});
