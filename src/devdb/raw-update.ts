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

import { eachElement, nameBytes, nameIs, nameOf, scratch, viewOf, type Out } from './bson-walk.ts';
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

/** Whether a stored number is an integer the general path would keep as an int32 (it re-encodes plain numbers). */
function fitsInt32(v: number): boolean {
  return Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX;
}

/** Appends the fields of `tree` the document lacked, as the general path would create them (0 + n: -0 is an int32 0). */
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
  let copiedFrom = start + 4;
  const walked = eachElement(src, view, start, (type, at, nameEnd, next) => {
    const node = tree.size === 0 ? undefined : tree.get(nameOf(src, at, nameEnd));
    if (node === undefined) return true;
    if (node.found) return false; // a duplicate field name: not a document MongoDB would store
    node.found = true;
    const valueAt = nameEnd + 1;
    out.copy(src, copiedFrom, valueAt); // everything before, and this element's type and name
    copiedFrom = next;
    if (node.children) return type === DOC && rewrite(src, view, valueAt, node.children, out, changed);
    if (type !== INT32) return false;
    const sum = view.getInt32(valueAt, true) + node.inc!;
    if (!fitsInt32(sum)) return false;
    if (node.inc !== 0) changed.any = true;
    out.int32(sum);
    return true;
  });
  if (!walked) return false;
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
  const view = viewOf(raw);
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
  const view = viewOf(raw);
  const end = view.getInt32(0, true) - 1;
  // Names compared as bytes: decoding each of a document's names to compare it was most of this function's time.
  const encoded = names.map(nameBytes);
  /** Where each named field's value byte is in `raw`, -1 while not found. */
  const at = names.map(() => -1);
  const walked = eachElement(raw, view, 0, (type, start, nameEnd) => {
    const i = encoded.findIndex((bytes) => nameIs(raw, start, nameEnd, bytes));
    if (i < 0) return true;
    if (type !== BOOL || at[i] !== -1) return false;
    at[i] = nameEnd + 1;
    return true;
  });
  if (!walked) return undefined;
  let modified = false;
  const out = scratch.reset();
  out.copy(raw, 0, end);
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const value = set[name] as boolean;
    const offset = at[i]!;
    if (offset === -1) {
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
