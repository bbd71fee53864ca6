// The Shlink CSV reader on files in the format Shlink's web client exports (test/fixtures/imports/shlink-short_urls.csv
// is one, written by hand from github.com/shlinkio/shlink-web-component src/short-urls/helpers/ExportShortUrlsBtn.tsx
// and @json2csv/plainjs's defaults; shlinkExportCsv writes larger ones) and the "standard CSV" Shlink's importer
// accepts (github.com/shlinkio/shlink-importer, README).
// This file reads the source alone. The import of this source through the API and through `linkplane import`, with
// tags, a custom domain, an expiry and a taken slug (or what the source lacks of these, said and checked absent), is
// in imports-run.test.ts and imports-cli.test.ts, from the cases of test/helpers/import-cases.ts.
import { expect } from 'chai';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SourceError, type SourceOptions } from '../../src/imports/source.ts';
import { createShlinkCsvSource, SHLINK_CSV_PAGE_SIZE } from '../../src/imports/sources/shlink-csv.ts';
import { sourceDeps } from '../helpers/import-http.ts';
import { idsOf, readPages } from '../helpers/import-read.ts';
import { shlinkExportCsv, type ShlinkShortUrlFixture } from '../helpers/import-servers/shlink.ts';

const FIXTURE = new URL('../fixtures/imports/shlink-short_urls.csv', import.meta.url);
const optionsFor = (file: string | null, params: Record<string, string> = {}): SourceOptions => ({ token: null, baseUrl: null, params, file });
const signal = new AbortController().signal;

describe('import source: Shlink CSV export', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shlink-csv-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("maps every column of a file exported by Shlink's web client", async () => {
    const file = await readFile(FIXTURE, 'utf8');
    const { links, errors, totals } = await readPages(createShlinkCsvSource(optionsFor(file), sourceDeps()));
    expect(errors).to.deep.equal([]);
    expect(totals).to.deep.equal([3]);
    const empty = { expiresAt: null, expiredUrl: null, password: null, utm: null, targeting: [], ios: null, android: null };
    expect(links).to.deep.equal([
      {
        sourceId: 'go.example.com/launch',
        url: 'https://example.com/launch?ref=1&utm_source=news',
        domain: 'go.example.com',
        slug: 'launch',
        title: 'Launch day, "the big one"',
        tags: ['product', 'q3'],
        createdAt: new Date('2024-05-01T08:00:00Z'),
        clicksTotal: 328,
        ...empty,
      },
      { sourceId: 's.test/café', url: 'https://example.com/menu', domain: 's.test', slug: 'café', title: null, tags: [], createdAt: new Date('2024-05-02T07:30:00Z'), clicksTotal: 0, ...empty },
      { sourceId: 's.test/docs/intro', url: 'https://example.com/docs', domain: 's.test', slug: 'docs/intro', title: 'Docs', tags: ['docs'], createdAt: new Date('2024-05-03T08:00:00Z'), clicksTotal: 12, ...empty },
    ]);
  });

  it('writes test files in the same format as the hand-written export', async () => {
    const fixtures: ShlinkShortUrlFixture[] = [
      { shortCode: 'launch', domain: 'go.example.com', longUrl: 'https://example.com/launch?ref=1&utm_source=news', dateCreated: '2024-05-01T10:00:00+02:00', title: 'Launch day, "the big one"', tags: ['product', 'q3'], visits: { total: 328 } },
      { shortCode: 'café', longUrl: 'https://example.com/menu', dateCreated: '2024-05-02T09:30:00+02:00', visits: { total: 0 } },
      { shortCode: 'docs/intro', longUrl: 'https://example.com/docs', dateCreated: '2024-05-03T08:00:00+00:00', title: 'Docs', tags: ['docs'], visits: { total: 12 } },
    ];
    expect(shlinkExportCsv(fixtures)).to.equal(await readFile(FIXTURE, 'utf8'));
  });

  it('reads a large export from a file over several pages, and resumes from a row offset after a restart', async () => {
    const fixtures = Array.from({ length: SHLINK_CSV_PAGE_SIZE * 2 + 123 }, (_, n): ShlinkShortUrlFixture => ({
      shortCode: `c${n}`,
      domain: n % 3 === 0 ? 'go.example.com' : null,
      longUrl: `https://example.com/${n}`,
      dateCreated: '2024-01-01T00:00:00+00:00',
      tags: n % 2 ? ['odd', 'x'] : [],
      visits: { total: n },
    }));
    const path = join(dir, 'short_urls.csv');
    await writeFile(path, shlinkExportCsv(fixtures));
    const file = await readFile(path, 'utf8');
    const whole = await readPages(createShlinkCsvSource(optionsFor(file), sourceDeps()));
    expect(whole.errors).to.deep.equal([]);
    expect(idsOf(whole.links)).to.deep.equal(fixtures.map((f) => `${f.domain ?? 's.test'}/${f.shortCode}`));
    expect(whole.links.map((link) => link.clicksTotal)).to.deep.equal(fixtures.map((f) => f.visits!.total));
    expect(whole.links[1]!.tags).to.deep.equal(['odd', 'x']);
    expect(whole.cursors).to.deep.equal([String(SHLINK_CSV_PAGE_SIZE), String(SHLINK_CSV_PAGE_SIZE * 2), null]);
    const after = await readPages(createShlinkCsvSource(optionsFor(file), sourceDeps()), whole.cursors[0]);
    expect(idsOf(after.links)).to.deep.equal(idsOf(whole.links).slice(SHLINK_CSV_PAGE_SIZE));
  });

  it("reads the standard CSV Shlink's importer accepts: column names in any case with spaces, tags split on commas", async () => {
    const file = ['Long URL;Short URL;Title;Tags', 'https://example.com/a;https://go.example.com/a;A;one,two', 'https://example.com/b;https://go.example.com/b;;'].join('\r\n');
    const { links, errors } = await readPages(createShlinkCsvSource(optionsFor(file, { delimiter: ';' }), sourceDeps()));
    expect(errors).to.deep.equal([]);
    expect(links.map(({ sourceId, domain, slug, title, tags, createdAt, clicksTotal }) => ({ sourceId, domain, slug, title, tags, createdAt, clicksTotal }))).to.deep.equal([
      { sourceId: 'go.example.com/a', domain: 'go.example.com', slug: 'a', title: 'A', tags: ['one', 'two'], createdAt: null, clicksTotal: null },
      { sourceId: 'go.example.com/b', domain: 'go.example.com', slug: 'b', title: null, tags: [], createdAt: null, clicksTotal: null },
    ]);
  });

  it('gives rows it cannot import as row errors numbered as a spreadsheet shows them, and reads the others', async () => {
    const file = [
      '"createdAt","domain","shortCode","shortUrl","longUrl","title","tags","visits"',
      '"2024-05-01T10:00:00+00:00","s.test","ok","https://s.test/ok","https://example.com/ok","","",1',
      '"2024-05-01T10:00:00+00:00","s.test","bad","https://s.test/bad","javascript:alert(1)","","",1',
      '"2024-05-01T10:00:00+00:00","s.test","","","https://example.com/none","","",1',
      '"2024-05-01T10:00:00+00:00","s.test","short"',
      '"yesterday","s.test","late","https://s.test/late","https://example.com/late","","",2',
    ].join('\n');
    const { links, errors } = await readPages(createShlinkCsvSource(optionsFor(file), sourceDeps()));
    expect(idsOf(links)).to.deep.equal(['s.test/ok', 's.test/late']);
    expect(links[1]!.warnings).to.deep.equal(['its creation date "yesterday" cannot be read']);
    expect(errors.map((error) => error.ref)).to.deep.equal(['row 3', 'row 4', 'row 5']);
    expect(errors[0]!.message).to.contain('not an absolute http(s) URL');
    expect(errors[1]!.message).to.contain('neither a short code nor a short URL');
    expect(errors[2]!.message).to.contain('cannot be read as CSV');
  });

  it('fails as input on a missing file, a file that is not a Shlink export, a bad delimiter, an unknown option or a damaged cursor', async () => {
    const file = await readFile(FIXTURE, 'utf8');
    for (const options of [optionsFor(null), optionsFor('  \n'), optionsFor('name,url\nx,https://example.com'), optionsFor(file, { delimiter: '#' }), optionsFor(file, { seperator: ',' })]) {
      expect(() => createShlinkCsvSource(options, sourceDeps())).to.throw(SourceError).with.property('kind', 'input');
    }
    for (const cursor of ['-1', 'abc', '4']) {
      const failure = await createShlinkCsvSource(optionsFor(file), sourceDeps()).page(cursor, signal).catch((error: unknown) => error as SourceError);
      expect(failure, cursor).to.be.instanceOf(SourceError).with.property('kind', 'input');
    }
  });
});
