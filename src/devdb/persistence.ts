// devdb's durability: an append-only journal of the catalog's changes, so the cost of a write is the size of the
// change, not of the collection.
//
// File: dataDir/journal-<generation>.lpj, a sequence of records. A record is
//   u32 LE body length | u32 LE CRC-32 of the body | body
// and its body is the group of operations committed together (the writes of one event-loop turn, a whole
// transaction commit, one TTL sweep): each operation is a u8 kind, a BSON header {db, c, ...} and, for `put`, the
// document's BSON. A record is applied whole or not at all: at start the journal is replayed up to the first
// record that runs past the end of the file or whose checksum does not match (a write torn by a crash); the file
// is cut there (the cut bytes are kept aside in a `.torn-<time>` file) so new records follow the last good one.
//
// Group commit: operations are buffered as they happen; the wire server calls commit() once per event-loop turn,
// before it sends that turn's replies, so every acknowledged write is in the file first.
// fsync policy: commit() hands the record to the operating system (write(2)) before any reply is sent, which is
// enough to survive a crash or SIGKILL of the process. 'interval' (the default) then fdatasyncs at most every
// 100 ms, like MongoDB's journal (commitIntervalMs): a power loss or kernel crash can lose the last 100 ms of
// acknowledged writes. 'always' fdatasyncs in every commit, before the replies.
//
// Compaction: when the journal holds more than twice the live data (and at least compactMinBytes), a new
// generation is written in the background: a snapshot of the catalog taken at one instant (stored documents are
// never mutated, so holding the entries is enough), serialized a slice per event-loop turn while writes go on,
// then the records committed meanwhile; once complete and fsynced it replaces the old file by rename.
//
// Replay fills the collections without index upkeep, then builds each index at once (Collection.buildIndexes):
// 1 M clicks took 42 s to load one key at a time into five trees, and 19 s so.
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { Binary, deserialize, serialize } from 'bson';
import type { Catalog, Change } from './catalog.ts';
import { Entry, idOfBytes, makeEntry, type Collection } from './collection.ts';
import type { IndexSpec } from './indexes.ts';
import type { Logger } from './server.ts';
import { Segment } from './storage.ts';
import { keyOf, normalizeIncoming, promote, type Doc } from './values.ts';

export type FsyncPolicy = 'always' | 'interval';

const fdatasyncOnPool = promisify(fs.fdatasync);
/** Compaction's catch-up: rounds of writing and flushing what was committed meanwhile, until less than this is left. */
const CATCH_UP_ROUNDS = 8;
const CATCH_UP_BYTES = 4 * 1024 * 1024;

export interface JournalOptions {
  /** When acknowledged writes reach the disk itself (see above). Default 'interval'. */
  fsync?: FsyncPolicy;
  fsyncIntervalMs?: number;
  /** The journal is never compacted below this size. Default 16 MiB. */
  compactMinBytes?: number;
}

export interface JournalStats {
  generation: number;
  fileBytes: number;
  liveBytes: number;
  compactions: number;
}

const OP_CREATE = 1;
const OP_DROP = 2;
const OP_PUT = 3;
const OP_DEL = 4;
const OP_CREATE_INDEX = 5;
const OP_DROP_INDEX = 6;

const RECORD_HEADER = 8;
/** The buffer a replay reads records into, to start with: the largest record read so far sets its size after. */
const RECORD_BUFFER = 4 * 1024 * 1024;
const SNAPSHOT_SLICE = 2000;
const FILE = /^journal-(\d+)\.lpj$/;
const LEGACY_SUFFIX = '.bson';

function kindByte(kind: number): Buffer {
  return Buffer.of(kind);
}

/** The parts as one record: its length and checksum, then the parts, copied once into the record's own buffer. */
function record(parts: Uint8Array[]): Buffer {
  let length = 0;
  for (const part of parts) length += part.length;
  const rec = Buffer.allocUnsafe(RECORD_HEADER + length);
  let at = RECORD_HEADER;
  for (const part of parts) {
    rec.set(part, at);
    at += part.length;
  }
  rec.writeUInt32LE(length, 0);
  rec.writeUInt32LE(crc32(rec.subarray(RECORD_HEADER)), 4);
  return rec;
}

/**
 * A record and the documents it stores: `entries[i]`'s bytes start `offsets[i]` bytes into the record. Once the
 * record is in a journal file, each entry is pointed at its place there (Entry.placed).
 */
interface Placed {
  rec: Buffer;
  entries: Entry[];
  offsets: number[];
}

/** Points each entry of records written at `start` of `segment`'s file at its bytes there. */
function place(segment: Segment, start: number, entries: readonly Entry[], offsets: readonly number[]): void {
  for (let i = 0; i < entries.length; i++) entries[i]!.placed(segment, start + offsets[i]!);
}

function writeAll(fd: number, buf: Uint8Array): void {
  let off = 0;
  while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off);
}

/** The document at `offset`, and where the next starts. `copied`: decoded from a copy, so that nothing decoded is a view
 * of `buf` (bson decodes a Binary, a collection's uuid, as one), which may then be used again. */
function readDoc(buf: Buffer, offset: number, copied = false): [Doc, number] {
  const size = buf.readInt32LE(offset);
  if (size < 5 || offset + size > buf.length) throw new Error(`corrupt document at byte ${offset}`);
  const bytes = buf.subarray(offset, offset + size);
  return [normalizeIncoming(deserialize(copied ? Buffer.from(bytes) : bytes, { promoteValues: false })) as Doc, offset + size];
}

function nsKey(db: string, coll: string): string {
  return `${db}\u0000${coll}`;
}

/** A collection the replay writes to: its indexes are built once the whole journal is applied (buildIndexes). */
function replayed(catalog: Catalog, db: string, name: string): Collection {
  const coll = catalog.getOrCreate(db, name);
  coll.deferIndexes();
  return coll;
}

export class Persistence {
  private readonly dir: string;
  private readonly log: Logger;
  private readonly policy: FsyncPolicy;
  private readonly compactMinBytes: number;
  private catalog: Catalog | undefined;
  private fd = -1;
  private generation = 0;
  private fileBytes = 0;
  private compactions = 0;
  private replaying = false;
  private closed = false;
  private unsynced = false;
  private syncing = false;
  private readonly closeAfterSync: number[] = [];
  private pending: Uint8Array[] = [];
  /** The body length of the pending record, and the documents in it with their offsets in the record. */
  private pendingBytes = 0;
  private pendingEntries: Entry[] = [];
  private pendingOffsets: number[] = [];
  /** The journal file being appended to, read back for the documents it holds (storage.ts). */
  private segment: Segment | undefined;
  /** Serialized size of the live documents per collection. */
  private readonly live = new Map<string, number>();
  private readonly headers = new Map<string, Uint8Array>();
  private readonly replayHeaders = new Map<string, Doc>();
  private compaction: { tail: Placed[]; done: Promise<void> } | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(dir: string, log: Logger, options: JournalOptions = {}) {
    this.dir = dir;
    this.log = log;
    this.policy = options.fsync ?? 'interval';
    this.compactMinBytes = options.compactMinBytes ?? 16 * 1024 * 1024;
    this.timer = setInterval(() => this.tick(), options.fsyncIntervalMs ?? 100);
    this.timer.unref();
  }

  private fileFor(generation: number): string {
    return path.join(this.dir, `journal-${String(generation).padStart(6, '0')}.lpj`);
  }

  stats(): JournalStats {
    return { generation: this.generation, fileBytes: this.fileBytes, liveBytes: this.liveBytes(), compactions: this.compactions };
  }

  private liveBytes(): number {
    let n = 0;
    for (const v of this.live.values()) n += v;
    return n;
  }

  /** Replays the newest journal into `catalog`, then records its changes. */
  load(catalog: Catalog): void {
    this.catalog = catalog;
    fs.mkdirSync(this.dir, { recursive: true });
    const generations: number[] = [];
    for (const name of fs.readdirSync(this.dir)) {
      const m = FILE.exec(name);
      if (m) generations.push(Number(m[1]));
      // An unfinished compaction: the journal it was replacing is still there and complete.
      else if (name.endsWith('.lpj.tmp')) fs.rmSync(path.join(this.dir, name), { force: true });
    }
    generations.sort((a, b) => a - b);
    const newest = generations.at(-1);
    const started = performance.now();
    const cpu = process.threadCpuUsage();
    this.replaying = true;
    try {
      if (newest === undefined) {
        const legacy = this.loadLegacy(catalog);
        this.generation = 1;
        this.writeSnapshotSync(this.fileFor(1));
        for (const file of legacy) fs.rmSync(file, { force: true });
      } else {
        this.generation = newest;
        this.segment = this.replay(this.fileFor(newest));
        for (const coll of catalog.all()) coll.buildIndexes();
        // Superseded by `newest`, which is only ever renamed into place once complete.
        for (const g of generations.slice(0, -1)) fs.rmSync(this.fileFor(g), { force: true });
      }
    } finally {
      this.replaying = false;
      this.replayHeaders.clear();
    }
    this.fd = fs.openSync(this.fileFor(this.generation), 'a');
    this.fileBytes = fs.fstatSync(this.fd).size;
    const documents = catalog.all().reduce((n, c) => n + c.size, 0);
    const used = process.threadCpuUsage(cpu);
    // The thread's CPU time beside the elapsed time: on a busy machine the two differ by the time spent waiting.
    this.log('devdb: journal replayed', { ms: Math.round(performance.now() - started), cpuMs: Math.round((used.user + used.system) / 1000), journalBytes: this.fileBytes, documents, liveBytes: this.liveBytes() });
  }

  /** Applies the journal `file`; its documents stay in it and are read from the Segment returned. */
  private replay(file: string): Segment {
    const segment = new Segment(file);
    const fd = fs.openSync(file, 'r+');
    try {
      const size = fs.fstatSync(fd).size;
      const header = Buffer.alloc(RECORD_HEADER);
      // One buffer for every record, grown for the largest: nothing applied keeps a view of it (see apply). A buffer
      // per record made V8 count megabytes of new memory outside its heap per record, and start a collection of the
      // whole heap for every 64 MB or so of them: 46 of them while 5 M stored clicks were replayed.
      let buffer = Buffer.allocUnsafeSlow(RECORD_BUFFER);
      let offset = 0;
      let reason: string | undefined;
      while (offset < size) {
        if (offset + RECORD_HEADER > size) {
          reason = 'incomplete record header';
          break;
        }
        fs.readSync(fd, header, 0, RECORD_HEADER, offset);
        const length = header.readUInt32LE(0);
        if (offset + RECORD_HEADER + length > size) {
          reason = 'record runs past the end of the file';
          break;
        }
        if (length > buffer.length) buffer = Buffer.allocUnsafeSlow(Math.max(length, 2 * buffer.length));
        const body = buffer.subarray(0, length);
        fs.readSync(fd, body, 0, length, offset + RECORD_HEADER);
        if (crc32(body) !== header.readUInt32LE(4)) {
          reason = 'checksum mismatch';
          break;
        }
        this.apply(body, segment, offset + RECORD_HEADER);
        offset += RECORD_HEADER + length;
      }
      if (reason !== undefined) {
        const torn = Buffer.alloc(size - offset);
        fs.readSync(fd, torn, 0, torn.length, offset);
        const aside = `${file}.torn-${Date.now()}`;
        fs.writeFileSync(aside, torn);
        fs.ftruncateSync(fd, offset);
        fs.fsyncSync(fd);
        this.log('devdb: dropped a torn record at the end of the journal (a write cut short by a crash)', { file, offset, bytes: torn.length, reason, keptIn: aside });
      }
    } finally {
      fs.closeSync(fd);
    }
    return segment;
  }

  /** A put's `{db, c}` header, decoded once per collection rather than once per document replayed. */
  private readHeader(body: Buffer, offset: number): [Doc, number] {
    const size = body.readInt32LE(offset);
    if (size < 5 || offset + size > body.length) return readDoc(body, offset);
    const bytes = body.toString('latin1', offset, offset + size);
    let h = this.replayHeaders.get(bytes);
    if (!h) {
      h = readDoc(body, offset)[0];
      this.replayHeaders.set(bytes, h);
    }
    return [h, offset + size];
  }

  /**
   * Applies one record's operations to the catalog; the record's body is at `start` of `segment`'s file. Its
   * collections build their indexes once all are applied.
   */
  private apply(body: Buffer, segment: Segment, start: number): void {
    const catalog = this.catalog!;
    let offset = 0;
    while (offset < body.length) {
      const kind = body[offset++]!;
      // The record's buffer is used again for the next one: what is kept of it is copied (the id of a put, as a
      // string; the other operations decoded from a copy).
      const [h, next] = kind === OP_PUT ? this.readHeader(body, offset) : readDoc(body, offset, true);
      offset = next;
      const db = h.db as string;
      const name = h.c as string;
      const ns = nsKey(db, name);
      switch (kind) {
        case OP_CREATE:
          catalog.create(db, name, h.uuid instanceof Binary ? h.uuid : undefined).deferIndexes();
          this.live.set(ns, 0);
          break;
        case OP_DROP:
          catalog.drop(db, name);
          this.live.delete(ns);
          break;
        case OP_PUT: {
          const size = body.length - offset >= 5 ? body.readInt32LE(offset) : 0;
          if (size < 5 || offset + size > body.length) throw new Error(`corrupt document at byte ${offset}`);
          // The bytes stay in the file: the entry is read from there when needed.
          const entry = Entry.stored(idOfBytes(body.subarray(offset, offset + size)), segment, start + offset, size);
          offset += size;
          const coll = replayed(catalog, db, name);
          const old = coll.get(entry.id);
          if (old) {
            coll.detach(old);
            this.live.set(ns, (this.live.get(ns) ?? 0) - old.size);
          }
          coll.attach(entry);
          this.live.set(ns, (this.live.get(ns) ?? 0) + size);
          break;
        }
        case OP_DEL: {
          const coll = catalog.get(db, name);
          const old = coll?.get(keyOf(promote(h.id)));
          if (coll && old) {
            coll.detach(old);
            this.live.set(ns, (this.live.get(ns) ?? 0) - old.size);
          }
          break;
        }
        case OP_CREATE_INDEX:
          replayed(catalog, db, name).createIndex(h.spec as IndexSpec);
          break;
        case OP_DROP_INDEX:
          catalog.get(db, name)?.dropIndex(h.name as string);
          break;
        default:
          throw new Error(`unknown journal operation ${kind}`);
      }
    }
  }

  /** The previous format: one `<db>/<collection>.bson` per collection. Returns the files read. */
  private loadLegacy(catalog: Catalog): string[] {
    const files: string[] = [];
    for (const dbDir of fs.readdirSync(this.dir, { withFileTypes: true })) {
      if (!dbDir.isDirectory()) continue;
      const db = decodeURIComponent(dbDir.name);
      for (const file of fs.readdirSync(path.join(this.dir, dbDir.name))) {
        if (!file.endsWith(LEGACY_SUFFIX)) continue;
        const full = path.join(this.dir, dbDir.name, file);
        const buf = fs.readFileSync(full);
        const docs: Doc[] = [];
        for (let offset = 0; offset + 4 <= buf.length; ) {
          const [doc, next] = readDoc(buf, offset);
          docs.push(doc);
          offset = next;
        }
        const [header, ...rest] = docs;
        const coll = catalog.create(db, decodeURIComponent(file.slice(0, -LEGACY_SUFFIX.length)), header?.uuid instanceof Binary ? header.uuid : undefined);
        for (const spec of (header?.indexes as IndexSpec[] | undefined) ?? []) coll.createIndex(spec);
        for (const doc of rest) coll.attach(makeEntry(doc));
        files.push(full);
      }
    }
    if (files.length > 0) this.log('devdb: converted the data folder to the journal format', { collections: files.length });
    return files;
  }

  private header(db: string, coll: string): Uint8Array {
    const key = nsKey(db, coll);
    let h = this.headers.get(key);
    if (!h) {
      h = serialize({ db, c: coll });
      if (this.headers.size > 10_000) this.headers.clear();
      this.headers.set(key, h);
    }
    return h;
  }

  /** Called by the catalog for every change; buffered until the next commit(). */
  record(change: Change): void {
    if (this.replaying || this.closed) return;
    const { db, coll } = change;
    const ns = nsKey(db, coll);
    switch (change.kind) {
      case 'create':
        this.live.set(ns, 0);
        this.push(kindByte(OP_CREATE), serialize({ db, c: coll, uuid: change.uuid }));
        break;
      case 'drop':
        this.live.delete(ns);
        this.push(kindByte(OP_DROP), this.header(db, coll));
        break;
      case 'put': {
        const doc = change.entry.raw;
        this.live.set(ns, (this.live.get(ns) ?? 0) + doc.length - (change.replaced?.size ?? 0));
        this.push(kindByte(OP_PUT), this.header(db, coll));
        this.pendingEntries.push(change.entry);
        this.pendingOffsets.push(RECORD_HEADER + this.pendingBytes);
        this.push(doc);
        break;
      }
      case 'del':
        this.live.set(ns, (this.live.get(ns) ?? 0) - change.entry.size);
        this.push(kindByte(OP_DEL), serialize({ db, c: coll, id: change.entry.idValue }));
        break;
      case 'createIndex':
        this.push(kindByte(OP_CREATE_INDEX), serialize({ db, c: coll, spec: change.spec }));
        break;
      case 'dropIndex':
        this.push(kindByte(OP_DROP_INDEX), serialize({ db, c: coll, name: change.name }));
        break;
    }
  }

  private push(...parts: Uint8Array[]): void {
    for (const part of parts) {
      this.pending.push(part);
      this.pendingBytes += part.length;
    }
  }

  /** Writes everything recorded since the last commit as one record. Throws when the journal cannot be written. */
  commit(): void {
    if (this.pending.length === 0 || this.fd < 0) return;
    const rec = record(this.pending);
    const entries = this.pendingEntries;
    const offsets = this.pendingOffsets;
    this.pending = [];
    this.pendingBytes = 0;
    this.pendingEntries = [];
    this.pendingOffsets = [];
    writeAll(this.fd, rec);
    if (this.segment) place(this.segment, this.fileBytes, entries, offsets);
    this.fileBytes += rec.length;
    this.compaction?.tail.push({ rec, entries, offsets });
    if (this.policy === 'always') fs.fdatasyncSync(this.fd);
    else this.unsynced = true;
    if (!this.compaction && this.fileBytes > this.compactMinBytes && this.fileBytes > 2 * this.liveBytes()) void this.compact();
  }

  private tick(): void {
    try {
      this.commit();
    } catch (err) {
      this.log('devdb: journal write failed', { error: err instanceof Error ? err.message : String(err) });
    }
    // The interval's fdatasync runs on the thread pool: done in place it held the database's thread (every query
    // and write) for as long as the disk took, a tenth of its time under a click stream on a busy disk.
    if (!this.unsynced || this.fd < 0 || this.syncing) return;
    this.unsynced = false;
    this.syncing = true;
    fs.fdatasync(this.fd, (err) => {
      this.syncing = false;
      if (err) this.log('devdb: journal fdatasync failed', { error: err.message });
      for (const fd of this.closeAfterSync.splice(0)) fs.closeSync(fd);
    });
  }

  /** Closes a journal file, once the fdatasync in flight (which may be on it) is over. */
  private closeFd(fd: number): void {
    if (this.syncing) this.closeAfterSync.push(fd);
    else fs.closeSync(fd);
  }

  /**
   * The catalog as of this call, as records: per collection its creation and indexes, then its documents in
   * slices. The collections and their entries are captured now; the records are built as they are iterated.
   */
  private snapshot(): Iterable<Placed> {
    const colls = this.catalog!.all().map((c) => ({ db: c.db, name: c.name, uuid: c.uuid, specs: c.indexSpecs().slice(1), entries: [...c.docs.values()] }));
    const header = (db: string, name: string) => this.header(db, name);
    return (function* () {
      for (const c of colls) {
        const rec = record([
          kindByte(OP_CREATE),
          serialize({ db: c.db, c: c.name, uuid: c.uuid }),
          ...c.specs.flatMap((spec) => [kindByte(OP_CREATE_INDEX), serialize({ db: c.db, c: c.name, spec })]),
        ]);
        yield { rec, entries: [], offsets: [] };
        const head = header(c.db, c.name);
        const put = kindByte(OP_PUT);
        for (let i = 0; i < c.entries.length; i += SNAPSHOT_SLICE) {
          const parts: Uint8Array[] = [];
          const entries = c.entries.slice(i, i + SNAPSHOT_SLICE);
          const offsets: number[] = [];
          let at = RECORD_HEADER;
          for (const e of entries) {
            at += put.length + head.length;
            offsets.push(at);
            const raw = e.rawUncached();
            parts.push(put, head, raw);
            at += raw.length;
          }
          yield { rec: record(parts), entries, offsets };
        }
      }
    })();
  }

  private writeSnapshotSync(file: string): void {
    const fd = fs.openSync(file + '.tmp', 'w');
    const written: [number, Placed][] = [];
    try {
      let bytes = 0;
      for (const placed of this.snapshot()) {
        writeAll(fd, placed.rec);
        written.push([bytes, placed]);
        bytes += placed.rec.length;
      }
      fs.fdatasyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(file + '.tmp', file);
    this.syncDir();
    this.segment = new Segment(file);
    for (const [start, { entries, offsets }] of written) place(this.segment, start, entries, offsets);
  }

  private syncDir(): void {
    const dirFd = fs.openSync(this.dir, 'r');
    try {
      fs.fsyncSync(dirFd);
    } finally {
      fs.closeSync(dirFd);
    }
  }

  /** Rewrites the journal as a snapshot of the live data, in the background; resolves when it is in place. */
  compact(): Promise<void> {
    if (this.compaction) return this.compaction.done;
    if (this.fd < 0) return Promise.resolve();
    this.commit();
    const tail: Placed[] = [];
    const snapshot = this.snapshot();
    const done = this.writeGeneration(snapshot, tail).finally(() => {
      this.compaction = undefined;
    });
    this.compaction = { tail, done };
    return done;
  }

  private async writeGeneration(snapshot: Iterable<Placed>, tail: Placed[]): Promise<void> {
    const generation = this.generation + 1;
    const file = this.fileFor(generation);
    const tmp = file + '.tmp';
    const fd = fs.openSync(tmp, 'w');
    let bytes = 0;
    // Where each record went in the new file, for its documents to be read from there once it replaces the old one.
    const written: [number, Placed][] = [];
    const write = (placed: Placed): void => {
      writeAll(fd, placed.rec);
      if (placed.entries.length > 0) written.push([bytes, placed]);
      bytes += placed.rec.length;
    };
    try {
      for (const placed of snapshot) {
        write(placed);
        await nextTurn();
        if (this.closed) throw new Error('devdb stopped during compaction');
      }
      // The snapshot and the records committed meanwhile are flushed to disk on the thread pool, a round at a time,
      // while writes go on: flushed in the final, synchronous step, gigabytes of them held the database's thread
      // (every read and write) for tens of seconds. Each round writes the tail so far and drops it from memory.
      for (let round = 0; round < CATCH_UP_ROUNDS; round++) {
        for (const placed of tail.splice(0, tail.length)) write(placed);
        await fdatasyncOnPool(fd);
        if (this.closed) throw new Error('devdb stopped during compaction');
        if (tail.reduce((n, placed) => n + placed.rec.length, 0) < CATCH_UP_BYTES) break;
      }
      // No await from here on: no record can be committed between writing the tail and switching files.
      for (const placed of tail.splice(0, tail.length)) write(placed);
      fs.fdatasyncSync(fd);
      fs.renameSync(tmp, file);
      this.syncDir();
    } catch (err) {
      fs.closeSync(fd);
      fs.rmSync(tmp, { force: true });
      if (!this.closed) this.log('devdb: journal compaction failed', { error: err instanceof Error ? err.message : String(err) });
      return;
    }
    const old = this.fileFor(this.generation);
    // The documents written are read from the new file from now on. The old segment stays open for the versions
    // the new file does not hold (superseded ones a cursor or a snapshot read still holds) and is closed once none
    // is left (storage.ts).
    const segment = new Segment(file);
    for (const [start, { entries, offsets }] of written) place(segment, start, entries, offsets);
    this.segment = segment;
    this.closeFd(this.fd);
    this.fd = fd;
    this.generation = generation;
    this.fileBytes = bytes;
    this.unsynced = false;
    this.compactions++;
    fs.rmSync(old, { force: true });
  }

  close(): void {
    if (this.closed) return;
    try {
      this.commit();
      if (this.fd >= 0) fs.fdatasyncSync(this.fd);
    } finally {
      this.closed = true;
      clearInterval(this.timer);
      if (this.fd >= 0) this.closeFd(this.fd);
      this.fd = -1;
      this.segment?.close();
      this.segment = undefined;
    }
  }
}
