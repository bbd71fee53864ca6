// GET /analytics/export.csv: the raw clicks of a range, streamed from one index-ordered MongoDB cursor, one row per
// click, oldest first. The stream works a cursor batch at a time: its rows become CSV chunks of CHUNK_ROWS, and the
// next batch is asked for before this one is formatted, so the database prepares it meanwhile. Cells are papaparse's
// `unparse` of each value (CsvCells: once per distinct value, and not for text it would leave as it is), and a row's
// fields are read from the click's BSON without decoding the rest of it (export-bson.ts). Memory stays
// constant: a chunk is produced only when the socket has taken the previous ones, and a client that goes away destroys
// the stream, which closes the cursor. Cells a spreadsheet would run as a formula are neutralised (a leading `'`). The
// IP column holds only what the redirect stored (a truncated address or a keyed hash, per IP_STORAGE; empty when
// none): the address itself is never stored.
import { Readable, finished } from 'node:stream';
import Papa from 'papaparse';
import { deserialize, type DeserializeOptions } from 'bson';
import type { Collection, Filter, FindCursor } from 'mongodb';
import type { ClickDoc } from '../clicks/click.store.ts';
import type { Logger } from '../platform/logger.ts';
import { RateLimitedError } from '../platform/errors.ts';
import { dimensionValues, isBot, refererHost, utm } from './dimensions.ts';
import { fromClickDoc } from './raw-click.ts';
import { readRowClick, type RowClick } from './export-bson.ts';
import { isoInZone } from './time.ts';
import type { Resolved } from './query.ts';
import { LEASE_MS, type ExportSlots } from '../platform/export-slots.ts';
import { CsvCells, UNPARSE, type CsvValue } from '../platform/csv.ts';

export { CsvCells, UNPARSE, type CsvValue };

export const EXPORT_COLUMNS = [
  'click_id',
  'timestamp',
  'local_time',
  'link_id',
  'domain',
  'slug',
  'destination',
  'outcome',
  'country',
  'region',
  'city',
  'asn',
  'device',
  'os',
  'browser',
  'language',
  'referer',
  'referer_url',
  'visitor_type',
  'bot',
  'verified_bot',
  'bot_name',
  'proxy_type',
  'quality',
  'visit',
  'ab_variant',
  'rotator_destination',
  'rule',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'ip',
  'conversions',
  'revenue',
] as const;

/** A click's revenue as one cell: `EUR 1250;USD 300` (integer minor units per ISO currency, in code order), empty when none. */
export function revenueCell(revenue: Readonly<Record<string, number>> | undefined): string {
  if (!revenue) return '';
  return Object.keys(revenue)
    .filter((c) => revenue[c] !== 0)
    .sort()
    .map((c) => `${c} ${revenue[c]}`)
    .join(';');
}

/** Whether a raw click is counted by the request's filters (the same definitions the rollups were built with). */
function matches(doc: RowClick, r: Pick<Resolved, 'bots' | 'links' | 'visitor'>, linkSet: ReadonlySet<string> | null): boolean {
  const bot = isBot(doc.visitor.visitor_type);
  if (r.bots === 'exclude' && bot) return false;
  if (r.bots === 'only' && !bot) return false;
  if (linkSet && !linkSet.has(doc.link_id)) return false;
  if (r.visitor) {
    // Only a visitor filter needs the click's dimension values: they are not worked out for every row otherwise.
    // Under a visitor filter, exportClicks decodes whole clicks.
    const value = dimensionValues(fromClickDoc(doc as ClickDoc))[r.visitor.dim];
    if (value === null || !r.visitor.values.has(value)) return false;
  }
  return true;
}

/**
 * A click's cells, in EXPORT_COLUMNS order, read straight from the stored document: the derived columns are the
 * dimension values of dimensions.ts (referer host, A/B variant, rotator destination, rule, UTM parameters), computed
 * here one by one because building the click record and all its dimensions for every row cost a fifth of the export.
 */
function row(doc: RowClick, zone: string): CsvValue[] {
  const v = doc.visitor;
  const d = doc.decision;
  const u = utm(doc.destination);
  return [
    doc._id,
    doc.ts.toISOString(),
    isoInZone(doc.ts.getTime(), zone),
    doc.link_id,
    doc.domain,
    doc.slug,
    doc.destination,
    doc.outcome,
    v.country,
    v.region,
    v.city,
    v.asn,
    v.device,
    v.os,
    v.browser,
    v.language,
    refererHost(v.referer),
    v.referer,
    v.visitor_type,
    isBot(v.visitor_type),
    v.verified_bot,
    v.bot_name,
    v.proxy_type,
    v.quality,
    v.visit,
    d.variant_index === null ? null : String(d.variant_index),
    d.destination_id,
    d.rule_id,
    u.source,
    u.medium,
    u.campaign,
    v.ip,
    doc.conversions ?? 0,
    revenueCell(doc.revenue),
  ];
}

export interface ExportOptions {
  clicks: Collection<ClickDoc>;
  slots: ExportSlots;
  logger: Logger;
  /** Clicks per cursor batch, hence per CSV chunk. */
  batchSize?: number;
}

/**
 * Rows per chunk: about 30 KB of CSV. A string past V8's regular object size (about 128 KB) is allocated where only
 * a full collection frees it, so chunks of whole batches kept the process's memory growing with the export.
 */
const CHUNK_ROWS = 100;

/**
 * Clicks per cursor batch: about 200 KB of BSON. Batches of 1,000 (a megabyte each) exported 1 M clicks no faster
 * and grew the api's RSS by 320 MB instead of 50: the driver's megabyte message buffers are memory the process
 * keeps once it has held a few of them at a time.
 */
const BATCH_CLICKS = 200;

const HEADER = `${Papa.unparse([[...EXPORT_COLUMNS]], UNPARSE)}\r\n`;

const DECODE: DeserializeOptions = { validation: { utf8: false } };

/** Starts an export: takes a slot (429 when the workspace's are all busy) and returns the CSV stream. */
export async function exportClicks(o: ExportOptions, r: Resolved): Promise<Readable> {
  const slot = await o.slots.acquire(r.workspaceId);
  if ('retryAfterSeconds' in slot) throw new RateLimitedError(slot.retryAfterSeconds);

  const filter: Filter<ClickDoc> = { workspace_id: r.workspaceId, ts: { $gte: new Date(r.start), $lt: new Date(r.end) } };
  if (r.links) filter.link_id = { $in: r.links };
  // Visitor fields stored as such narrow the read; the others are checked on each click.
  const direct: Partial<Record<string, string>> = { country: 'visitor.country', device: 'visitor.device', os: 'visitor.os', browser: 'visitor.browser', visitor_type: 'visitor.visitor_type' };
  if (r.visitor && direct[r.visitor.dim]) (filter as Record<string, unknown>)[direct[r.visitor.dim]!] = { $in: [...r.visitor.values] };
  const linkSet = r.links ? new Set(r.links) : null;
  // One cursor over the workspace_time index, walked in time order: no re-query, no skip.
  // Raw: a batch arrives as the BSON of its clicks, each decoded right before its row is built, so that the decoded
  // objects die young instead of a whole batch of them waiting while the socket takes its chunks. The clicks were
  // written by our own code, UTF-8 by construction: not validating it again saves a pass over every long string.
  const cursor = o.clicks.find(filter, { batchSize: o.batchSize ?? BATCH_CLICKS, raw: true }).sort({ ts: 1 }) as unknown as FindCursor<Uint8Array>;

  const renew = setInterval(() => void slot.renew().catch((error: unknown) => o.logger.warn({ err: error }, 'export slot not renewed')), LEASE_MS / 3);
  renew.unref();
  const cells = new CsvCells();
  async function* chunks(): AsyncGenerator<string> {
    let more: Promise<boolean> | undefined;
    try {
      yield HEADER;
      more = cursor.hasNext();
      while (await more) {
        const batch = cursor.readBufferedDocuments();
        more = cursor.hasNext();
        let chunk = '';
        let rows = 0;
        for (const bytes of batch) {
          // The row's fields read from the bytes (export-bson.ts); a whole click the generic way when a visitor filter
          // needs all of it, or the reader does not know what the click holds.
          const doc = (r.visitor ? null : readRowClick(bytes)) ?? (deserialize(bytes, DECODE) as ClickDoc);
          if (!matches(doc, r, linkSet)) continue;
          chunk += cells.record(row(doc, r.zone));
          if (++rows === CHUNK_ROWS) {
            yield chunk;
            chunk = '';
            rows = 0;
          }
        }
        if (rows > 0) yield chunk;
      }
    } finally {
      // A batch still being fetched (the client went away) is waited for, so that closing the cursor cannot race it.
      await more?.catch(() => false);
      await cursor.close();
    }
  }
  // One chunk waits at most: the next is made when the socket has taken it.
  const csv = Readable.from(chunks(), { objectMode: false, highWaterMark: 1 });
  finished(csv, (error) => {
    clearInterval(renew);
    void slot.release().catch((e: unknown) => o.logger.warn({ err: e }, 'export slot not released; it frees itself when its lease ends'));
    if (error && error.code !== 'ERR_STREAM_PREMATURE_CLOSE') o.logger.warn({ err: error, workspace: r.workspaceId }, 'CSV export ended early');
  });
  return csv;
}
