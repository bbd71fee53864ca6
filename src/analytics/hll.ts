// HyperLogLog (Flajolet, Fusy, Gandouet, Meunier 2007) with a 64-bit hash, linear counting for small cardinalities
// and a sparse serialised form, so a bucket with three visitors costs a few bytes, not 2^p. Sketches merge by taking
// the larger register, so unique visitors of any set of buckets (a range, a bucket of a time series, several values
// of a filter) are the estimate of the merged sketch. Standard error: 1.04 / sqrt(2^p).
// Below EXACT_LIMIT visitors a sketch is kept as the exact set of its visitors (their 32-bit hash prefixes and ranks,
// from which any precision's registers follow): its count is exact, not an estimate, and it becomes registers only
// when it grows past the limit or meets a sketch that already has.
// No maintained npm package offered a mergeable, serialisable sketch with a stable byte format, hence this one.
import { hash } from 'node:crypto';

/** Precision of the sketches kept for totals (a workspace's or a link's clicks): 16,384 registers, 0.81 % error. */
export const TOTAL_PRECISION = 14;
/** Precision of the sketches kept per dimension value (a country, a browser…): 1,024 registers, 3.25 % error. */
export const CELL_PRECISION = 10;

export function standardError(precision: number): number {
  return 1.04 / Math.sqrt(2 ** precision);
}

/** A visitor's 64-bit hash as two unsigned 32-bit words; hashed once per click, used by every sketch. */
export interface VisitorHash {
  hi: number;
  lo: number;
}

export function hashVisitor(visitorId: string): VisitorHash {
  const digest = hash('sha1', visitorId, 'buffer');
  return { hi: digest.readUInt32BE(0), lo: digest.readUInt32BE(4) };
}

/** Register index and rank (position of the first 1 bit after the index bits, 1-based) of a hash at precision p. */
export function registerOf(hash: VisitorHash, p: number): { index: number; rank: number } {
  const index = hash.hi >>> (32 - p);
  const rest = (hash.hi << p) >>> 0;
  if (rest !== 0) return { index, rank: Math.clz32(rest) + 1 };
  return { index, rank: 32 - p + (hash.lo === 0 ? 32 : Math.clz32(hash.lo)) + 1 };
}

/**
 * A visitor as the sketches keep it while they are exact sets: the first 32 bits of its hash, times 64, plus the
 * rank of the next 32 (1..33). Every precision's register follows from it (registerOfKey), and two visitors are one
 * only if their first 32 hash bits agree (about one pair in 2,000 among 4,000 visitors).
 */
export function visitorKey(hash: VisitorHash): number {
  return hash.hi * 64 + (hash.lo === 0 ? 33 : Math.clz32(hash.lo) + 1);
}

/** The register of a visitor key at precision p: the same one registerOf gives for its hash. */
export function registerOfKey(key: number, p: number): { index: number; rank: number } {
  const hi = Math.floor(key / 64);
  const index = hi >>> (32 - p);
  const rest = (hi << p) >>> 0;
  if (rest !== 0) return { index, rank: Math.clz32(rest) + 1 };
  return { index, rank: 32 - p + (key % 64) };
}

/** How many visitors a sketch of precision p keeps as an exact set: at least 1,024, more where that is no larger than its registers. */
export function exactLimit(p: number): number {
  return Math.max(1024, Math.floor(2 ** p / EXACT_ENTRY_BYTES));
}

/** 2^-r for every rank a register can hold: a time series estimates thousands of registers per bucket. */
const INVERSE_POWERS = Float64Array.from({ length: 256 }, (_, r) => 2 ** -r);

const DENSE = 0;
/** Register pairs (index, rank): written by earlier versions, still read. */
const SPARSE = 1;
/** The exact set: visitor keys, 4 bytes of hash prefix then 1 of rank each, in prefix order, one per prefix. */
const EXACT = 2;
const EXACT_ENTRY_BYTES = 5;

export class Hll {
  readonly p: number;
  readonly registers: Uint8Array;

  constructor(p: number, registers?: Uint8Array) {
    if (!Number.isInteger(p) || p < 4 || p > 16) throw new RangeError(`HyperLogLog precision ${p} is outside 4..16`);
    this.p = p;
    this.registers = registers ?? new Uint8Array(2 ** p);
  }

  add(hash: VisitorHash): boolean {
    const { index, rank } = registerOf(hash, this.p);
    return this.set(index, rank);
  }

  addKey(key: number): boolean {
    const { index, rank } = registerOfKey(key, this.p);
    return this.set(index, rank);
  }

  /** Registers set: a lower bound of the distinct visitors (two visitors share a register at most). */
  occupied(): number {
    const a = this.registers;
    let zeros = 0;
    for (let i = 0; i < a.length; i++) if (a[i] === 0) zeros++;
    return a.length - zeros;
  }

  set(index: number, rank: number): boolean {
    if (rank <= this.registers[index]!) return false;
    this.registers[index] = rank;
    return true;
  }

  /** Takes the larger register of each pair (the union of both visitor sets). Precisions must match. */
  merge(other: Hll): this {
    if (other.p !== this.p) throw new RangeError(`cannot merge HyperLogLog sketches of precision ${this.p} and ${other.p}`);
    const a = this.registers;
    const b = other.registers;
    for (let i = 0; i < a.length; i++) if (b[i]! > a[i]!) a[i] = b[i]!;
    return this;
  }

  estimate(): number {
    return this.estimateAndOccupied().estimate;
  }

  /** The estimate and the registers set, in one pass over the registers (a time series asks both of every bucket). */
  estimateAndOccupied(): { estimate: number; occupied: number } {
    const a = this.registers;
    const m = a.length;
    let sum = 0;
    let zeros = 0;
    for (let i = 0; i < m; i++) {
      const r = a[i]!;
      sum += INVERSE_POWERS[r]!;
      if (r === 0) zeros++;
    }
    const alpha = m === 16 ? 0.673 : m === 32 ? 0.697 : m === 64 ? 0.709 : 0.7213 / (1 + 1.079 / m);
    const raw = (alpha * m * m) / sum;
    // Small range: linear counting is the better estimator while registers are still empty.
    const estimate = raw <= 2.5 * m && zeros > 0 ? Math.round(m * Math.log(m / zeros)) : Math.round(raw);
    return { estimate, occupied: m - zeros };
  }

  isEmpty(): boolean {
    return this.registers.every((r) => r === 0);
  }

  /**
   * Bytes: `[format, p, ...]`. Sparse: (index, rank) pairs, index big-endian on 2 bytes and rank on 1, while that is
   * smaller than the dense form (one byte per register).
   */
  toBytes(): Uint8Array {
    const m = this.registers.length;
    let used = 0;
    for (let i = 0; i < m; i++) if (this.registers[i] !== 0) used++;
    if (used * 3 < m) {
      const out = new Uint8Array(2 + used * 3);
      out[0] = SPARSE;
      out[1] = this.p;
      let o = 2;
      for (let i = 0; i < m; i++) {
        const r = this.registers[i]!;
        if (r === 0) continue;
        out[o] = i >>> 8;
        out[o + 1] = i & 0xff;
        out[o + 2] = r;
        o += 3;
      }
      return out;
    }
    const out = new Uint8Array(2 + m);
    out[0] = DENSE;
    out[1] = this.p;
    out.set(this.registers, 2);
    return out;
  }

  static fromBytes(bytes: Uint8Array): Hll {
    if (bytes.length < 2) throw new RangeError('not a HyperLogLog sketch');
    const sketch = new Hll(bytes[1]!);
    sketch.mergeBytes(bytes);
    return sketch;
  }

  /** Merges a serialised sketch without building it first (the query path merges thousands). */
  mergeBytes(bytes: Uint8Array): this {
    if (bytes.length < 2 || bytes[1] !== this.p) throw new RangeError(`not a HyperLogLog sketch of precision ${this.p}`);
    const a = this.registers;
    if (bytes[0] === DENSE) {
      if (bytes.length !== 2 + a.length) throw new RangeError('truncated HyperLogLog sketch');
      if (!mergeWords(a, bytes)) {
        for (let i = 0; i < a.length; i++) {
          const r = bytes[i + 2]!;
          if (r > a[i]!) a[i] = r;
        }
      }
      return this;
    }
    if (bytes[0] === EXACT) {
      // Read in place (as exactKeys then addKey would, without an array of keys per sketch): the register of a key
      // is its prefix's top p bits, its rank that of the prefix's other bits, or past them the entry's rank.
      if ((bytes.length - 2) % EXACT_ENTRY_BYTES !== 0) throw new RangeError('malformed HyperLogLog sketch');
      const p = this.p;
      for (let o = 2; o < bytes.length; o += EXACT_ENTRY_BYTES) {
        const hi = entryPrefix(bytes, o);
        const index = hi >>> (32 - p);
        const rest = (hi << p) >>> 0;
        const rank = rest !== 0 ? Math.clz32(rest) + 1 : 32 - p + bytes[o + 4]!;
        if (rank > a[index]!) a[index] = rank;
      }
      return this;
    }
    if (bytes[0] !== SPARSE || (bytes.length - 2) % 3 !== 0) throw new RangeError('malformed HyperLogLog sketch');
    for (let o = 2; o < bytes.length; o += 3) {
      const index = (bytes[o]! << 8) | bytes[o + 1]!;
      if (index >= a.length) throw new RangeError('malformed HyperLogLog sketch');
      const r = bytes[o + 2]!;
      if (r > a[index]!) a[index] = r;
    }
    return this;
  }
}

/** A dense sketch's registers copied to a 4-byte boundary (a reply's bytes fall anywhere), for mergeWords. */
let alignedScratch = new Uint8Array(1 << 14);
const HIGH_BITS = 0x80808080;

/**
 * Takes the larger of each pair of registers four at a time, as 32-bit words: a 90-day daily series in New York
 * unites some 810 dense sketches of 16,384 registers. Registers are ranks below 128 (at most 64 - p + 1), so each
 * byte's comparison is the high bit of `(x | 0x80) - y`, which borrows from no other byte. Answers false, having
 * changed nothing, if a register of either side is 128 or more (no sketch written here holds one): the bytewise loop
 * takes those.
 */
function mergeWords(into: Uint8Array, bytes: Uint8Array): boolean {
  const m = into.length;
  if (m % 4 !== 0 || into.byteOffset % 4 !== 0) return false;
  let from: Uint8Array;
  if ((bytes.byteOffset + 2) % 4 === 0) from = bytes.subarray(2);
  else {
    if (alignedScratch.length < m) alignedScratch = new Uint8Array(m);
    alignedScratch.set(bytes.subarray(2));
    from = alignedScratch;
  }
  const b = new Uint32Array(from.buffer, from.byteOffset, m / 4);
  const a = new Uint32Array(into.buffer, into.byteOffset, m / 4);
  let high = 0;
  for (let i = 0; i < b.length; i++) high |= a[i]! | b[i]!;
  if ((high & HIGH_BITS) !== 0) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    // 0xff in each byte where x's register is at least y's.
    const keep = Math.imul((((x | HIGH_BITS) - y) & HIGH_BITS) >>> 7, 0xff);
    a[i] = (x & keep) | (y & ~keep);
  }
  return true;
}

/**
 * The 32-bit hash prefix of the exact-set entry at `o`, once its rank (the byte at `o + 4`, which callers read
 * themselves) is checked to be 1 to 33: else the sketch is malformed.
 */
function entryPrefix(bytes: Uint8Array, o: number): number {
  const rank = bytes[o + 4]!;
  if (rank < 1 || rank > 33) throw new RangeError('malformed HyperLogLog sketch');
  return ((bytes[o]! << 24) | (bytes[o + 1]! << 16) | (bytes[o + 2]! << 8) | bytes[o + 3]!) >>> 0;
}

/** The visitor keys of an exact set (format EXACT), in prefix order. */
function exactKeys(bytes: Uint8Array): number[] {
  if ((bytes.length - 2) % EXACT_ENTRY_BYTES !== 0) throw new RangeError('malformed HyperLogLog sketch');
  const keys: number[] = [];
  for (let o = 2; o < bytes.length; o += EXACT_ENTRY_BYTES) keys.push(entryPrefix(bytes, o) * 64 + bytes[o + 4]!);
  return keys;
}

/**
 * The union of serialised sketches of one precision, serialised: an exact set while every part is one and the union
 * stays under the limit, else through a dense sketch. Empty input gives an empty exact set.
 */
export function unionBytes(parts: readonly Uint8Array[], p: number): Uint8Array {
  let exact = true;
  for (const part of parts) {
    if (part.length < 2 || part[1] !== p) throw new RangeError(`not a HyperLogLog sketch of precision ${p}`);
    if (part[0] !== EXACT) exact = false;
  }
  if (exact) return registersToBytes(parts.flatMap(exactKeys), p);
  const sketch = new Hll(p);
  for (const part of parts) sketch.mergeBytes(part);
  return sketch.toBytes();
}

/** Whether a serialised sketch is still the exact set of its visitors (counted exactly, not estimated). */
export function isExactSet(bytes: Uint8Array): boolean {
  return bytes[0] === EXACT;
}

/**
 * Distinct visitors of serialised sketches and visitor keys together, never more than `ceiling` (the clicks they
 * come from): exact while every sketch is an exact set, else the estimate, no lower than the registers set.
 */
export function countVisitors(parts: readonly Uint8Array[], keys: readonly number[], p: number, ceiling: number): number {
  if (parts.length === 0 && keys.length === 0) return 0;
  if (parts.every(isExactSet)) return Math.min(distinctPrefixes(parts, keys), ceiling);
  const sketch = new Hll(parts[0]?.[1] ?? p);
  for (const part of parts) sketch.mergeBytes(part);
  for (const key of keys) sketch.addKey(key);
  const { estimate, occupied } = sketch.estimateAndOccupied();
  return Math.min(Math.max(estimate, occupied), ceiling);
}

/**
 * How many distinct visitors (32-bit hash prefixes) exact sets and visitor keys hold together. Sorted in a typed
 * array and counted: a Set of the prefixes (numbers up to 2^32, each a heap object to V8) took 900 ms for a 90-day
 * country breakdown of a workspace whose country-days were still exact sets, about a million visitors in all.
 */
function distinctPrefixes(parts: readonly Uint8Array[], keys: readonly number[]): number {
  let n = keys.length;
  for (const part of parts) {
    if ((part.length - 2) % EXACT_ENTRY_BYTES !== 0) throw new RangeError('malformed HyperLogLog sketch');
    n += (part.length - 2) / EXACT_ENTRY_BYTES;
  }
  if (prefixScratch.length < n) prefixScratch = new Uint32Array(Math.max(n, prefixScratch.length * 2));
  const prefixes = prefixScratch;
  let i = 0;
  for (const part of parts) {
    for (let o = 2; o < part.length; o += EXACT_ENTRY_BYTES) prefixes[i++] = entryPrefix(part, o);
  }
  for (const key of keys) prefixes[i++] = Math.floor(key / 64);
  if (n === 0) return 0;
  const sorted = prefixes.subarray(0, n).sort();
  let distinct = 1;
  for (let k = 1; k < n; k++) if (sorted[k] !== sorted[k - 1]) distinct++;
  return distinct;
}

let prefixScratch = new Uint32Array(1024);

/** Bytes of a serialised sketch holding one visitor (an exact set: format, precision, then its key). */
export const SINGLE_REGISTER_BYTES = 2 + EXACT_ENTRY_BYTES;

/** Writes at `at` the serialised sketch holding the one visitor `key` (visitorKey). */
export function writeSingleRegister(out: Uint8Array, at: number, key: number, p: number): void {
  out[at] = EXACT;
  out[at + 1] = p;
  writeExactEntry(out, at + 2, key);
}

/** One entry of an exact set: the key's 32-bit hash prefix, big-endian, then its rank. */
function writeExactEntry(out: Uint8Array, at: number, key: number): void {
  const hi = Math.floor(key / 64);
  const rank = key % 64;
  if (hi > 0xffffffff || rank < 1 || rank > 33) throw new RangeError('malformed HyperLogLog visitor key');
  out[at] = hi >>> 24;
  out[at + 1] = (hi >>> 16) & 0xff;
  out[at + 2] = (hi >>> 8) & 0xff;
  out[at + 3] = hi & 0xff;
  out[at + 4] = rank;
}

let sortScratch = new Float64Array(1024);
/** Visitor keys up to which registersToBytes sorts by insertion. */
const INSERTION_SORT_MAX = 16;

/**
 * The sketch of these visitor keys (visitorKey; repeats allowed), serialised: the exact set while they are no more
 * than exactLimit(p) visitors, else the registers at precision p.
 */
export function registersToBytes(keys: readonly number[], p: number): Uint8Array {
  // Most cells of a batch hold a visitor or two: no sort, no typed array.
  if (keys.length === 1 || (keys.length === 2 && Math.floor(keys[0]! / 64) === Math.floor(keys[1]! / 64))) {
    const out = new Uint8Array(SINGLE_REGISTER_BYTES);
    writeSingleRegister(out, 0, keys.length === 1 ? keys[0]! : Math.max(keys[0]!, keys[1]!), p);
    return out;
  }
  // Sorted by prefix then rank: the last entry of each prefix holds its largest rank. Sorted in a buffer kept for the
  // next call: a batch packs thousands of small cells, most of a few visitors, which an insertion sort takes faster
  // than a typed array's sort is called.
  const n = keys.length;
  if (sortScratch.length < n) sortScratch = new Float64Array(Math.max(n, sortScratch.length * 2));
  const sorted = sortScratch;
  if (n <= INSERTION_SORT_MAX) {
    for (let i = 0; i < n; i++) {
      const k = keys[i]!;
      let j = i - 1;
      for (; j >= 0 && sorted[j]! > k; j--) sorted[j + 1] = sorted[j]!;
      sorted[j + 1] = k;
    }
  } else {
    sorted.set(keys);
    sorted.subarray(0, n).sort();
  }
  const last = (i: number) => i === n - 1 || Math.floor(sorted[i]! / 64) !== Math.floor(sorted[i + 1]! / 64);
  let used = 0;
  for (let i = 0; i < n; i++) if (last(i)) used++;
  if (used > exactLimit(p)) {
    const sketch = new Hll(p);
    for (let i = 0; i < n; i++) sketch.addKey(sorted[i]!);
    return sketch.toBytes();
  }
  const out = new Uint8Array(2 + used * EXACT_ENTRY_BYTES);
  out[0] = EXACT;
  out[1] = p;
  let o = 2;
  for (let i = 0; i < n; i++) {
    if (!last(i)) continue;
    writeExactEntry(out, o, sorted[i]!);
    o += EXACT_ENTRY_BYTES;
  }
  return out;
}
