import { expect } from 'chai';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { anchorsOf, check, documentationFiles, linksOf, unindexed } from '../../scripts/doc-links.ts';

/** A throwaway repository: path → file text. */
function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'doc-links-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('documentation link check', () => {
  it("gives headings GitHub's anchors: lower case, punctuation dropped, code kept, duplicates numbered", () => {
    const anchors = anchorsOf([
      '# Linkplane',
      '## The operator (custom domains)',
      '### `DEVDB_PORT` and friends',
      '## Tests',
      '## Tests',
      'Setext heading',
      '---',
      '<a id="kept-by-hand"></a>',
      '```md',
      '## not a heading inside code',
      '```',
    ].join('\n'));
    expect([...anchors]).to.have.members([
      'linkplane', 'the-operator-custom-domains', 'devdb_port-and-friends', 'tests', 'tests-1', 'setext-heading', 'kept-by-hand',
    ]);
  });

  it('reads inline, reference and image links with their line, and nothing inside code', () => {
    const links = linksOf([
      'See [the API](docs/api-guide.md#keys) and ![chart](img/c.png).',
      '',
      'A [reference][ref] and `[not](a-link.md)`.',
      '',
      '```',
      '[also not](code.md)',
      '```',
      '',
      '[ref]: docs/concepts.md',
      '',
      '| page | what |',
      '|---|---|',
      '| [kube](docs/kubernetes.md) | chart |',
      '| [dev](docs/development.md) | tests |',
    ].join('\n'));
    expect(links).to.deep.equal([
      { href: 'docs/api-guide.md#keys', line: 1 },
      { href: 'img/c.png', line: 1 },
      { href: 'docs/concepts.md', line: 3 },
      { href: 'docs/kubernetes.md', line: 13 },
      { href: 'docs/development.md', line: 14 },
    ]);
  });

  it('passes links to existing files, folders and anchors, and skips links with a scheme', () => {
    const root = repo({
      'README.md': [
        '# Linkplane',
        '[start](docs/getting-started.md#a-first-link) [index](docs/) [top](#linkplane) [chart](charts/x.yaml)',
        '[site](https://example.com/missing.md) [mail](mailto:ops@example.com) [space](docs/with%20space.md)',
      ].join('\n'),
      'docs/getting-started.md': '# Getting started\n\n## A first link\n\n[back](../README.md) [sibling](importing/bitly.md#the-token)',
      'docs/importing/bitly.md': '# Bitly\n\n## The token\n\n[index](../README.md)',
      'docs/README.md': '# Docs\n\n[up](../README.md#linkplane)',
      'docs/with space.md': '# Spaced',
      'charts/x.yaml': 'a: 1',
    });
    expect(documentationFiles(root)).to.deep.equal([
      'README.md', 'docs/README.md', 'docs/getting-started.md', 'docs/importing/bitly.md', 'docs/with space.md',
    ]);
    expect(check(root)).to.deep.equal([]);
  });

  it('names each broken link: missing file, missing anchor (here or there), outside the repository', () => {
    const root = repo({
      'README.md': '# Linkplane\n\n[gone](docs/gone.md)\n\n[moved](#dashboard)',
      'docs/api.md': '# API\n\n## Keys\n\n[other](concepts.md#plans) [readme](../README.md#configuration) [out](../../elsewhere.md)',
      'docs/concepts.md': '# Concepts\n\n## Processes',
    });
    expect(check(root)).to.deep.equal([
      { file: 'README.md', line: 3, href: 'docs/gone.md', reason: 'no such file: docs/gone.md' },
      { file: 'README.md', line: 5, href: '#dashboard', reason: 'no heading or anchor "#dashboard" in README.md' },
      { file: 'docs/api.md', line: 5, href: 'concepts.md#plans', reason: 'no heading or anchor "#plans" in docs/concepts.md' },
      { file: 'docs/api.md', line: 5, href: '../README.md#configuration', reason: 'no heading or anchor "#configuration" in README.md' },
      { file: 'docs/api.md', line: 5, href: '../../elsewhere.md', reason: 'points outside the repository' },
    ]);
  });

  it('names the pages of docs/ the index does not link', () => {
    const root = repo({
      'README.md': '# Linkplane\n\n[docs](docs/README.md)',
      'docs/README.md': '# Docs\n\n- [Concepts](concepts.md#processes)\n- [Bitly](importing/bitly.md)\n- [site](https://example.com/scaling.md)',
      'docs/concepts.md': '# Concepts\n\n## Processes',
      'docs/importing/bitly.md': '# Bitly',
      'docs/importing/dub.md': '# Dub',
      'docs/scaling.md': '# Scaling',
    });
    expect(unindexed(root)).to.deep.equal(['docs/importing/dub.md', 'docs/scaling.md']);
  });

  it('finds no broken link in the repository itself', () => {
    expect(check()).to.deep.equal([]);
  });
});
