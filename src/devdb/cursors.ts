// Server-side cursors over materialized results. Batches stop at the requested size or just
// under MongoDB's 16 MiB reply limit; idle cursors are reaped like MongoDB's 10-minute timeout.
import { calculateObjectSize, Long } from 'bson';
import { CommandError } from './errors.ts';
import { toNumber, type Doc } from './values.ts';
import { RawDoc } from './wire.ts';
import { ProjectedDoc, batchArena } from './raw-read.ts';

/** A result: a decoded document, or a stored one sent as its BSON. */
export type Result = Doc | RawDoc;
/** A result as a cursor holds it: also a stored document whose projection is cut when its batch is sent. */
export type Pending = Result | ProjectedDoc;

const MAX_BATCH_BYTES = 16 * 1024 * 1024 - 64 * 1024;
const DEFAULT_FIRST_BATCH = 101;

interface OpenCursor {
  ns: string;
  docs: Pending[];
  pos: number;
  lastUsed: number;
}

export class Cursors {
  private readonly open = new Map<string, OpenCursor>();

  private static take(c: { docs: Pending[]; pos: number }, batchSize: number): Result[] {
    const batch: Result[] = [];
    let bytes = 0;
    // The previous batch was copied into its reply: its projected documents' memory is free again.
    batchArena.reset();
    while (c.pos < c.docs.length && batch.length < batchSize) {
      const pending = c.docs[c.pos]!;
      let doc: Result;
      if (pending instanceof ProjectedDoc) {
        const cut = pending.cutInto(batchArena);
        doc = cut instanceof Uint8Array ? new RawDoc(cut) : cut;
      } else doc = pending;
      bytes += doc instanceof RawDoc ? doc.bytes.length : calculateObjectSize(doc, { ignoreUndefined: true });
      if (batch.length > 0 && bytes > MAX_BATCH_BYTES) break;
      batch.push(doc);
      c.pos++;
    }
    return batch;
  }

  private static newId(): Long {
    // Positive and below 2^53 so it survives any client-side number conversion.
    return Long.fromNumber(Math.floor(Math.random() * 2 ** 52) + 1);
  }

  /** The `cursor` reply of find/aggregate/list*: first batch, and an id when more remain. */
  start(ns: string, docs: Pending[], batchSize: unknown, singleBatch = false): Doc {
    const size = batchSize === undefined || batchSize === null ? DEFAULT_FIRST_BATCH : toNumber(batchSize);
    const state = { docs, pos: 0 };
    const firstBatch = Cursors.take(state, size > 0 ? size : size === 0 && batchSize !== undefined ? 0 : DEFAULT_FIRST_BATCH);
    let id = Long.ZERO;
    if (!singleBatch && state.pos < docs.length) {
      id = Cursors.newId();
      this.open.set(id.toString(), { ns, docs, pos: state.pos, lastUsed: Date.now() });
    }
    return { firstBatch, id, ns };
  }

  more(cursorId: unknown, ns: string, batchSize: unknown): Doc {
    const key = cursorKey(cursorId);
    const c = this.open.get(key);
    if (!c || c.ns !== ns) throw new CommandError('CursorNotFound', `cursor id ${key} not found`);
    const size = batchSize === undefined || toNumber(batchSize) <= 0 ? Infinity : toNumber(batchSize);
    const nextBatch = Cursors.take(c, size);
    c.lastUsed = Date.now();
    const done = c.pos >= c.docs.length;
    if (done) this.open.delete(key);
    return { nextBatch, id: done ? Long.ZERO : Long.fromString(key), ns };
  }

  kill(ids: unknown[]): { killed: Long[]; notFound: Long[] } {
    const killed: Long[] = [];
    const notFound: Long[] = [];
    for (const id of ids) {
      const key = cursorKey(id);
      (this.open.delete(key) ? killed : notFound).push(Long.fromString(key));
    }
    return { killed, notFound };
  }

  reap(idleMs: number, now = Date.now()): void {
    for (const [key, c] of this.open) if (now - c.lastUsed > idleMs) this.open.delete(key);
  }

  get size(): number {
    return this.open.size;
  }

  clear(): void {
    this.open.clear();
  }
}

function cursorKey(id: unknown): string {
  if (id instanceof Long) return id.toString();
  if (typeof id === 'number' || typeof id === 'bigint') return String(id);
  return String(toNumber(id));
}
