// CSV rows to link bodies for bulk import: the columns a person is likely to have, checked in the browser first
// so a preview can show each row's problems before anything is sent.
import Papa from 'papaparse';
import type { Domain, Folder, TagRef } from './link-types.ts';

/** The columns understood (header names, case-insensitive); others are reported and ignored. */
export const BULK_COLUMNS = ['url', 'slug', 'title', 'note', 'domain', 'tags', 'folder', 'expires_at', 'password', 'redirect_type', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;

export interface BulkRow {
  /** 1-based line in the CSV (after the header), as a spreadsheet shows it. */
  line: number;
  values: Record<string, string>;
  body: Record<string, unknown>;
  errors: string[];
}

export interface ParsedCsv {
  rows: BulkRow[];
  unknownColumns: string[];
  /** Problems with the file as a whole (no url column, unreadable). */
  problems: string[];
}

interface Lookups {
  domains: Domain[];
  tags: TagRef[];
  folders: Folder[];
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function rowBody(values: Record<string, string>, lookups: Lookups, errors: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const url = values.url?.trim() ?? '';
  if (!url) errors.push('url is empty');
  else if (!isHttpUrl(url)) errors.push(`url "${url}" is not an http(s) URL`);
  body.url = url;
  for (const key of ['slug', 'title', 'note', 'password'] as const) {
    const value = values[key]?.trim();
    if (value) body[key] = value;
  }
  const domain = values.domain?.trim().toLowerCase();
  if (domain) {
    const found = lookups.domains.find((d) => d.hostname === domain || d.id === domain);
    if (found) body.domain_id = found.id;
    else errors.push(`domain "${domain}" is not connected to this workspace`);
  }
  const tags = (values.tags ?? '')
    .split(/[,;|]/)
    .map((t) => t.trim())
    .filter(Boolean);
  if (tags.length) {
    const ids: string[] = [];
    for (const name of tags) {
      const tag = lookups.tags.find((t) => t.name.toLowerCase() === name.toLowerCase() || t.id === name);
      if (tag) ids.push(tag.id);
      else errors.push(`tag "${name}" does not exist`);
    }
    body.tag_ids = [...new Set(ids)];
  }
  const folder = values.folder?.trim();
  if (folder) {
    const found = lookups.folders.find((f) => f.name.toLowerCase() === folder.toLowerCase() || f.id === folder);
    if (found) body.folder_id = found.id;
    else errors.push(`folder "${folder}" does not exist`);
  }
  const expires = values.expires_at?.trim();
  if (expires) {
    const date = new Date(expires);
    if (Number.isNaN(date.getTime())) errors.push(`expires_at "${expires}" is not a date`);
    else body.expires_at = date.toISOString();
  }
  const redirectType = values.redirect_type?.trim();
  if (redirectType) {
    if (['301', '302', '307', '308'].includes(redirectType)) body.redirect_type = Number(redirectType);
    else errors.push(`redirect_type "${redirectType}" is not one of 301, 302, 307, 308`);
  }
  const utm: Record<string, string> = {};
  for (const key of ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content']) {
    const value = values[key]?.trim();
    if (value) utm[key] = value;
  }
  if (Object.keys(utm).length) body.utm = utm;
  return body;
}

/** Parses a CSV with a header row; a file with a single column and no header is read as a list of URLs. */
export function parseBulkCsv(text: string, lookups: Lookups): ParsedCsv {
  // Blank lines are kept while parsing and dropped below, so every row keeps the line number a spreadsheet shows.
  const parsed = Papa.parse<string[]>(text.trim(), { skipEmptyLines: false });
  // Only broken quoting is a problem of the file; a short or long row is read cell by cell (missing cells empty).
  const problems = parsed.errors.filter((e) => e.type === 'Quotes').map((e) => `line ${(e.row ?? 0) + 1}: ${e.message}`);
  const table = parsed.data;
  if (table.length === 0) return { rows: [], unknownColumns: [], problems: ['The file is empty.'] };
  let header = table[0]!.map((h) => h.trim().toLowerCase());
  let records = table.slice(1);
  let firstLine = 2;
  if (!header.includes('url')) {
    if (header.length === 1 && isHttpUrl(table[0]![0]!.trim())) {
      header = ['url'];
      records = table;
      firstLine = 1;
    } else {
      return { rows: [], unknownColumns: [], problems: [...problems, 'The first line must name the columns, one of them "url".'] };
    }
  }
  const unknownColumns = header.filter((h) => h && !(BULK_COLUMNS as readonly string[]).includes(h));
  const rows: BulkRow[] = [];
  records.forEach((record, i) => {
    if (record.every((cell) => cell.trim() === '')) return;
    const values: Record<string, string> = {};
    header.forEach((column, c) => {
      if (column) values[column] = record[c] ?? '';
    });
    const errors: string[] = [];
    const body = rowBody(values, lookups, errors);
    rows.push({ line: firstLine + i, values, body, errors });
  });
  return { rows, unknownColumns, problems };
}
