// Our own CSV (docs/importing/export.md): the file `GET /v1/links/export?format=csv` writes, read back so that a
// workspace's links can be moved into another one. Every column the export writes is read: the fields every source
// has go into the ImportedLink, and the blocks only we have (note, redirect type, A/B test, rules, mobile, rotator,
// preview) travel in `native`. Cells a spreadsheet would have run as a formula were written with one more leading `'`; it is
// dropped here. The source id is the exported link's id, so importing the same file twice creates nothing twice.
//
// A CSV made by hand (a spreadsheet's) is read too: only `url` is required; `slug`, `title`, `note`, `domain` (a host
// name), `tags` (a JSON array, or names separated by `,`, `;` or `|`), `expires_at`, `expired_url`, `created_at` and
// the `utm_*` columns are read when present. Without an `id` column, a row's source id is its domain and slug (or its
// row number and URL when it has no slug), so importing the same file again still creates nothing twice.
import Papa from 'papaparse';
import { SourceError, type ImportSource, type ImportedLink, type NativeFields, type SourceOptions, type SourcePage, type SourceRowError } from '../source.ts';
import { checkParams } from './options.ts';
import { linkOf, isHttpUrl, isoDateOf, textOf } from './mapping.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';

/** Rows mapped per page: a page is one batch of the job, written in chunks of 500 side by side. */
export const CSV_PAGE_SIZE = 2000;
const REQUIRED = ['url'] as const;
const UTM_COLUMNS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;
const FORMULA = /^'+[=+\-@\t\r]/;

type Row = Record<string, string>;

function cell(row: Row, name: string): string {
  const value = row[name] ?? '';
  return FORMULA.test(value) ? value.slice(1) : value;
}

function json(row: Row, name: string): { ok: true; value: unknown } | { ok: false } {
  const text = cell(row, name);
  if (text === '') return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

export function createCsvSource(options: SourceOptions): ImportSource {
  checkParams(options, 'The CSV import', []);
  if (options.file === null || options.file.trim() === '') throw new SourceError('input', 'the CSV file is missing or empty');
  const parsed = Papa.parse<Row>(options.file.replace(/^\uFEFF/, ''), { header: true, skipEmptyLines: 'greedy' });
  const header = parsed.meta.fields ?? [];
  const missing = REQUIRED.filter((name) => !header.includes(name));
  if (missing.length > 0) throw new SourceError('input', `the file has no ${missing.join(', ')} column: a Linkplane CSV export, or a CSV with a url column (docs/importing/export.md)`);
  const rows = parsed.data;

  function readPage(cursor: string | null): SourcePage {
    const start = cursor === null ? 0 : decodeCursor('csv', cursor, (s: unknown): s is { o: number } => typeof (s as { o?: unknown })?.o === 'number').o;
    const end = Math.min(rows.length, start + CSV_PAGE_SIZE);
    const links: ImportedLink[] = [];
    const errors: SourceRowError[] = [];
    for (let index = start; index < end; index++) {
      const mapped = rowToLink(rows[index]!, `row ${index + 2}`);
      if ('url' in mapped) links.push(mapped);
      else errors.push(mapped);
    }
    return { links, errors, total: rows.length, next: end < rows.length ? encodeCursor('csv', { o: end }) : null };
  }

  return { kind: 'csv', page: (cursor) => new Promise((resolve) => resolve(readPage(cursor))) };
}

/** A hand-made file's tags: a JSON array as the export writes it, or names separated by `,`, `;` or `|`. */
function tagNames(text: string): string[] | null {
  if (text.trim().startsWith('[')) return null;
  return text.split(/[,;|]/).map((name) => name.trim()).filter((name) => name !== '');
}

function rowToLink(row: Row, position: string): ImportedLink | SourceRowError {
  const exported = 'domain_id' in row;
  const url = cell(row, 'url');
  const domainOf = exported && cell(row, 'domain_id') === 'dom_default' ? null : textOf(cell(row, 'domain'))?.toLowerCase() ?? null;
  const slug = textOf(cell(row, 'slug'));
  // The source id: the exported link's id; else what names the row in a hand-made file whatever its order.
  const id = textOf(cell(row, 'id'));
  const ref = id ?? (slug ? `${domainOf ?? ''}/${slug}` : `${position}: ${url}`);
  // A row that cannot be read is named as a spreadsheet shows it, unless it has an id.
  const errorRef = id ?? position;
  if (!isHttpUrl(url)) return { ref: errorRef, message: 'the url column is not an absolute http(s) URL' };
  const blocks: Record<string, unknown> = {};
  const plainTags = tagNames(cell(row, 'tags'));
  if (plainTags) blocks.tags = plainTags;
  for (const name of ['tags', 'targeting', 'ab_test', 'rules', 'mobile', 'rotator', 'preview', 'imported']) {
    if (name === 'tags' && plainTags) continue;
    const value = json(row, name);
    if (!value.ok) return { ref: errorRef, message: `the ${name} column is not JSON` };
    blocks[name] = value.value;
  }
  const tags = Array.isArray(blocks.tags) ? blocks.tags.filter((t): t is string => typeof t === 'string') : [];
  const redirect = Number(cell(row, 'redirect_type'));
  // A link the exporting workspace had imported keeps its source's click total, still a historical figure.
  const clicks = (blocks.imported as { clicks_total?: unknown } | null)?.clicks_total;
  const native: NativeFields = {
    note: textOf(cell(row, 'note')),
    ...([301, 302, 307, 308].includes(redirect) ? { redirect_type: redirect as 301 | 302 | 307 | 308 } : {}),
    ab_test: blocks.ab_test as NativeFields['ab_test'],
    rules: (blocks.rules ?? []) as NonNullable<NativeFields['rules']>,
    workspace_rules_off: cell(row, 'workspace_rules_off') === 'true',
    mobile: blocks.mobile as NativeFields['mobile'],
    rotator: blocks.rotator as NativeFields['rotator'],
    preview: blocks.preview as NativeFields['preview'],
  };
  const utm = Object.fromEntries(UTM_COLUMNS.flatMap((name) => (textOf(cell(row, name)) ? [[name, textOf(cell(row, name))!]] : [])));
  return linkOf(ref, url, {
    // The exporting instance's own short domain is not ours: its links go on our default domain.
    domain: domainOf,
    slug,
    ...(Object.keys(utm).length > 0 ? { utm } : {}),
    title: textOf(cell(row, 'title')),
    tags,
    createdAt: isoDateOf(cell(row, 'created_at')),
    expiresAt: isoDateOf(cell(row, 'expires_at')),
    expiredUrl: textOf(cell(row, 'expired_url')),
    targeting: Array.isArray(blocks.targeting) ? (blocks.targeting as ImportedLink['targeting']) : [],
    clicksTotal: typeof clicks === 'number' && Number.isSafeInteger(clicks) && clicks >= 0 ? clicks : null,
    native,
    ...(cell(row, 'has_password') === 'true' ? { warnings: ['the link had a password: exports never hold it, so it arrives without one'] } : {}),
  });
}
