// Reads the CSV that Shlink's web client exports (the "Export" button of the short URL list; in
// github.com/shlinkio/shlink-web-component, src/short-urls/helpers/ExportShortUrlsBtn.tsx, written by
// @json2csv/plainjs with its defaults): a header `createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits`,
// every text quoted, tags joined by `|`, `shortCode` the short URL's path (so percent-encoded), `domain` its host.
// It also reads the "standard CSV" Shlink's own importer accepts (github.com/shlinkio/shlink-importer, README):
// `Long URL` plus `Short code` or `Short URL`, optional `Domain`, `Title` and `Tags` (split on `,` when there is one,
// else on `|`), column names in any case with spaces ignored.
//
// The file is parsed once, when the source is built; the cursor is the offset of the next data row.
import Papa from 'papaparse';
import { SourceError, type ImportSource, type ImportedLink, type SourceDeps, type SourceOptions, type SourcePage, type SourceRowError } from '../source.ts';
import { checkParams } from './options.ts';
import { countOf, decodePath, hostnameOf, isHttpUrl, isoDateOf, linkOf, textOf } from './mapping.ts';

/** Rows mapped per page: a page is one batch of the job, written in chunks of 500 side by side. */
export const SHLINK_CSV_PAGE_SIZE = 2000;

const DELIMITERS = [',', ';', '\t', '|'];

type Column = 'createdat' | 'domain' | 'shortcode' | 'shorturl' | 'longurl' | 'title' | 'tags' | 'visits';
const COLUMNS: readonly Column[] = ['createdat', 'domain', 'shortcode', 'shorturl', 'longurl', 'title', 'tags', 'visits'];

interface ParsedFile {
  columns: Map<Column, number>;
  /** Fields in the header; a row with another count is not one the exporter wrote. */
  width: number;
  rows: string[][];
  /** Parse problems by data row index. */
  problems: Map<number, string>;
}

export function createShlinkCsvSource(options: SourceOptions, _deps: SourceDeps): ImportSource {
  checkParams(options, 'The Shlink CSV import', ['delimiter']);
  const delimiter = options.params.delimiter ?? ',';
  if (!DELIMITERS.includes(delimiter)) throw new SourceError('input', `the delimiter must be one of , ; | or a tab, not ${JSON.stringify(delimiter)}`);
  const file = parseFile(options.file, delimiter);

  function readPage(cursor: string | null): SourcePage {
    const start = cursor === null ? 0 : offsetOf(cursor, file.rows.length);
    const end = Math.min(file.rows.length, start + SHLINK_CSV_PAGE_SIZE);
    const links: ImportedLink[] = [];
    const errors: SourceRowError[] = [];
    for (let index = start; index < end; index++) {
      // Row 1 is the header, as a spreadsheet numbers it.
      const ref = `row ${index + 2}`;
      const row = file.rows[index]!;
      const problem = file.problems.get(index) ?? (row.length === file.width ? null : `it has ${row.length} fields where the header has ${file.width}`);
      const mapped = problem ? { ref, message: `the row cannot be read as CSV: ${problem}` } : rowToLink(file, row, ref);
      if ('url' in mapped) links.push(mapped);
      else errors.push(mapped);
    }
    return { links, errors, total: file.rows.length, next: end < file.rows.length ? String(end) : null };
  }

  // The executor turns a bad cursor's throw into the rejection a caller awaits.
  return { kind: 'shlink_csv', page: (cursor) => new Promise((resolve) => resolve(readPage(cursor))) };
}

function parseFile(text: string | null, delimiter: string): ParsedFile {
  if (text === null || text.trim() === '') throw new SourceError('input', 'the Shlink CSV file is missing or empty');
  const parsed = Papa.parse<string[]>(text.replace(/^\uFEFF/, ''), { delimiter, skipEmptyLines: 'greedy' });
  const [header, ...rows] = parsed.data;
  const columns = new Map<Column, number>();
  for (const [index, name] of (header ?? []).entries()) {
    const normalized = name.replaceAll(' ', '').toLowerCase() as Column;
    if (COLUMNS.includes(normalized) && !columns.has(normalized)) columns.set(normalized, index);
  }
  if (!columns.has('longurl') || (!columns.has('shortcode') && !columns.has('shorturl'))) {
    throw new SourceError('input', 'the file is not a Shlink CSV: its first row must name a longUrl column and a shortCode or shortUrl column');
  }
  const problems = new Map<number, string>();
  for (const error of parsed.errors) {
    // Papa numbers the rows it parsed, the header being 0.
    if (error.row !== undefined && error.row > 0 && !problems.has(error.row - 1)) problems.set(error.row - 1, error.message);
  }
  return { columns, width: header?.length ?? 0, rows, problems };
}

function offsetOf(cursor: string, rows: number): number {
  const offset = /^\d{1,9}$/.test(cursor) ? Number(cursor) : NaN;
  if (!(offset <= rows)) throw new SourceError('input', 'the saved position of this Shlink CSV import does not fit the file; start the import again');
  return offset;
}

function rowToLink(file: ParsedFile, row: string[], ref: string): ImportedLink | SourceRowError {
  const cell = (column: Column): string => {
    const index = file.columns.get(column);
    return index === undefined ? '' : (row[index] ?? '').trim();
  };
  const longUrl = cell('longurl');
  if (!isHttpUrl(longUrl)) return { ref, message: longUrl === '' ? 'it has no long URL' : `its long URL ${JSON.stringify(longUrl)} is not an absolute http(s) URL` };
  const shortUrl = cell('shorturl');
  const fromShortUrl = shortUrl === '' ? null : URL.parse(shortUrl);
  // The web client writes the short URL's path, so a slug outside ASCII arrives percent-encoded.
  const slug = decodePath(cell('shortcode') || (fromShortUrl?.pathname.slice(1) ?? ''));
  if (slug === '') return { ref, message: 'it has neither a short code nor a short URL with a path' };
  const domain = file.columns.has('domain') ? textOf(cell('domain'))?.toLowerCase() ?? null : hostnameOf(shortUrl);
  const warnings: string[] = [];
  const createdAt = isoDateOf(cell('createdat'));
  if (cell('createdat') !== '' && createdAt === null) warnings.push(`its creation date ${JSON.stringify(cell('createdat'))} cannot be read`);
  return linkOf(`${domain ?? ''}/${slug}`, longUrl, {
    domain,
    slug,
    title: textOf(cell('title')),
    tags: tagsOf(cell('tags')),
    createdAt,
    clicksTotal: countOf(cell('visits')),
    ...(warnings.length > 0 && { warnings }),
  });
}

/** As Shlink's importer splits them: on commas when the cell has one, else on pipes. */
function tagsOf(cell: string): string[] {
  const separator = cell.includes(',') ? ',' : '|';
  return cell.split(separator).map((tag) => tag.trim()).filter((tag) => tag !== '');
}
