// BSON value helpers. Stored documents keep the exact BSON wrappers the client sent (Long,
// integral Double, Decimal128) so they round-trip; mingo only understands JS numbers, so every
// stored document also has a "view" where those wrappers are promoted to numbers.
import { Binary, Decimal128, deserialize, Double, Int32, Long, ObjectId, serialize, Timestamp } from 'bson';

export type Doc = Record<string, unknown>;

/** Text form of a BSON value (ObjectId hex, Timestamp number, ...). */
export function describe(v: unknown): string {
  if (v !== null && typeof v === 'object' && typeof (v as { toString?: unknown }).toString === 'function') {
    return (v as { toString(): string }).toString();
  }
  return String(v);
}

export function isPlainObject(v: unknown): v is Doc {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * One copy of each short string value index keys repeat (a click's workspace, link, rolled-up flag...): each decoded
 * document otherwise brings its own copies into the indexes. Bounded: when full it starts over, so values seen once
 * (ids) cost a slot only until then, and the strings already in keys stay shared.
 */
class StringPool {
  private pool = new Map<string, string>();
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  intern(s: string): string {
    const hit = this.pool.get(s);
    if (hit !== undefined) return hit;
    if (this.pool.size >= this.max) this.pool = new Map();
    this.pool.set(s, s);
    return s;
  }
}

const INTERN_MAX_LENGTH = 64;
const strings = new StringPool(65_536);

/** The shared copy of a short string (see StringPool); other values unchanged. */
export function intern<T>(v: T): T {
  return typeof v === 'string' && v.length <= INTERN_MAX_LENGTH ? (strings.intern(v) as T) : v;
}

/**
 * Incoming documents are deserialized with promoteValues:false. Int32 and non-integral doubles
 * serialize back to the same BSON type as a JS number, so only Long, integral Double and
 * Decimal128 stay wrapped. Mutates in place: the input was freshly deserialized.
 */
export function normalizeIncoming(v: unknown): unknown {
  if (v instanceof Int32) return v.value;
  if (v instanceof Double) return Number.isInteger(v.value) && !Object.is(v.value, -0) ? v : v.value;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = normalizeIncoming(v[i]);
    return v;
  }
  if (isPlainObject(v)) {
    for (const k of Object.keys(v)) v[k] = normalizeIncoming(v[k]);
    return v;
  }
  return v;
}

function promoteScalar(v: unknown): unknown {
  if (v instanceof Long && !(v instanceof Timestamp)) return v.toNumber();
  if (v instanceof Double || v instanceof Int32) return v.value;
  if (v instanceof Decimal128) return Number.parseFloat(v.toString());
  return v;
}

/** Numeric wrappers → JS numbers, sharing every unchanged subtree with the input. */
export function promote(v: unknown): unknown {
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const p = promote(v[i]);
      if (p !== v[i]) {
        out ??= v.slice();
        out[i] = p;
      }
    }
    return out ?? v;
  }
  if (isPlainObject(v)) {
    let out: Doc | undefined;
    for (const k of Object.keys(v)) {
      const p = promote(v[k]);
      if (p !== v[k]) {
        out ??= { ...v };
        out[k] = p;
      }
    }
    return out ?? v;
  }
  return promoteScalar(v);
}

export function promoteDoc(doc: Doc): Doc {
  return promote(doc) as Doc;
}

/** A stored document's BSON decoded with its numeric wrappers kept (see normalizeIncoming): a private copy. */
export function decodeDoc(raw: Uint8Array): Doc {
  return normalizeIncoming(deserialize(raw, { promoteValues: false })) as Doc;
}

/** A stored document's BSON decoded straight to its promoted view (numbers for every numeric type). */
export function decodeView(raw: Uint8Array): Doc {
  return promote(deserialize(raw)) as Doc;
}

export function encodeDoc(doc: Doc): Uint8Array {
  return serialize(doc, { ignoreUndefined: true });
}

/**
 * After an update ran on the promoted view, put numeric wrappers back where the old stored
 * document had them, so `$inc` on a Long stays a Long and untouched Longs are not demoted.
 */
export function restoreTypes(updated: unknown, old: unknown): unknown {
  if (typeof updated === 'number') {
    if (old instanceof Long && !(old instanceof Timestamp) && Number.isInteger(updated)) {
      return old.toNumber() === updated ? old : Long.fromNumber(updated);
    }
    if (old instanceof Double) return old.value === updated ? old : Number.isInteger(updated) ? new Double(updated) : updated;
    if (old instanceof Decimal128) {
      return Number.parseFloat(old.toString()) === updated ? old : Decimal128.fromString(String(updated));
    }
    return updated;
  }
  if (Array.isArray(updated) && Array.isArray(old)) {
    return updated.map((item: unknown, i) => restoreTypes(item, old[i]));
  }
  if (isPlainObject(updated) && isPlainObject(old)) {
    const out: Doc = {};
    for (const k of Object.keys(updated)) out[k] = restoreTypes(updated[k], old[k]);
    return out;
  }
  return updated;
}

/** Deep copy of containers; BSON values are immutable and shared, Dates are copied. */
export function cloneValue<T>(v: T): T {
  if (Array.isArray(v)) return v.map((x: unknown) => cloneValue(x)) as T;
  if (v instanceof Date) return new Date(v.getTime()) as T;
  if (isPlainObject(v)) {
    const out: Doc = {};
    for (const k of Object.keys(v)) out[k] = cloneValue(v[k]);
    return out as T;
  }
  return v;
}

/**
 * Canonical string of a (promoted) value, equal exactly when MongoDB considers the values
 * equal for indexing: numbers by value regardless of BSON type, objects by ordered fields.
 */
export function keyOf(v: unknown): string {
  if (v === undefined || v === null) return 'z';
  switch (typeof v) {
    case 'number':
      return 'n' + String(Object.is(v, -0) ? 0 : v);
    case 'string':
      return JSON.stringify(v);
    case 'boolean':
      return v ? 't' : 'f';
    case 'bigint':
      return 'n' + v.toString();
    default:
      break;
  }
  if (v instanceof Date) return 'd' + String(v.getTime());
  if (v instanceof ObjectId) return 'o' + v.toHexString();
  if (Array.isArray(v)) return '[' + v.map(keyOf).join(',') + ']';
  if (isPlainObject(v)) return '{' + Object.keys(v).map((k) => JSON.stringify(k) + ':' + keyOf(v[k])).join(',') + '}';
  if (v instanceof Binary) return 'x' + String(v.sub_type) + ':' + Buffer.from(v.buffer).toString('base64');
  if (v instanceof RegExp) return 'r/' + v.source + '/' + v.flags;
  if (v instanceof Long || v instanceof Double || v instanceof Int32 || v instanceof Decimal128) return keyOf(promoteScalar(v));
  const tag = (v as { _bsontype?: string })._bsontype ?? 'other';
  return tag + ':' + describe(v);
}

// MongoDB's cross-type sort order (MinKey < null < numbers < strings < objects < arrays < ...).
function typeRank(v: unknown): number {
  if (v === undefined || v === null) return 1;
  switch (typeof v) {
    case 'number':
    case 'bigint':
      return 2;
    case 'string':
      return 3;
    case 'boolean':
      return 8;
    default:
      break;
  }
  if (Array.isArray(v)) return 5;
  if (v instanceof Date) return 9;
  if (v instanceof ObjectId) return 7;
  if (v instanceof Binary) return 6;
  if (v instanceof RegExp) return 11;
  if (v instanceof Timestamp) return 10;
  if (v instanceof Long || v instanceof Double || v instanceof Int32 || v instanceof Decimal128) return 2;
  const tag = (v as { _bsontype?: string })._bsontype;
  if (tag === 'MinKey') return 0;
  if (tag === 'MaxKey') return 100;
  return 4;
}

function cmp<T extends string | number | bigint | boolean>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 2:
      return cmp(promoteScalar(a) as number, promoteScalar(b) as number);
    case 3:
      return cmp(a as string, b as string);
    case 8:
      return cmp(a as boolean, b as boolean);
    case 9:
      return cmp((a as Date).getTime(), (b as Date).getTime());
    case 7:
      // Byte order is hex order, without building two strings per comparison.
      return Buffer.compare((a as ObjectId).id, (b as ObjectId).id);
    case 10:
      return (a as Timestamp).compare(b as Timestamp);
    case 6: {
      const x = a as Binary;
      const y = b as Binary;
      return cmp(x.length(), y.length()) || cmp(x.sub_type, y.sub_type) || Buffer.compare(Buffer.from(x.buffer), Buffer.from(y.buffer));
    }
    case 5: {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
    case 4: {
      if (!isPlainObject(a) || !isPlainObject(b)) return cmp(describe(a), describe(b));
      const ka = Object.keys(a);
      const kb = Object.keys(b);
      for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
        const fa = ka[i]!;
        const fb = kb[i]!;
        const c = compareValues(a[fa], b[fb]) || cmp(fa, fb);
        if (c !== 0) return c;
      }
      return ka.length - kb.length;
    }
    case 11:
      return cmp(String(a as RegExp), String(b as RegExp));
    default:
      return 0;
  }
}

/** Reads a numeric command argument that may arrive as number, Int32, Double or Long. */
export function toNumber(v: unknown, fallback = 0): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  const p = promoteScalar(v);
  return typeof p === 'number' ? p : fallback;
}

export function truthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false) return false;
  const n = promoteScalar(v);
  return typeof n === 'number' ? n !== 0 : true;
}
