// Walking and writing BSON bytes, for the reads and updates devdb answers without decoding a stored document
// (raw-read.ts, raw-update.ts).

/**
 * Grows as needed; what a rewrite writes into. One is reused for every rewrite (they run synchronously, one at a
 * time): an ArrayBuffer per document was most of the cost of a small one.
 */
export class Out {
  bytes: Uint8Array;
  view: DataView;
  length = 0;
  constructor(size: number) {
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
  }
  /** Starts over, keeping the storage. */
  reset(): this {
    this.length = 0;
    return this;
  }
  reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const next = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
    next.set(this.bytes.subarray(0, this.length));
    this.bytes = next;
    this.view = new DataView(next.buffer);
  }
  copy(src: Uint8Array, from: number, to: number): void {
    this.reserve(to - from);
    this.bytes.set(src.subarray(from, to), this.length);
    this.length += to - from;
  }
  byte(b: number): void {
    this.reserve(1);
    this.bytes[this.length++] = b;
  }
  int32(v: number): void {
    this.reserve(4);
    this.view.setInt32(this.length, v, true);
    this.length += 4;
  }
  double(v: number): void {
    this.reserve(8);
    this.view.setFloat64(this.length, v, true);
    this.length += 8;
  }
  cstring(s: string): void {
    const encoded = encoder.encode(s);
    this.reserve(encoded.length + 1);
    this.bytes.set(encoded, this.length);
    this.length += encoded.length;
    this.bytes[this.length++] = 0;
  }
}

const encoder = new TextEncoder();
/** The scratch output of every raw rewrite and projection; the result is copied out of it. */
export const scratch = new Out(64 * 1024);

const decoder = new TextDecoder('utf-8', { fatal: false });

/** Where the value of an element of type `type` starting at `at` ends; -1 for a type this module does not walk. */
export function valueEnd(src: Uint8Array, view: DataView, type: number, at: number): number {
  switch (type) {
    case 0x01: // double
    case 0x09: // UTC datetime
    case 0x11: // timestamp
    case 0x12: // int64
      return at + 8;
    case 0x02: // string
    case 0x0d: // JavaScript code
    case 0x0e: // symbol
      return at + 4 + view.getInt32(at, true);
    case 0x03: // document
    case 0x04: // array
    case 0x0f: // code with scope
      return at + view.getInt32(at, true);
    case 0x05: // binary
      return at + 5 + view.getInt32(at, true);
    case 0x06: // undefined
    case 0x0a: // null
    case 0xff: // min key
    case 0x7f: // max key
      return at;
    case 0x07: // ObjectId
      return at + 12;
    case 0x08: // boolean
      return at + 1;
    case 0x0c: // DBPointer
      return at + 4 + view.getInt32(at, true) + 12;
    case 0x10: // int32
      return at + 4;
    case 0x13: // decimal128
      return at + 16;
    case 0x0b: {
      // regular expression: two C strings
      let p = src.indexOf(0, at);
      if (p < 0) return -1;
      p = src.indexOf(0, p + 1);
      return p < 0 ? -1 : p + 1;
    }
    default:
      return -1;
  }
}

/** The name of the element at `at` whose name ends at `nameEnd`. */
export function nameOf(src: Uint8Array, at: number, nameEnd: number): string {
  return decoder.decode(src.subarray(at + 1, nameEnd));
}

/** Field names as UTF-8, kept: raw updates name the same few fields again and again. */
const encodedNames = new Map<string, Uint8Array>();

/** `name` as the UTF-8 bytes an element's name is stored as (for nameIs). */
export function nameBytes(name: string): Uint8Array {
  let bytes = encodedNames.get(name);
  if (!bytes) {
    bytes = encoder.encode(name);
    if (encodedNames.size < 1024) encodedNames.set(name, bytes);
  }
  return bytes;
}

/** Whether the element at `at`, whose name ends at `nameEnd`, is named `name` (from nameBytes): compared without decoding. */
export function nameIs(src: Uint8Array, at: number, nameEnd: number, name: Uint8Array): boolean {
  if (nameEnd - at - 1 !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (src[at + 1 + i] !== name[i]) return false;
  return true;
}

/**
 * Calls `visit` with each element of the document at `start`, in order: its type, where it starts, where its name
 * ends (its value starts one byte later) and where it ends. Stops when `visit` answers false. Answers false when it
 * stopped so, or when the document is malformed or holds a type valueEnd does not know; true otherwise.
 */
export function eachElement(src: Uint8Array, view: DataView, start: number, visit: (type: number, at: number, nameEnd: number, next: number) => boolean): boolean {
  const end = start + view.getInt32(start, true) - 1; // the terminating 0
  let p = start + 4;
  while (p < end) {
    const type = src[p]!;
    const nameEnd = src.indexOf(0, p + 1);
    if (nameEnd < 0 || nameEnd >= end) return false;
    const next = valueEnd(src, view, type, nameEnd + 1);
    if (next < 0 || next > end || !visit(type, p, nameEnd, next)) return false;
    p = next;
  }
  return p === end && src[end] === 0;
}

/** The UTF-8 text of `src` from `start` to `end`. */
export function textOf(src: Uint8Array, start: number, end: number): string {
  return decoder.decode(src.subarray(start, end));
}

/** A DataView over exactly `bytes`. */
export function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
