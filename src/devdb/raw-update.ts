// The two updates the hot paths send, applied to a stored document's BSON bytes without decoding it: `$inc` of
// counters through sub-documents (the analytics rollups add to hundreds of counters of large documents per batch) and
// `$set` of top-level booleans (the click ingester marks each batch counted). Decoding the document, changing it
// and encoding it again cost a rollup batch far more than the change itself, and grew with the document.
//
// Only what can be done exactly as the general path (update.ts) would do it is done here; anything else answers
// undefined before anything is written, and the caller takes the general path: a path through an array or a
// non-document, a counter that is not a 32-bit integer or whose sum leaves that range, an operand that is not a plain
// number, overlapping paths, `_id`. New fields are appended to their document in the order the update names them,
// as the general path does.

import { isPlainObject, type Doc } from './values.ts';

/** The result of a raw update: the new bytes and the top-level fields it changed (for index maintenance). */
export interface RawUpdate {
  raw: Uint8Array;
  modified: boolean;
  fields: ReadonlySet<string>;
}

const INT32 = 0x10;
const DOUBLE = 0x01;
const DOC = 0x03;
const BOOL = 0x08;
const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

interface Node {
  /** The increment (a leaf) or the fields below (a sub-document). */
  inc?: number;
  children?: Map<string, Node>;
  /** Set while rewriting: whether the stored document holds this field. */
  found?: boolean;
}

/** A node per path segment; undefined for paths the general path must judge (empty, `$`, `_id`, overlapping). */
function pathTree(inc: Record<string, unknown>): Map<string, Node> | undefined {
  const root = new Map<string, Node>();
  for (const [path, value] of Object.entries(inc)) {
    if (typeof value !== 'number') return undefined;
    const parts = path.split('.');
    if (parts[0] === '_id') return undefined;
    let level = root;
    for (let i = 0; i < parts.length; i++) {
      const name = parts[i]!;
      if (name === '' || name.startsWith('$')) return undefined;
      const last = i === parts.length - 1;
      let node = level.get(name);
      if (node === undefined) {
        node = last ? { inc: value } : { children: new Map() };
        level.set(name, node);
      } else if (last || node.children === undefined) return undefined; // `a` and `a.b`, or the same path twice
      if (!last) level = node.children!;
    }
  }
  return root;
}

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

export const decoder = new TextDecoder('utf-8', { fatal: false });

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

/** Whether a stored number is an integer the general path would keep as an int32 (it re-encodes plain numbers). */
function fitsInt32(v: number): boolean {
  return Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX;
}

/** Appends the fields of `tree` the document lacked, as the general path would create them. */
function appendMissing(out: Out, tree: Map<string, Node>): boolean {
  for (const [name, node] of tree) {
    if (node.found) continue;
    if (node.children) {
      out.byte(DOC);
      out.cstring(name);
      const start = out.length;
      out.int32(0);
      if (!appendMissing(out, node.children)) return false;
      out.byte(0);
      out.view.setInt32(start, out.length - start, true);
    } else if (fitsInt32(node.inc!)) {
      out.byte(INT32);
      out.cstring(name);
      out.int32(node.inc!);
    } else {
      out.byte(DOUBLE);
      out.cstring(name);
      out.double(node.inc!);
    }
  }
  return true;
}

/**
 * Rewrites the document at `start` into `out`, incrementing what `tree` names. Returns false (the caller gives up)
 * on anything the general path must decide.
 */
function rewrite(src: Uint8Array, view: DataView, start: number, tree: Map<string, Node>, out: Out, changed: { any: boolean }): boolean {
  const end = start + view.getInt32(start, true) - 1; // the terminating 0
  const lengthAt = out.length;
  out.int32(0);
  let p = start + 4;
  let copiedFrom = p;
  while (p < end) {
    const type = src[p]!;
    const nameEnd = src.indexOf(0, p + 1);
    if (nameEnd < 0 || nameEnd >= end) return false;
    const valueAt = nameEnd + 1;
    const next = valueEnd(src, view, type, valueAt);
    if (next < 0 || next > end) return false;
    const node = tree.size === 0 ? undefined : tree.get(decoder.decode(src.subarray(p + 1, nameEnd)));
    if (node !== undefined) {
      if (node.found) return false; // a duplicate field name: not a document MongoDB would store
      node.found = true;
      out.copy(src, copiedFrom, valueAt); // everything before, and this element's type and name
      if (node.children) {
        if (type !== DOC || !rewrite(src, view, valueAt, node.children, out, changed)) return false;
      } else {
        if (type !== INT32) return false;
        const sum = view.getInt32(valueAt, true) + node.inc!;
        if (!fitsInt32(sum)) return false;
        if (node.inc !== 0) changed.any = true;
        out.int32(sum);
      }
      copiedFrom = next;
    }
    p = next;
  }
  if (p !== end || src[end] !== 0) return false;
  out.copy(src, copiedFrom, end);
  if (!appendMissing(out, tree)) return false;
  out.byte(0);
  out.view.setInt32(lengthAt, out.length - lengthAt, true);
  return true;
}

function missingAny(tree: Map<string, Node>): boolean {
  for (const node of tree.values()) if (!node.found || (node.children && missingAny(node.children))) return true;
  return false;
}

/** `$inc` of `inc` (path → number) applied to the stored document `raw`, or undefined for the general path. */
export function incRaw(raw: Uint8Array, inc: Record<string, unknown>): RawUpdate | undefined {
  const tree = pathTree(inc);
  if (!tree || tree.size === 0) return undefined;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const out = scratch.reset();
  const changed = { any: false };
  if (!rewrite(raw, view, 0, tree, out, changed)) return undefined;
  return { raw: out.bytes.slice(0, out.length), modified: changed.any || missingAny(tree), fields: new Set(tree.keys()) };
}

/** `$set` of top-level fields to booleans, applied to `raw`, or undefined for the general path. */
export function setBooleansRaw(raw: Uint8Array, set: Record<string, unknown>): RawUpdate | undefined {
  const names = Object.keys(set);
  if (names.length === 0) return undefined;
  for (const name of names) if (typeof set[name] !== 'boolean' || name === '' || name === '_id' || name.includes('.') || name.startsWith('$')) return undefined;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const end = view.getInt32(0, true) - 1;
  const wanted = new Map(names.map((n) => [n, set[n] as boolean]));
  const at = new Map<string, number>();
  let p = 4;
  while (p < end) {
    const type = raw[p]!;
    const nameEnd = raw.indexOf(0, p + 1);
    if (nameEnd < 0 || nameEnd >= end) return undefined;
    const next = valueEnd(raw, view, type, nameEnd + 1);
    if (next < 0 || next > end) return undefined;
    const name = decoder.decode(raw.subarray(p + 1, nameEnd));
    if (wanted.has(name)) {
      if (type !== BOOL || at.has(name)) return undefined;
      at.set(name, nameEnd + 1);
    }
    p = next;
  }
  if (p !== end || raw[end] !== 0) return undefined;
  let modified = false;
  const out = scratch.reset();
  out.copy(raw, 0, end);
  for (const [name, value] of wanted) {
    const offset = at.get(name);
    if (offset === undefined) {
      out.byte(BOOL);
      out.cstring(name);
      out.byte(value ? 1 : 0);
      modified = true;
    } else if ((raw[offset] !== 0) !== value) {
      out.bytes[offset] = value ? 1 : 0;
      modified = true;
    }
  }
  out.byte(0);
  out.view.setInt32(0, out.length, true);
  return { raw: out.bytes.slice(0, out.length), modified, fields: new Set(names) };
}

/** The update `u` applied to the stored document `raw` when it is one this module does exactly, else undefined. */
export function rawUpdate(raw: Uint8Array, u: Doc | Doc[]): RawUpdate | undefined {
  if (Array.isArray(u)) return undefined;
  const ops = Object.keys(u);
  if (ops.length === 1 && ops[0] === '$set' && isPlainObject(u.$set)) return setBooleansRaw(raw, u.$set);
  if (isPlainObject(u.$inc) && ops.every((op) => op === '$inc' || op === '$setOnInsert')) return incRaw(raw, u.$inc);
  return undefined;
}
