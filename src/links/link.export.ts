// GET /links/export: every link of a workspace with every field, as CSV or as JSON Lines, streamed from one cursor
// (oldest first) a batch at a time: each batch's tags and folders are read once for it, its rows become one chunk, and
// the next batch is asked for before this one is formatted. A chunk is made only when the socket has taken the
// previous one, and a client that goes away destroys the stream, which closes the cursor: memory stays flat whatever
// the workspace's size. The columns are documented in docs/importing/export.md; the CSV import reads the same ones.
import { Readable } from 'node:stream';
import Papa from 'papaparse';
import type { FindCursor } from 'mongodb';
import { CsvCells, type CsvValue } from '../platform/csv.ts';
import type { LabelDoc, LabelStore } from './label.store.ts';
import type { LinkDoc, LinkStore } from './link.store.ts';
import { linkView } from './link.view.ts';
import type { LinkExportLine } from './link.schemas.ts';

/** The CSV's columns, in order: the JSON Lines keys, with `tags` as a JSON array of names. */
export const LINK_EXPORT_COLUMNS = [
  'id',
  'short_url',
  'domain_id',
  'domain',
  'slug',
  'url',
  'title',
  'note',
  'folder_id',
  'folder_name',
  'tags',
  'redirect_type',
  'expires_at',
  'expired_url',
  'has_password',
  'targeting',
  'ab_test',
  'rules',
  'workspace_rules_off',
  'mobile',
  'rotator',
  'preview',
  'destination_preview',
  'archived',
  'moderation',
  'imported',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof LinkExportLine>;

/**
 * RFC 4180 as the analytics export writes it, a cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab
 * or a CR first) getting a leading `'`; so does a cell that already starts with `'`s before one of those, so that a
 * reader takes the export back exactly by dropping one leading `'` from any cell matching `^'+[=+\-@\t\r]`.
 */
export const LINK_EXPORT_UNPARSE: Papa.UnparseConfig = { newline: '\r\n', escapeFormulae: /^'*[=+\-@\t\r]/ };

export type LinkExportFormat = 'csv' | 'jsonl';

/** Links per cursor batch, hence per chunk: a few hundred KB of text at most, even with every block filled. */
const BATCH_LINKS = 100;

export interface LinkExportDeps {
  links: LinkStore;
  tags: LabelStore;
  folders: LabelStore;
  defaultBaseUrl: string;
}

/** One link as an export line: the API's link, and its folder's name. */
function lineOf(doc: LinkDoc, tags: ReadonlyMap<string, LabelDoc>, folders: ReadonlyMap<string, LabelDoc>, baseUrl: string): LinkExportLine {
  return { ...linkView(doc, tags, baseUrl), folder_name: doc.folder_id ? (folders.get(doc.folder_id)?.name ?? null) : null };
}

/** The CSV cells of a line: text as it is, blocks and lists as their JSON, null as an empty cell. */
function csvRow(line: LinkExportLine): CsvValue[] {
  const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
  return LINK_EXPORT_COLUMNS.map((column) => {
    if (column === 'tags') return JSON.stringify(line.tags.map((t) => t.name));
    const value = line[column];
    return typeof value === 'object' ? json(value) : value;
  });
}

/** The export of every link of `workspaceId`, as a byte stream of `format`. */
export function exportLinks(d: LinkExportDeps, workspaceId: string, format: LinkExportFormat): Readable {
  const cursor: FindCursor<LinkDoc> = d.links.everyLink(workspaceId, BATCH_LINKS);
  const cells = new CsvCells(LINK_EXPORT_UNPARSE);
  async function* chunks(): AsyncGenerator<string> {
    let more: Promise<boolean> | undefined;
    try {
      if (format === 'csv') yield `${Papa.unparse([[...LINK_EXPORT_COLUMNS]], LINK_EXPORT_UNPARSE)}\r\n`;
      more = cursor.hasNext();
      while (await more) {
        const batch = cursor.readBufferedDocuments();
        more = cursor.hasNext();
        const [tags, folders] = await Promise.all([
          d.tags.findMany(workspaceId, [...new Set(batch.flatMap((doc) => doc.tag_ids))]),
          d.folders.findMany(workspaceId, [...new Set(batch.flatMap((doc) => (doc.folder_id ? [doc.folder_id] : [])))]),
        ]);
        const tagMap = new Map(tags.map((t) => [t._id, t]));
        const folderMap = new Map(folders.map((f) => [f._id, f]));
        let chunk = '';
        for (const doc of batch) {
          const line = lineOf(doc, tagMap, folderMap, d.defaultBaseUrl);
          chunk += format === 'csv' ? cells.record(csvRow(line)) : `${JSON.stringify(line)}\n`;
        }
        if (chunk) yield chunk;
      }
    } finally {
      // A batch still being fetched (the client went away) is waited for, so that closing the cursor cannot race it.
      await more?.catch(() => false);
      await cursor.close();
    }
  }
  // One chunk waits at most: the next is made when the socket has taken it.
  return Readable.from(chunks(), { objectMode: false, highWaterMark: 1 });
}
