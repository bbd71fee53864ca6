// One file per collection under dataDir/<db>/<collection>.bson: a header document (uuid and
// index definitions) followed by every document, as plain concatenated BSON. Files are written
// to a temp name and renamed, so a crash never leaves a half-written collection behind. Writes
// are batched: the first change arms a timer and everything dirty by then is written together.
import fs from 'node:fs';
import path from 'node:path';
import { Binary, deserialize, serialize } from 'bson';
import type { Catalog } from './catalog.ts';
import { makeEntry } from './collection.ts';
import type { IndexSpec } from './indexes.ts';
import type { Logger } from './server.ts';
import { normalizeIncoming, type Doc } from './values.ts';

const SUFFIX = '.bson';

function readDocs(buf: Buffer): Doc[] {
  const docs: Doc[] = [];
  let offset = 0;
  while (offset + 4 <= buf.length) {
    const size = buf.readInt32LE(offset);
    if (size < 5 || offset + size > buf.length) throw new Error(`corrupt document at byte ${offset}`);
    docs.push(normalizeIncoming(deserialize(buf.subarray(offset, offset + size), { promoteValues: false })) as Doc);
    offset += size;
  }
  return docs;
}

export class Persistence {
  private readonly dir: string;
  private readonly delayMs: number;
  private readonly log: Logger;
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private loading = false;
  private catalog: Catalog | undefined;

  constructor(dir: string, log: Logger, delayMs = 200) {
    this.dir = dir;
    this.log = log;
    this.delayMs = delayMs;
  }

  private file(db: string, coll: string): string {
    return path.join(this.dir, encodeURIComponent(db), encodeURIComponent(coll) + SUFFIX);
  }

  /** Reads every collection file into `catalog`, then starts tracking its changes. */
  load(catalog: Catalog): void {
    this.catalog = catalog;
    fs.mkdirSync(this.dir, { recursive: true });
    this.loading = true;
    try {
      for (const dbDir of fs.readdirSync(this.dir, { withFileTypes: true })) {
        if (!dbDir.isDirectory()) continue;
        const db = decodeURIComponent(dbDir.name);
        for (const file of fs.readdirSync(path.join(this.dir, dbDir.name))) {
          if (!file.endsWith(SUFFIX)) continue;
          const name = decodeURIComponent(file.slice(0, -SUFFIX.length));
          const [header, ...docs] = readDocs(fs.readFileSync(path.join(this.dir, dbDir.name, file)));
          const uuid = header?.uuid instanceof Binary ? header.uuid : undefined;
          const coll = catalog.create(db, name, uuid);
          for (const spec of (header?.indexes as IndexSpec[] | undefined) ?? []) coll.createIndex(spec);
          for (const doc of docs) coll.attach(makeEntry(doc));
        }
      }
    } finally {
      this.loading = false;
    }
  }

  markDirty(db: string, coll: string): void {
    if (this.loading) return;
    this.dirty.add(JSON.stringify([db, coll]));
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.delayMs);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const pending = [...this.dirty].map((k) => JSON.parse(k) as [string, string]);
    this.dirty.clear();
    for (const [db, name] of pending) {
      try {
        this.write(db, name);
      } catch (err) {
        this.log('devdb: failed to persist collection', { db, collection: name, error: err instanceof Error ? err.message : String(err) });
      }
    }
  }

  private write(db: string, name: string): void {
    const file = this.file(db, name);
    const coll = this.catalog?.get(db, name);
    if (!coll) {
      fs.rmSync(file, { force: true });
      return;
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const parts = [serialize({ db, name, uuid: coll.uuid, indexes: coll.indexSpecs().slice(1) })];
    for (const e of coll.docs.values()) parts.push(serialize(e.doc, { ignoreUndefined: true }));
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, Buffer.concat(parts));
    fs.renameSync(tmp, file);
  }

  close(): void {
    this.flush();
  }
}
