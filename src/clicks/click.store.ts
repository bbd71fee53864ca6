import { MongoBulkWriteError, MongoServerError, type AnyBulkWriteOperation, type Collection, type Db, type WriteError } from 'mongodb';
import type { ClickRecord } from '../visitor/click-record.ts';

/** The decision taken, with the snake_case field names every stored document and API uses. */
export interface StoredDecision {
  step: ClickRecord['decision']['step'];
  rule_id: string | null;
  workspace_rule: boolean;
  targeting_index: number | null;
  variant_index: number | null;
  destination_id: string | null;
  rotator_fallback: boolean;
}

/** One document per click; `_id` is the click id, so a redelivered message cannot add a second row. */
export interface ClickDoc extends Omit<ClickRecord, 'id' | 'ts' | 'decision'> {
  _id: string;
  ts: Date;
  decision: StoredDecision;
  /** False until the click is in the counters: a batch whose counting failed is counted when it is redelivered. */
  counted: boolean;
  /**
   * True once the click is in the analytics rollups: stored true with the rollup parts in one transaction
   * (RollupWriter.storing), or set true in the transaction of a later rollup (rollups off when it was stored, or the
   * rebuild); absent on clicks stored before the rollups existed.
   */
  rolled_up?: boolean | null;
  /** Conversions attributed to the click (absent until the first), for the CSV export. */
  conversions?: number;
  /** Their revenue per ISO 4217 currency in integer minor units (absent until the first with an amount). */
  revenue?: Record<string, number>;
  /** When the raw click expires (TTL): the workspace plan's raw click retention, at most CLICK_RETENTION_DAYS. */
  expire_at?: Date;
}

type CounterKind = 'destination' | 'destination_day' | 'variant';

/** Click counts the redirect and the A/B automation read: per rotator destination (total, per UTC day), per variant. */
export interface CounterDoc {
  _id: string;
  kind: CounterKind;
  workspace_id: string;
  link_id: string;
  /** The rotator destination id, or the variant index as text. */
  key: string;
  /** `YYYY-MM-DD` (UTC) for daily counts, else null. */
  day: string | null;
  count: number;
  /** Daily rows are only read for today: they expire (TTL) after a while. */
  expire_at?: Date;
}

export interface DestinationCount {
  total: number;
  today: number;
}

const DAILY_RETENTION_MS = 40 * 86_400_000;
/** Clicks per insert: the driver serialises a write at once, and the worker's thread has other work. */
export const INSERT_CHUNK = 1000;

export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** A click's decision under the names stored documents and the API use (a `link.clicked` event's too). */
export function storedDecisionOf(d: ClickRecord['decision']): StoredDecision {
  return {
    step: d.step,
    rule_id: d.ruleId,
    workspace_rule: d.workspaceRule,
    targeting_index: d.targetingIndex,
    variant_index: d.variantIndex,
    destination_id: d.destinationId,
    rotator_fallback: d.rotatorFallback,
  };
}

export function toClickDoc(click: ClickRecord, expireAt?: Date, rolledUp = false): ClickDoc {
  const { id, ts, decision, ...rest } = click;
  const doc: ClickDoc = { _id: id, ts: new Date(ts), ...rest, decision: storedDecisionOf(decision), counted: false, rolled_up: rolledUp };
  if (expireAt) doc.expire_at = expireAt;
  return doc;
}

/** The write errors of a bulk insert when every one is a duplicate id, else null. */
export function duplicateIdErrors(error: unknown): readonly WriteError[] | null {
  if (!(error instanceof MongoBulkWriteError)) return null;
  const writeErrors: readonly WriteError[] = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors as WriteError];
  return writeErrors.length > 0 && writeErrors.every((e) => e.code === 11000) ? writeErrors : null;
}

/**
 * The clicks of a batch that `keep` keeps, each id once, in the batch's order: a batch can hold the same id twice (a
 * publish retried after a lost ack is de-duplicated by JetStream, but only within its window).
 */
export function eachIdOnce(records: readonly ClickRecord[], keep: (record: ClickRecord, index: number) => boolean): ClickRecord[] {
  const seen = new Set<string>();
  return records.filter((record, i) => keep(record, i) && !seen.has(record.id) && (seen.add(record.id), true));
}

function counterId(kind: CounterKind, linkId: string, key: string, day: string | null): string {
  return day === null ? `${linkId}|${kind}|${key}` : `${linkId}|${kind}|${key}|${day}`;
}

export class ClickStore {
  readonly clicks: Collection<ClickDoc>;
  readonly counters: Collection<CounterDoc>;

  constructor(db: Db) {
    this.clicks = db.collection<ClickDoc>('clicks');
    this.counters = db.collection<CounterDoc>('click_counters');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.clicks.createIndexes([
        { key: { workspace_id: 1, ts: -1 }, name: 'workspace_time' },
        { key: { link_id: 1, ts: -1 }, name: 'link_time' },
        // Raw click retention.
        { key: { expire_at: 1 }, name: 'retention_ttl', expireAfterSeconds: 0 },
      ]),
      this.counters.createIndexes([
        { key: { link_id: 1, kind: 1, day: 1 }, name: 'link_kind_day' },
        { key: { expire_at: 1 }, name: 'daily_ttl', expireAfterSeconds: 0 },
      ]),
    ]);
    // Kept by earlier versions for the analytics rebuild: every rolled-up click moved in it (see rebuild.ts).
    await this.clicks.dropIndex('rollup_pending').catch((error: unknown) => {
      if (!(error instanceof MongoServerError && (error.code === 27 || error.code === 26))) throw error;
    });
  }

  /**
   * Inserts the clicks (unordered, so one duplicate does not stop the rest) and returns those still to be counted:
   * the newly inserted ones, and duplicates whose counting had not completed. Any error other than a duplicate id
   * is thrown, and the batch is redelivered.
   */
  async insert(records: readonly ClickRecord[], expiresAt?: (record: ClickRecord) => Date | undefined): Promise<ClickRecord[]> {
    if (records.length === 0) return [];
    const duplicates = new Set<number>();
    for (let start = 0; start < records.length; start += INSERT_CHUNK) {
      try {
        await this.clicks.insertMany(
          records.slice(start, start + INSERT_CHUNK).map((r) => toClickDoc(r, expiresAt?.(r))),
          { ordered: false },
        );
      } catch (error) {
        const writeErrors = duplicateIdErrors(error);
        if (!writeErrors) throw error;
        for (const e of writeErrors) duplicates.add(start + e.index);
      }
    }
    if (duplicates.size === 0) return [...records];
    const dupIds = records.filter((_, i) => duplicates.has(i)).map((r) => r.id);
    const uncounted = new Set((await this.clicks.find({ _id: { $in: dupIds }, counted: false }, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
    // Still to count: stored now, or stored before with their counting not completed.
    return eachIdOnce(records, (record, i) => !duplicates.has(i) || uncounted.has(record.id));
  }

  /** Adds the clicks to the destination and variant counters: one upsert per counter, however many clicks. */
  async count(records: readonly ClickRecord[]): Promise<void> {
    if (records.length === 0) return;
    const increments = new Map<string, { doc: Omit<CounterDoc, 'count'>; n: number }>();
    const add = (kind: CounterKind, record: ClickRecord, key: string, day: string | null) => {
      const _id = counterId(kind, record.link_id, key, day);
      const entry = increments.get(_id);
      if (entry) entry.n++;
      else {
        const doc: Omit<CounterDoc, 'count'> = { _id, kind, workspace_id: record.workspace_id, link_id: record.link_id, key, day };
        if (day !== null) doc.expire_at = new Date(Date.parse(day) + DAILY_RETENTION_MS);
        increments.set(_id, { doc, n: 1 });
      }
    };
    for (const record of records) {
      const { destinationId, variantIndex } = record.decision;
      if (destinationId !== null) {
        add('destination', record, destinationId, null);
        add('destination_day', record, destinationId, record.ts.slice(0, 10));
      }
      if (variantIndex !== null) add('variant', record, String(variantIndex), null);
    }
    if (increments.size > 0) {
      const ops: AnyBulkWriteOperation<CounterDoc>[] = [...increments.values()].map(({ doc, n }) => {
        const { _id, ...fields } = doc;
        return { updateOne: { filter: { _id }, update: { $inc: { count: n }, $set: fields }, upsert: true } };
      });
      await this.counters.bulkWrite(ops, { ordered: false });
    }
  }

  /** Closes the counting of these clicks: a redelivery of them no longer counts them again. */
  async markCounted(records: readonly ClickRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.clicks.updateMany({ _id: { $in: records.map((r) => r.id) } }, { $set: { counted: true } });
  }

  /** Total and today's clicks per rotator destination of each link: link id → destination id → counts. */
  async destinationCounts(linkIds: readonly string[], today: string): Promise<Map<string, Map<string, DestinationCount>>> {
    const result = new Map<string, Map<string, DestinationCount>>();
    if (linkIds.length === 0) return result;
    const docs = await this.counters
      .find({
        link_id: { $in: [...linkIds] },
        $or: [{ kind: 'destination' }, { kind: 'destination_day', day: today }],
      })
      .toArray();
    for (const doc of docs) {
      let perLink = result.get(doc.link_id);
      if (!perLink) result.set(doc.link_id, (perLink = new Map<string, DestinationCount>()));
      let counts = perLink.get(doc.key);
      if (!counts) perLink.set(doc.key, (counts = { total: 0, today: 0 }));
      if (doc.kind === 'destination') counts.total = doc.count;
      else counts.today = doc.count;
    }
    return result;
  }

  /** Clicks per A/B variant index (0 for a variant never chosen). */
  async variantClicks(linkId: string, variants: number): Promise<number[]> {
    const docs = await this.counters.find({ link_id: linkId, kind: 'variant', day: null }).toArray();
    const clicks = Array.from({ length: variants }, () => 0);
    for (const doc of docs) {
      const index = Number(doc.key);
      if (Number.isInteger(index) && index >= 0 && index < variants) clicks[index] = doc.count;
    }
    return clicks;
  }
}
