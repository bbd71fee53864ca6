import { expect } from 'chai';
import Papa from 'papaparse';
import { parse } from 'csv-parse/sync';
import { serialize } from 'bson';
import { CsvCells, UNPARSE, exportClicks, type CsvValue, type ExportOptions } from '../../src/analytics/export.ts';
import { readRowClick } from '../../src/analytics/export-bson.ts';
import type { Resolved } from '../../src/analytics/query.ts';
import { toClickDoc } from '../../src/clicks/click.store.ts';
import { randomClick, seeded, type TestLink } from '../helpers/analytics-clicks.ts';

/** What papaparse makes of one record, CRLF included: what every record of the export must be. */
const unparsed = (values: readonly CsvValue[]) => `${Papa.unparse([[...values]], UNPARSE)}\r\n`;

describe('analytics CSV export: cells', () => {
  it('writes every record exactly as papaparse does: quotes, commas, line breaks, spaces, formulas, byte order marks, unicode, numbers', () => {
    const rand = seeded(29);
    // Characters that change a cell's text where they stand, characters PLAIN text is made of, and others.
    const alphabet = ['"', ',', '\r', '\n', ' ', '\t', '=', '+', '-', '@', "'", '\ufeff', ';', '?', '&', '%', '#', '/', ':', '.', '_', 'a', 'Z', '7', 'ü', '東', '🚀', '|', '\\', '$', '*', '~', '!'];
    const text = () => Array.from({ length: Math.floor(rand() * 8) }, () => alphabet[Math.floor(rand() * alphabet.length)]!).join('');
    // Text PLAIN is made of, with one other character at its start, inside or at its end.
    const plain = 'aZ7_./:?&=%#~+-@!$*;';
    const nearlyPlain = () => {
      const base = Array.from({ length: 2 + Math.floor(rand() * 4) }, () => plain[Math.floor(rand() * plain.length)]!).join('');
      const at = [0, 1, base.length][Math.floor(rand() * 3)]!;
      return base.slice(0, at) + alphabet[Math.floor(rand() * alphabet.length)]! + base.slice(at);
    };
    const pool: CsvValue[] = [...Array.from({ length: 300 }, text), ...Array.from({ length: 300 }, nearlyPlain)];
    pool.push(null, undefined, true, false, 0, -1, 1.5, -0.25, 1e21, 123456789, Number.NaN, '-1', '1', '', ' ', 'New York', 'https://shop.example/p?utm_source=a&x=%2E');
    const cells = new CsvCells();
    for (let n = 0; n < 3000; n++) {
      // Values repeat across records, as a column's do, so remembered cells are read back too.
      const record = Array.from({ length: 1 + Math.floor(rand() * 12) }, () => pool[Math.floor(rand() * pool.length)]);
      expect(cells.record(record), JSON.stringify(record)).to.equal(unparsed(record));
    }
  });

  it('keeps a number and the same text apart (a negative number is no formula) and writes text too long to remember', () => {
    const cells = new CsvCells();
    expect(cells.record([-1, '-1', -1, '-1'])).to.equal(unparsed([-1, '-1', -1, '-1']));
    expect(cells.record([-1, '-1'])).to.equal(`-1,"'-1"\r\n`);
    const long = `=${'x,'.repeat(1_500_000)}`;
    expect(cells.record([long, 'a'])).to.equal(unparsed([long, 'a']));
    expect(cells.record([long])).to.equal(unparsed([long]));
  });
});

describe('analytics CSV export: clicks the row reader does not know', () => {
  it('exports them through the generic decoder, with the rows the reader gives for the others', async () => {
    const t = Date.parse('2026-11-12T08:00:00Z');
    const rand = seeded(31);
    const links: TestLink[] = [{ id: 'lnk_x', domain_id: 'dom_x', domain: 'go.example', slug: 'x', tag_ids: [], folder_id: null }];
    const known = toClickDoc(randomClick(rand, 'ws_x', links, t, t + 1000, 5));
    known.visitor.city = 'Paris';
    // A city stored as a number: no click our code writes, so readRowClick answers null for it.
    const odd = toClickDoc(randomClick(rand, 'ws_x', links, t + 1000, t + 2000, 5));
    (odd.visitor as Record<string, unknown>).city = 5;
    const docs = [serialize(known), serialize(odd)];
    expect(readRowClick(docs[1]!)).to.equal(null);
    let closed = false;
    const cursor = {
      sort: () => cursor,
      hasNext: () => Promise.resolve(docs.length > 0),
      readBufferedDocuments: () => docs.splice(0),
      close: () => ((closed = true), Promise.resolve()),
    };
    const options = {
      clicks: { find: () => cursor },
      slots: { acquire: () => Promise.resolve({ renew: () => Promise.resolve(), release: () => Promise.resolve() }) },
      logger: { warn: () => undefined },
    } as unknown as ExportOptions;
    const r = { workspaceId: 'ws_x', workspaces: ['ws_x'], zone: 'UTC', start: t, end: t + 2000, interval: null, bots: 'include', links: null, visitor: null } as Resolved;
    let text = '';
    for await (const chunk of await exportClicks(options, r)) text += String(chunk);
    const rows = parse<Record<string, string>>(text, { columns: true });
    expect(rows.map((row) => [row.click_id, row.city])).to.deep.equal([
      [known._id, 'Paris'],
      [odd._id, '5'],
    ]);
    expect(closed).to.equal(true);
  });
});
