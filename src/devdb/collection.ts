// A committed collection: documents keyed by canonical `_id`, plus secondary indexes. A stored document is its
// BSON bytes (what the journal writes and a find sends unchanged), decoded when a query reads it; the indexes hold
// only keys. Every mutation replaces the Entry object (never changes stored bytes), so open cursors and transaction
// overlays can hold references safely.
import type { Binary } from 'bson';
import { UUID } from 'bson';
import { CommandError } from './errors.ts';
import { defaultIndexName, formatKeyValue, Index, sameOptions, type IndexSpec, type Key } from './indexes.ts';
import { orderedPlan, plan, rangePlan, type OrderedPlan } from './planner.ts';
import { projectRaw, rawProjection, rawStringId } from './raw-read.ts';
import { BytesCache, Segment } from './storage.ts';
import { snapshots, trimHistory, type Superseded, type Versioned } from './snapshots.ts';
import { decodeDoc, decodeView, encodeDoc, keyOf, promoteDoc, type Doc } from './values.ts';

/**
 * Recently read views, so that hot documents (a link listed again and again, a counter updated by every batch) are
 * not decoded on every read. Two generations bounded by the stored bytes of their documents: reads fill the young
 * one; when it is full it becomes the old one and the previous old one is dropped; a hit in the old generation moves
 * the view back to the young one. Every step is O(1) (a least-recently-used list kept in one Map must skip the holes
 * its deletions leave at the front, which cost more than the decoding it saves).
 */
class ViewCache {
  private young = new Map<Entry, Doc>();
  private old = new Map<Entry, Doc>();
  private youngBytes = 0;
  private readonly generationBytes: number;
  constructor(maxBytes: number) {
    this.generationBytes = maxBytes / 2;
  }
  get(entry: Entry): Doc {
    const hit = this.young.get(entry);
    if (hit !== undefined) return hit;
    const view = this.old.get(entry) ?? decodeView(entry.raw);
    this.young.set(entry, view);
    this.youngBytes += entry.size;
    if (this.youngBytes > this.generationBytes) {
      this.old = this.young;
      this.young = new Map();
      this.youngBytes = 0;
    }
    return view;
  }
}

const views = new ViewCache(8 * 1024 * 1024);

/** The bytes of stored versions lately read or written (storage.ts); DevDbOptions.cacheMb sets its size. */
const hot = new BytesCache<Entry>(64 * 1024 * 1024);

/** Sets the size of the cache of stored documents' bytes (storage.ts), dropping what it holds. */
export function setBytesCacheSize(bytes: number): void {
  hot.resize(bytes);
}

export class Entry {
  readonly id: string;
  /** Global write sequence at which this version was stored; transactions detect conflicts with it. */
  readonly version: number;
  /** The length of the document's BSON. */
  readonly size: number;
  /** The BSON itself until the version is in the journal; then the journal file that holds it, at `offset`. */
  private store: Uint8Array | Segment;
  private offset: number;
  /**
   * An earlier stored version whose index keys this one shares (a raw update that changed no indexed field, see
   * raw-update.ts): replacing that version by this one leaves every index as it is.
   */
  sameKeysAs: Entry | undefined;
  /** The view of a document not yet in its collection's indexes (they are built from it); dropped once it is. */
  private fresh: Doc | undefined;

  constructor(id: string, raw: Uint8Array, version: number, fresh?: Doc, sameKeysAs?: Entry) {
    this.id = id;
    this.version = version;
    this.size = raw.length;
    this.store = raw;
    this.offset = 0;
    this.fresh = fresh;
    this.sameKeysAs = sameKeysAs;
  }

  /** A version read from the journal: `size` bytes at `offset` of `segment`, not read until asked for. */
  static stored(id: string, segment: Segment, offset: number, size: number): Entry {
    const entry = new Entry(id, EMPTY, ++sequence);
    (entry as { size: number }).size = size;
    entry.store = segment;
    entry.offset = offset;
    return entry;
  }

  /** The document as BSON: shared, never to be changed. */
  get raw(): Uint8Array {
    const store = this.store;
    if (!(store instanceof Segment)) return store;
    let bytes = hot.get(this);
    if (bytes === undefined) {
      bytes = store.read(this.offset, this.size);
      hot.set(this, bytes);
    }
    return bytes;
  }

  /** The BSON without passing through the cache: a pass over every document (index builds, compaction). */
  rawUncached(): Uint8Array {
    const store = this.store;
    if (!(store instanceof Segment)) return store;
    return hot.get(this) ?? store.read(this.offset, this.size);
  }

  /** The version is now at `offset` of the journal file `segment`: its bytes are read from there when not cached. */
  placed(segment: Segment, offset: number): void {
    const store = this.store;
    if (!(store instanceof Segment)) hot.set(this, store);
    this.store = segment;
    this.offset = offset;
  }

  /** The stored document with its BSON numeric wrappers (Long, integral Double, Decimal128): a private copy. */
  get doc(): Doc {
    return decodeDoc(this.raw);
  }

  /** The document with every number promoted, as queries see it. Shared: never to be changed. */
  get view(): Doc {
    return this.fresh ?? views.get(this);
  }

  /** The document's `_id` as queries see it (a string `_id` without reading the document). */
  get idValue(): unknown {
    return this.id.startsWith('"') ? (JSON.parse(this.id) as string) : this.view._id;
  }

  /** The same document at a new place in the write sequence (a transaction's write, as it commits). */
  restamp(): Entry {
    return new Entry(this.id, this.raw, ++sequence, this.fresh);
  }

  /** Called once the entry is indexed: its view is read from the bytes (or the cache) from now on. */
  settle(): void {
    this.fresh = undefined;
  }
}

const EMPTY = new Uint8Array(0);

let sequence = 0;

export function currentSequence(): number {
  return sequence;
}

/** MongoDB's largest user document (BSONObjMaxUserSize): a larger one is refused, never stored. */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

/**
 * A document over MAX_DOCUMENT_BYTES. The write commands turn it into the error MongoDB answers for that write
 * (an insert's BadValue, an update's BSONObjectTooLarge, an upsert's 17420); anywhere else it is BSONObjectTooLarge.
 */
export class DocumentTooLarge extends CommandError {
  readonly size: number | undefined;
  constructor(size: number | undefined) {
    super('BSONObjectTooLarge', `BSONObj size: ${size ?? 'more than 17825792'} is invalid. Size must be between 0 and ${MAX_DOCUMENT_BYTES}(16MB)`);
    this.size = size;
  }
}

/**
 * A document's BSON, refusing one MongoDB could not store. bson encodes into a 17 MiB buffer: past it, it either
 * throws a RangeError or returns bytes cut short, so the length is checked before the bytes are trusted.
 */
function encodeChecked(doc: Doc): Uint8Array {
  let raw: Uint8Array;
  try {
    raw = encodeDoc(doc);
  } catch (err) {
    if (err instanceof RangeError) throw new DocumentTooLarge(undefined);
    throw err;
  }
  if (raw.length > MAX_DOCUMENT_BYTES) throw new DocumentTooLarge(raw.length);
  return raw;
}

export function makeEntry(doc: Doc): Entry {
  const view = promoteDoc(doc);
  return new Entry(keyOf(view._id), encodeChecked(doc), ++sequence, view);
}

/**
 * The next version of `old` from the bytes of a raw update that changed only the top-level `fields`. When none of
 * `indexes` reads them, the entry shares `old`'s index keys and is never decoded for them; else its view is decoded
 * for the indexes to use.
 */
export function rawEntry(old: Entry, raw: Uint8Array, fields: ReadonlySet<string>, indexes: readonly Index[]): Entry {
  if (raw.length > MAX_DOCUMENT_BYTES) throw new DocumentTooLarge(raw.length);
  const base = old.sameKeysAs ?? old;
  if (!indexes.some((i) => i.reads(fields))) return new Entry(old.id, raw, ++sequence, undefined, base);
  return new Entry(old.id, raw, ++sequence, decodeView(raw));
}

/**
 * The canonical `_id` of stored BSON bytes (read from the journal), which are not kept: a string `_id` is read from
 * the bytes; the document is decoded only for any other.
 */
export function idOfBytes(raw: Uint8Array): string {
  const id = rawStringId(raw);
  return id === undefined ? keyOf(decodeView(raw)._id) : keyOf(id);
}

/** Candidates in a sort's order; `covered`: each of them matches the filter (the index walk answered all of it). */
export interface OrderedEntries {
  entries: Iterable<Entry>;
  covered: boolean;
}

/** What both a committed collection and a transaction's overlay offer to the commands. */
export interface DocSet {
  readonly ns: string;
  /** Documents held, when known without counting them (a committed collection). */
  readonly size?: number;
  get(id: string): Entry | undefined;
  candidates(filter: Doc | undefined): Iterable<Entry>;
  /** Candidates already in `sort`'s order, walking an index, or undefined when no index gives that order. */
  ordered?(filter: Doc | undefined, sort: Doc): OrderedEntries | undefined;
  insert(doc: Doc): Entry;
  replace(old: Entry, doc: Doc): Entry;
  /** Replaces `old` by the result of a raw update (raw-update.ts) that changed only the top-level `fields`. */
  replaceRaw(old: Entry, raw: Uint8Array, fields: ReadonlySet<string>): Entry;
  remove(old: Entry): void;
  /** Claims a matched document for writing even when the write turns out to be a no-op. */
  claim(entry: Entry): void;
}

export function idDuplicateError(ns: string, entry: Entry): CommandError {
  return new CommandError('DuplicateKey', `E11000 duplicate key error collection: ${ns} index: _id_ dup key: { _id: ${formatKeyValue(entry.view._id)} }`, {
    keyPattern: { _id: 1 },
    keyValue: { _id: entry.doc._id },
  });
}

/** A change to one collection, as the persistence journal records it. */
export type CollectionChange =
  | { kind: 'put'; entry: Entry; replaced?: Entry }
  | { kind: 'del'; entry: Entry }
  | { kind: 'createIndex'; spec: IndexSpec }
  | { kind: 'dropIndex'; name: string };

export const ID_INDEX_SPEC: IndexSpec = { v: 2, key: { _id: 1 }, name: '_id_' };

export class Collection implements Versioned {
  readonly db: string;
  readonly name: string;
  readonly uuid: Binary;
  readonly docs = new Map<string, Entry>();
  readonly indexes: Index[] = [];
  /** `_id` in order, for ranges and sorts on it (the `docs` Map answers equalities). */
  private readonly idIndex = new Index(ID_INDEX_SPEC);
  /** While a journal replays: documents come and go without index upkeep, and buildIndexes then builds them all. */
  private deferred = false;
  private readonly changed: (change: CollectionChange) => void;

  /** Versions replaced or removed while a snapshot read is in use (snapshots.ts). */
  private superseded: Superseded[] = [];

  constructor(db: string, name: string, changed: (change: CollectionChange) => void, uuid?: Binary) {
    this.db = db;
    this.name = name;
    this.changed = (change) => {
      if (snapshots.recording()) {
        const gone = change.kind === 'del' ? change.entry : change.kind === 'put' ? change.replaced : undefined;
        // A step of the write sequence of its own: a snapshot taken before it still sees the version.
        if (gone) this.superseded.push({ entry: gone, until: ++sequence });
      } else if (this.superseded.length > 0) this.superseded = [];
      changed(change);
    };
    this.uuid = uuid ?? new UUID().toBinary();
  }

  get ns(): string {
    return `${this.db}.${this.name}`;
  }

  get size(): number {
    return this.docs.size;
  }

  history(): readonly Superseded[] {
    if (this.superseded.length > 0) this.superseded = trimHistory(this.superseded);
    return this.superseded;
  }

  get(id: string): Entry | undefined {
    return this.docs.get(id);
  }

  *candidates(filter: Doc | undefined): Iterable<Entry> {
    const p = plan(filter, this.indexes);
    if (p.kind === 'scan') {
      const r = rangePlan(filter, [this.idIndex, ...this.indexes]);
      if (!r) {
        yield* this.docs.values();
        return;
      }
      yield* this.walkRange(r);
      return;
    }
    if (p.kind === 'range') {
      yield* this.walkRange(p.range);
      return;
    }
    const seen = new Set<string>();
    const ids = p.kind === 'ids' ? p.ids : p.lookups.length === 1 ? p.index.owners(p.lookups[0]!) : p.lookups.flatMap((values) => [...p.index.owners(values)]);
    for (const id of ids) {
      if (seen.has(id)) continue;
      seen.add(id);
      const e = this.docs.get(id);
      if (e) yield e;
    }
  }

  private *walkRange(r: OrderedPlan): Iterable<Entry> {
    const seen = r.index.multikey ? new Set<string>() : undefined;
    for (const id of r.index.walk(r.prefix, r.reverse, r.start, r.stop)) {
      if (seen) {
        if (seen.has(id)) continue;
        seen.add(id);
      }
      const e = this.docs.get(id);
      if (e) yield e;
    }
  }

  ordered(filter: Doc | undefined, sort: Doc): OrderedEntries | undefined {
    const p = orderedPlan(filter, sort, [...this.indexes, this.idIndex]);
    if (!p) return undefined;
    const docs = this.docs;
    const entries = (function* () {
      for (const id of p.index.walk(p.prefix, p.reverse, p.start, p.stop, p.after)) {
        const e = docs.get(id);
        if (e) yield e;
      }
    })();
    return { entries, covered: p.covered === true };
  }

  /** Throws the duplicate key error `entry` would cause; `isOther` decides which owners count. */
  checkUnique(entry: Entry, isOther: (id: string) => boolean = () => true, extra?: (index: Index, key: string) => boolean): void {
    for (const index of this.indexes) {
      const err = index.findDuplicate(this.ns, entry.id, entry.view, isOther, extra && ((key) => extra(index, key)));
      if (err) throw err;
    }
  }

  idDuplicate(entry: Entry): CommandError {
    return idDuplicateError(this.ns, entry);
  }

  insert(doc: Doc): Entry {
    const entry = makeEntry(doc);
    if (this.docs.has(entry.id)) throw this.idDuplicate(entry);
    this.checkUnique(entry);
    this.attach(entry);
    return entry;
  }

  replace(old: Entry, doc: Doc): Entry {
    const entry = makeEntry(doc);
    this.checkUnique(entry);
    this.detach(old);
    this.attach(entry);
    return entry;
  }

  replaceRaw(old: Entry, raw: Uint8Array, fields: ReadonlySet<string>): Entry {
    const entry = rawEntry(old, raw, fields, this.indexes);
    if (entry.sameKeysAs === undefined) return this.replaceIndexed(old, entry, fields);
    this.swap(old, entry);
    return entry;
  }

  /** Stores `next` in place of `old` when they have the same index keys (`next.sameKeysAs`): no index changes. */
  swap(old: Entry, next: Entry): void {
    // Stored: the earlier version is not needed any more (and must not be kept alive by this one).
    next.sameKeysAs = undefined;
    this.docs.set(next.id, next);
    this.changed({ kind: 'put', entry: next, replaced: old });
  }

  /** Replaces `old` by `next`, re-keying only the indexes that read one of `fields`. */
  private replaceIndexed(old: Entry, next: Entry, fields: ReadonlySet<string>): Entry {
    this.checkUnique(next);
    const oldView = old.view;
    const view = next.view;
    this.docs.set(next.id, next);
    for (const index of this.indexes) {
      if (!index.reads(fields)) continue;
      index.remove(old.id, oldView);
      index.add(next.id, view);
    }
    next.settle();
    this.changed({ kind: 'put', entry: next, replaced: old });
    return next;
  }

  claim(_entry: Entry): void {
    // Outside transactions every statement is atomic on its own: nothing to claim.
  }

  remove(old: Entry): void {
    if (this.docs.get(old.id) !== undefined) this.detach(this.docs.get(old.id)!);
  }

  /**
   * From now until buildIndexes, attach and detach leave the indexes alone and createIndex does not fill the new
   * index: a journal's replay (its documents were checked when they were written).
   */
  deferIndexes(): void {
    this.deferred = true;
  }

  /**
   * Builds every index from the documents at once: each document decoded once, to only the fields the indexes read,
   * and each index's keys sorted and loaded bottom-up. Inserting a million documents' keys one by one into five
   * trees was most of a replay's time.
   */
  buildIndexes(): void {
    if (!this.deferred) return;
    this.deferred = false;
    const indexes = [this.idIndex, ...this.indexes];
    // Whole top-level fields: the indexes' paths may go through arrays, which a projection must not cut.
    const read = indexes.map((index) => index.topFields());
    const projection = read.every((f) => f !== undefined) ? rawProjection(Object.fromEntries(read.flat().map((f) => [f, 1]))) : undefined;
    const keys = indexes.map((): Key[] => []);
    const takers = keys.map((list) => (key: Key) => list.push(key));
    for (const entry of this.docs.values()) {
      const raw = entry.rawUncached();
      const projected = projection && projectRaw(raw, projection);
      const view = decodeView(projected ?? raw);
      for (let i = 0; i < indexes.length; i++) indexes[i]!.keysOf(entry.id, view, takers[i]!);
    }
    for (let i = 0; i < indexes.length; i++) indexes[i]!.load(keys[i]!);
  }

  /** Adds an entry without checks: loading from disk and undoing a failed commit. */
  attach(entry: Entry): void {
    if (this.deferred) {
      this.docs.set(entry.id, entry);
      entry.settle();
      this.changed({ kind: 'put', entry });
      return;
    }
    const view = entry.view;
    this.docs.set(entry.id, entry);
    this.idIndex.add(entry.id, view);
    for (const index of this.indexes) index.add(entry.id, view);
    entry.settle();
    this.changed({ kind: 'put', entry });
  }

  detach(entry: Entry): void {
    if (this.deferred) {
      this.docs.delete(entry.id);
      this.changed({ kind: 'del', entry });
      return;
    }
    const view = entry.view;
    this.docs.delete(entry.id);
    this.idIndex.remove(entry.id, view);
    for (const index of this.indexes) index.remove(entry.id, view);
    this.changed({ kind: 'del', entry });
  }

  indexSpecs(): IndexSpec[] {
    return [ID_INDEX_SPEC, ...this.indexes.map((i) => i.spec)];
  }

  /** Returns false when an identical index already exists (a no-op, like MongoDB). */
  createIndex(requested: IndexSpec): boolean {
    const spec: IndexSpec = { v: 2, ...requested, name: requested.name || defaultIndexName(requested.key) };
    const sameKey = (a: IndexSpec) => keyOf(a.key) === keyOf(spec.key);
    for (const existing of this.indexSpecs()) {
      if (existing.name === spec.name) {
        if (!sameKey(existing)) {
          throw new CommandError('IndexKeySpecsConflict', `An existing index has the same name as the requested index. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(existing)}`);
        }
        if (existing.name === '_id_' || sameOptions(existing, spec)) return false;
        throw new CommandError('IndexOptionsConflict', `An equivalent index already exists with the same name but different options. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(existing)}`);
      }
      if (sameKey(existing) && sameOptions(existing, spec)) {
        throw new CommandError('IndexOptionsConflict', `Index already exists with a different name: ${existing.name}`);
      }
    }
    const index = new Index(spec);
    if (this.deferred) {
      this.indexes.push(index);
      this.changed({ kind: 'createIndex', spec });
      return true;
    }
    const docs = this.docs;
    const dup = index.firstDuplicateKey(
      this.ns,
      (function* () {
        for (const e of docs.values()) yield [e.id, e.view] as [string, Doc];
      })(),
    );
    if (dup) throw dup;
    for (const e of this.docs.values()) index.add(e.id, e.view);
    this.indexes.push(index);
    this.changed({ kind: 'createIndex', spec });
    return true;
  }

  dropIndex(name: string): void {
    if (name === '_id_') throw new CommandError('InvalidOptions', 'cannot drop _id index');
    const i = this.indexes.findIndex((x) => x.spec.name === name);
    if (i < 0) throw new CommandError('IndexNotFound', `index not found with name [${name}]`);
    this.indexes.splice(i, 1);
    this.changed({ kind: 'dropIndex', name });
  }

  findIndexByKey(key: Doc): Index | undefined {
    return this.indexes.find((i) => keyOf(i.spec.key) === keyOf(key));
  }
}

