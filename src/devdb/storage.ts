// Where a stored document's bytes are kept. The journal (persistence.ts) already holds every document; keeping a
// second copy of each in memory was most of devdb's memory (a million stored clicks held 2 GB). So once a version is
// in the journal file, its Entry keeps only the file (a Segment) and the offset, and its bytes are read back with a
// synchronous pread when asked for; a bounded cache keeps the bytes of the versions read or written recently. A
// version not yet written to the journal (or of a devdb without a data folder) keeps its bytes itself.
import fs from 'node:fs';

/**
 * A journal file opened for reading. It outlives its replacement by a compaction (the file is unlinked then, its
 * descriptor kept open) for as long as some stored version, held by a cursor or a snapshot read, still points into
 * it: the descriptor is closed when the last such version is collected, or when devdb stops.
 */
export class Segment {
  private fd: number;
  /** The last bytes read ahead, and where in the file they start. */
  private window: Buffer | undefined;
  private windowStart = 0;
  /** Where the previous read ended: a read starting near it reads ahead (a scan in file order). */
  private lastEnd = -1;

  constructor(file: string) {
    this.fd = fs.openSync(file, 'r');
    segments.register(this, this.fd, this);
  }

  /** A copy of `size` bytes at `offset`. */
  read(offset: number, size: number): Uint8Array {
    if (this.fd < 0) throw new Error('devdb: the journal is closed');
    const sequential = offset >= this.lastEnd && offset - this.lastEnd < READ_AHEAD_GAP;
    this.lastEnd = offset + size;
    const w = this.window;
    if (w !== undefined && offset >= this.windowStart && offset + size <= this.windowStart + w.length) {
      return copyOf(w, offset - this.windowStart, size);
    }
    if (sequential && size < READ_AHEAD) {
      const ahead = Buffer.allocUnsafeSlow(READ_AHEAD);
      const n = fs.readSync(this.fd, ahead, 0, READ_AHEAD, offset);
      if (n >= size) {
        this.window = n === READ_AHEAD ? ahead : ahead.subarray(0, n);
        this.windowStart = offset;
        return copyOf(ahead, 0, size);
      }
    }
    const out = Buffer.allocUnsafe(size);
    const n = fs.readSync(this.fd, out, 0, size, offset);
    if (n !== size) throw new Error(`devdb: the journal ends before a stored document (${n} of ${size} bytes at ${offset})`);
    return out;
  }

  close(): void {
    if (this.fd < 0) return;
    segments.unregister(this);
    fs.closeSync(this.fd);
    this.fd = -1;
    this.window = undefined;
  }
}

/** A document's bytes out of a read-ahead window: a copy, which must not keep the window alive. */
function copyOf(from: Buffer, start: number, size: number): Uint8Array {
  const out = Buffer.allocUnsafe(size);
  from.copy(out, 0, start, start + size);
  return out;
}

const READ_AHEAD = 256 * 1024;
const READ_AHEAD_GAP = 64 * 1024;

const segments = new FinalizationRegistry<number>((fd) => {
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed.
  }
});

/**
 * The bytes of recently read or written versions, bounded by their total size. Two generations: reads and writes fill
 * the young one; when it is full it becomes the old one and the previous old one is dropped; a hit in the old one
 * moves the bytes back to the young one. Every step is O(1).
 *
 * Each generation copies its bytes into one slab, allocated once and used again by the next young generation, and a
 * hit gets a copy, never a view of a slab. When the cache kept each version's own buffer, V8 counted every version
 * cached as new memory outside its heap, and once 64 MB of them had outlived a young collection it collected the
 * whole heap: every few seconds under click ingestion, marking gigabytes once millions of documents were stored.
 */
export class BytesCache<K> {
  private young = new Map<K, Uint8Array>();
  private old = new Map<K, Uint8Array>();
  private youngBytes = 0;
  private generationBytes: number;
  /** The young and old generations' slabs: allocated when first filled, then swapped, never freed until a resize. */
  private youngSlab: Uint8Array | undefined;
  private oldSlab: Uint8Array | undefined;

  constructor(maxBytes: number) {
    this.generationBytes = Math.floor(maxBytes / 2);
  }

  resize(maxBytes: number): void {
    this.generationBytes = Math.floor(maxBytes / 2);
    this.young = new Map();
    this.old = new Map();
    this.youngBytes = 0;
    this.youngSlab = undefined;
    this.oldSlab = undefined;
  }

  /** A copy of the bytes cached for `key`: the caller may keep it, the cache's memory is used again. */
  get(key: K): Uint8Array | undefined {
    const hit = this.young.get(key);
    if (hit !== undefined) return copy(hit);
    const old = this.old.get(key);
    if (old === undefined) return undefined;
    const bytes = copy(old);
    this.set(key, bytes);
    return bytes;
  }

  /** Keeps a copy of `bytes` (larger than a generation: not kept). */
  set(key: K, bytes: Uint8Array): void {
    if (bytes.length > this.generationBytes || bytes.length === 0) return;
    if (this.youngBytes + bytes.length > this.generationBytes) {
      this.old = this.young;
      [this.oldSlab, this.youngSlab] = [this.youngSlab, this.oldSlab];
      this.young = new Map();
      this.youngBytes = 0;
    }
    this.youngSlab ??= new Uint8Array(this.generationBytes);
    const view = this.youngSlab.subarray(this.youngBytes, this.youngBytes + bytes.length);
    view.set(bytes);
    this.youngBytes += bytes.length;
    this.young.set(key, view);
  }
}

function copy(bytes: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(bytes.length);
  out.set(bytes);
  return out;
}
