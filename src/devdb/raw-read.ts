// Reads answered from a stored document's BSON bytes without decoding it: inclusion projections (the analytics
// queries read one dimension of rollup documents holding twenty) and the `{field: {$in: [strings]}}` filters that
// fetch documents by key. Decoding whole documents to keep a sliver of them, then encoding that sliver again, was most
// of devdb's work (and garbage) behind an analytics query at 10 M clicks. Anything this module cannot do exactly as
// the general path does answers undefined, and the general path runs.
import { eachElement, nameOf, scratch, textOf, viewOf, type Out } from './bson-walk.ts';
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
  const lengthAt = out.length;
  out.int32(0);
  const walked = eachElement(src, view, start, (type, at, nameEnd, next) => {
    const name = nameOf(src, at, nameEnd);
    const node = id && start === 0 && name === '_id' ? true : paths.get(name);
    if (node === true) out.copy(src, at, next);
    else if (node !== undefined) {
      // Through an array or a value that is not a document, MongoDB's answer takes rules of its own.
      if (type !== DOC) return false;
      out.copy(src, at, nameEnd + 1);
      return keep(src, view, nameEnd + 1, node, false, out);
    }
    return true;
  });
  if (!walked) return false;
  out.byte(0);
  out.view.setInt32(lengthAt, out.length - lengthAt, true);
  return true;
}

/** The stored document `raw` with only what `projection` keeps, or undefined for the general path. */
export function projectRaw(raw: Uint8Array, projection: RawProjection): Uint8Array | undefined {
  const out = cut(raw, projection);
  if (!out) return undefined;
  const result = Buffer.allocUnsafe(out.length);
  result.set(out.bytes.subarray(0, out.length));
  return result;
}

/** The projection of `raw` in the scratch output, or undefined for the general path. */
function cut(raw: Uint8Array, projection: RawProjection): Out | undefined {
  const out = scratch.reset();
  return keep(raw, viewOf(raw), 0, projection.paths, projection.id, out) ? out : undefined;
}

/**
 * Memory for the projected documents of one reply, used again for the next: a projected document lives only until
 * its batch is copied into the reply, which happens before the next batch is cut.
 */
export class BatchArena {
  private chunk = new Uint8Array(256 * 1024);
  private used = 0;

  /** Starts a batch: what the previous one placed is overwritten from here on. */
  reset(): void {
    this.used = 0;
  }

  place(out: Out): Uint8Array {
    const n = out.length;
    if (this.used + n > this.chunk.length) {
      // What this batch placed stays in the old chunk, alive while it is referenced; later batches use the larger one.
      this.chunk = new Uint8Array(Math.max(this.chunk.length * 2, n));
      this.used = 0;
    }
    const placed = this.chunk.subarray(this.used, this.used + n);
    placed.set(out.bytes.subarray(0, n));
    this.used += n;
    return placed;
  }
}

/** The arena of the batch being cut (batches are cut and copied into their reply one at a time). */
export const batchArena = new BatchArena();

/**
 * A stored document to send with only the fields of an inclusion projection, cut from its bytes when its batch is
 * sent. Cut when the query ran, a read of a thousand 16 KB sketches allocated 16 MB outside the JavaScript heap, and
 * such reads kept V8 collecting a heap holding every stored document: at 3 M clicks the analytics queries had a p50 of
 * 45 ms and a p99 of 500 ms.
 */
export class ProjectedDoc {
  readonly raw: Uint8Array;
  private readonly projection: RawProjection;
  /** The projection by the general path, for a document the raw cut cannot do exactly (arrays on a path). */
  private readonly general: () => Doc;

  constructor(raw: Uint8Array, projection: RawProjection, general: () => Doc) {
    this.raw = raw;
    this.projection = projection;
    this.general = general;
  }

  /** The projected bytes, placed in `arena` (valid until its next reset), or the document projected by the general path. */
  cutInto(arena: BatchArena): Uint8Array | Doc {
    const out = cut(this.raw, this.projection);
    return out ? arena.place(out) : this.general();
  }
}

/** A stored document's `_id` when it is a string, read from its bytes; undefined when it is anything else. */
export function rawStringId(raw: Uint8Array): string | undefined {
  const view = viewOf(raw);
  let id: string | undefined;
  eachElement(raw, view, 0, (type, at, nameEnd, next) => {
    if (nameEnd !== at + 4 || raw[at + 1] !== 0x5f || raw[at + 2] !== 0x69 || raw[at + 3] !== 0x64) return true; // not `_id`
    if (type === STRING) id = textOf(raw, nameEnd + 5, next - 1);
    return false;
  });
  return id;
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
  return { field, fieldBytes, values: new Set(list) };
}

/**
 * Whether the stored document matches a StringsFilter: true or false when its field is a string or absent, undefined
 * (ask the general matcher) when it holds anything else (an array matches through its elements, and so on).
 */
export function matchesStrings(raw: Uint8Array, filter: StringsFilter): boolean | undefined {
  const view = viewOf(raw);
  let found = false;
  let answer: boolean | undefined;
  const walked = eachElement(raw, view, 0, (type, at, nameEnd) => {
    if (nameEnd - at - 1 !== filter.fieldBytes || nameOf(raw, at, nameEnd) !== filter.field) return true;
    found = true;
    answer = type === STRING ? filter.values.has(nameOf(raw, nameEnd + 4, nameEnd + 4 + view.getInt32(nameEnd + 1, true))) : undefined;
    return false;
  });
  if (found) return answer;
  // Absent: equal to none of the strings (a null in the list is not a string, so such filters never get here).
  return walked ? false : undefined;
}
