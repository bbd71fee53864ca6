// Reads answered from a stored document's BSON bytes without decoding it: inclusion projections (the analytics
// queries read one dimension of rollup documents holding twenty) and the `{field: {$in: [strings]}}` filters that
// fetch documents by key. Decoding whole documents to keep a sliver of them, then encoding that sliver again, was most
// of devdb's work (and garbage) behind an analytics query at 10 M clicks. Anything this module cannot do exactly as
// the general path does answers undefined, and the general path runs.
import { decoder, scratch, valueEnd, type Out } from './raw-update.ts';
import type { Doc } from './values.ts';

const DOC = 0x03;
const STRING = 0x02;

/** Projection paths as a tree: `true` keeps the whole field. */
type Paths = Map<string, Paths | true>;

/** An inclusion projection compiled for projectRaw, or undefined when it is not a plain list of fields to keep. */
export interface RawProjection {
  paths: Paths;
  id: boolean;
}

export function rawProjection(projection: Doc): RawProjection | undefined {
  const paths: Paths = new Map();
  let id = true;
  for (const [path, value] of Object.entries(projection)) {
    const keep = value === true || (typeof value === 'number' && value !== 0 && !Number.isNaN(value));
    if (path === '_id') {
      if (value === false || value === 0) id = false;
      else if (!keep) return undefined;
      continue;
    }
    if (!keep) return undefined; // exclusions, expressions, $slice, $elemMatch
    const parts = path.split('.');
    let level = paths;
    for (let i = 0; i < parts.length; i++) {
      const name = parts[i]!;
      if (name === '' || name.startsWith('$')) return undefined;
      const node = level.get(name);
      if (i === parts.length - 1) {
        if (node !== undefined) return undefined; // a path collision: the general path reports it
        level.set(name, true);
      } else if (node === true) return undefined;
      else if (node === undefined) {
        const next: Paths = new Map();
        level.set(name, next);
        level = next;
      } else level = node;
    }
  }
  if (paths.size === 0) return undefined;
  return { paths, id };
}

/** Copies the elements of the document at `start` that `paths` keeps, in the document's order. */
function keep(src: Uint8Array, view: DataView, start: number, paths: Paths, id: boolean, out: Out): boolean {
  const end = start + view.getInt32(start, true) - 1;
  const lengthAt = out.length;
  out.int32(0);
  let p = start + 4;
  while (p < end) {
    const type = src[p]!;
    const nameEnd = src.indexOf(0, p + 1);
    if (nameEnd < 0 || nameEnd >= end) return false;
    const next = valueEnd(src, view, type, nameEnd + 1);
    if (next < 0 || next > end) return false;
    const name = decoder.decode(src.subarray(p + 1, nameEnd));
    const node = id && start === 0 && name === '_id' ? true : paths.get(name);
    if (node === true) out.copy(src, p, next);
    else if (node !== undefined) {
      // Through an array or a value that is not a document, MongoDB's answer takes rules of its own.
      if (type !== DOC) return false;
      out.copy(src, p, nameEnd + 1);
      if (!keep(src, view, nameEnd + 1, node, false, out)) return false;
    }
    p = next;
  }
  if (p !== end || src[end] !== 0) return false;
  out.byte(0);
  out.view.setInt32(lengthAt, out.length - lengthAt, true);
  return true;
}

/** The stored document `raw` with only what `projection` keeps, or undefined for the general path. */
export function projectRaw(raw: Uint8Array, projection: RawProjection): Uint8Array | undefined {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const out = scratch.reset();
  if (!keep(raw, view, 0, projection.paths, projection.id, out)) return undefined;
  // Sent once, then dropped: small results share Node's buffer pool instead of an ArrayBuffer each.
  const result = Buffer.allocUnsafe(out.length);
  result.set(out.bytes.subarray(0, out.length));
  return result;
}

/** A filter of one top-level field equal to one of some strings: `{f: 's'}`, `{f: {$in: ['a', 'b']}}`. */
export interface StringsFilter {
  field: string;
  /** The field name's length in UTF-8 (names of another length are not decoded). */
  fieldBytes: number;
  values: ReadonlySet<string>;
}

export function stringsFilter(filter: Doc | undefined): StringsFilter | undefined {
  if (!filter) return undefined;
  const fields = Object.keys(filter);
  if (fields.length !== 1) return undefined;
  const field = fields[0]!;
  if (field.startsWith('$') || field.includes('.')) return undefined;
  const cond = filter[field];
  const fieldBytes = Buffer.byteLength(field);
  if (typeof cond === 'string') return { field, fieldBytes, values: new Set([cond]) };
  if (cond === null || typeof cond !== 'object' || Array.isArray(cond)) return undefined;
  const ops = Object.keys(cond);
  const list = (cond as Doc).$in;
  if (ops.length !== 1 || !Array.isArray(list) || !list.every((v) => typeof v === 'string')) return undefined;
  return { field, fieldBytes, values: new Set(list as string[]) };
}

/**
 * Whether the stored document matches a StringsFilter: true or false when its field is a string or absent, undefined
 * (ask the general matcher) when it holds anything else (an array matches through its elements, and so on).
 */
export function matchesStrings(raw: Uint8Array, filter: StringsFilter): boolean | undefined {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const end = view.getInt32(0, true) - 1;
  let p = 4;
  while (p < end) {
    const type = raw[p]!;
    const nameEnd = raw.indexOf(0, p + 1);
    if (nameEnd < 0 || nameEnd >= end) return undefined;
    const next = valueEnd(raw, view, type, nameEnd + 1);
    if (next < 0 || next > end) return undefined;
    if (nameEnd - p - 1 === filter.fieldBytes && decoder.decode(raw.subarray(p + 1, nameEnd)) === filter.field) {
      if (type !== STRING) return undefined;
      const length = view.getInt32(nameEnd + 1, true);
      return filter.values.has(decoder.decode(raw.subarray(nameEnd + 5, nameEnd + 4 + length)));
    }
    p = next;
  }
  // Absent: equal to none of the strings (a null in the list is not a string, so such filters never get here).
  return false;
}
