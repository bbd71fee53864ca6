// The fields of a stored click that a CSV export row is made of, read straight from the click's BSON as the cursor
// hands it over (raw). bson's generic `deserialize` builds every field of every click, each through a keyed store and
// each nested object through a copy of its options: it was the largest share of the export's CPU per row. This reads
// the row's fields into objects of one shape and steps over the others (the workspace, counted and rolled-up marks,
// the expiry, the visitor id, the rest of the decision). Anything it does not expect (a type our code does not store,
// a missing field, malformed bytes) answers null, and the caller decodes that click the generic way.
import type { ClickDoc } from '../clicks/click.store.ts';

/** The visitor fields of a row. */
export const ROW_VISITOR = ['country', 'region', 'city', 'asn', 'device', 'os', 'browser', 'language', 'referer', 'visitor_type', 'verified_bot', 'bot_name', 'proxy_type', 'quality', 'visit', 'ip'] as const;
/** The decision fields of a row. */
export const ROW_DECISION = ['variant_index', 'destination_id', 'rule_id'] as const;

/** A stored click as an export row reads it. */
export type RowClick = Pick<ClickDoc, '_id' | 'ts' | 'link_id' | 'domain' | 'slug' | 'destination' | 'outcome' | 'conversions' | 'revenue'> & {
  visitor: Pick<ClickDoc['visitor'], (typeof ROW_VISITOR)[number]>;
  decision: Pick<ClickDoc['decision'], (typeof ROW_DECISION)[number]>;
};

const DOUBLE = 0x01;
const STRING = 0x02;
const DOC = 0x03;
const ARRAY = 0x04;
const BINARY = 0x05;
const OBJECT_ID = 0x07;
const BOOL = 0x08;
const DATE = 0x09;
const NULL = 0x0a;
const INT32 = 0x10;
const TIMESTAMP = 0x11;
const INT64 = 0x12;
const DECIMAL = 0x13;

/** Thrown inside the reader at the first thing it does not expect; readRowClick answers null. */
const UNEXPECTED = new Error('not a click this reader knows');

function fail(): never {
  throw UNEXPECTED;
}

/** Bytes of the value of an element of `type` at `at` (bounded by `end`), for the types a click may hold. */
function valueSize(buf: Buffer, type: number, at: number, end: number): number {
  let size: number;
  switch (type) {
    case DOUBLE:
    case DATE:
    case INT64:
    case TIMESTAMP:
      size = 8;
      break;
    case STRING:
      size = at + 4 <= end ? 4 + buf.readInt32LE(at) : -1;
      break;
    case DOC:
    case ARRAY:
      size = at + 4 <= end ? buf.readInt32LE(at) : -1;
      break;
    case BINARY:
      size = at + 4 <= end ? 5 + buf.readInt32LE(at) : -1;
      break;
    case OBJECT_ID:
      size = 12;
      break;
    case BOOL:
      size = 1;
      break;
    case NULL:
      size = 0;
      break;
    case INT32:
      size = 4;
      break;
    case DECIMAL:
      size = 16;
      break;
    default:
      return fail();
  }
  if (size < 0 || at + size > end) fail();
  return size;
}

/** A string value (type STRING, `size` bytes at `at`). */
function string(buf: Buffer, type: number, at: number, size: number): string {
  if (type !== STRING || size < 5 || buf[at + size - 1] !== 0) fail();
  return buf.toString('utf8', at + 4, at + size - 1);
}

function stringOrNull(buf: Buffer, type: number, at: number, size: number): string | null {
  return type === NULL ? null : string(buf, type, at, size);
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function number(buf: Buffer, type: number, at: number): number {
  if (type === INT32) return buf.readInt32LE(at);
  if (type === DOUBLE) return buf.readDoubleLE(at);
  if (type === INT64) {
    // bson promotes a long to a number only while it is exact.
    const long = buf.readBigInt64LE(at);
    if (long > SAFE || long < -SAFE) fail();
    return Number(long);
  }
  return fail();
}

function numberOrNull(buf: Buffer, type: number, at: number): number | null {
  return type === NULL ? null : number(buf, type, at);
}

function bool(buf: Buffer, type: number, at: number): boolean {
  if (type !== BOOL || buf[at]! > 1) fail();
  return buf[at] === 1;
}

/**
 * The field names a level of the reader looks for, recognised by their bytes (decoding every element's name to
 * compare it cost more than reading its value): by length, first and last byte, then byte by byte.
 */
class Names {
  private readonly byKey = new Map<number, Array<{ name: string; bytes: Buffer }>>();

  constructor(names: readonly string[]) {
    for (const name of names) {
      const bytes = Buffer.from(name, 'utf8');
      const key = Names.key(bytes, 0, bytes.length);
      const list = this.byKey.get(key);
      if (list) list.push({ name, bytes });
      else this.byKey.set(key, [{ name, bytes }]);
    }
  }

  private static key(buf: Buffer, start: number, end: number): number {
    return (end - start) * 65536 + buf[start]! * 256 + buf[end - 1]!;
  }

  /** The name whose bytes are `buf[start, end)`, or undefined for a name not looked for. */
  find(buf: Buffer, start: number, end: number): string | undefined {
    if (end === start) return undefined;
    const list = this.byKey.get(Names.key(buf, start, end));
    if (!list) return undefined;
    next: for (const { name, bytes } of list) {
      for (let i = 0; i < bytes.length; i++) if (buf[start + i] !== bytes[i]) continue next;
      return name;
    }
    return undefined;
  }
}

/**
 * Walks the elements of the document at `start` (`size` bytes), handing the name (among `names`), type and value
 * position of each to `take`; elements of other names are stepped over. `names` null: every name, read as UTF-8.
 */
function walk(buf: Buffer, start: number, size: number, names: Names | null, take: (name: string, type: number, at: number, size: number) => void): void {
  if (size < 5 || start + size > buf.length || buf.readInt32LE(start) !== size || buf[start + size - 1] !== 0) fail();
  const end = start + size - 1;
  let o = start + 4;
  while (o < end) {
    const type = buf[o++]!;
    const nameStart = o;
    while (o < end && buf[o] !== 0) o++;
    if (o >= end) fail();
    const name = names ? names.find(buf, nameStart, o) : buf.toString('utf8', nameStart, o);
    o++;
    const valueBytes = valueSize(buf, type, o, end);
    if (name !== undefined) take(name, type, o, valueBytes);
    o += valueBytes;
  }
}

/** `read` (a mask of the fields of a level read so far) with `bit` added: a field twice is no click our code stored. */
function once(read: number, bit: number): number {
  if (read & bit) fail();
  return read | bit;
}

/** Bit of each visitor field in a mask of those read (all must be). */
const VISITOR_BIT: Readonly<Record<string, number>> = Object.fromEntries(ROW_VISITOR.map((f, i) => [f, 1 << i]));
const ALL_VISITOR = (1 << ROW_VISITOR.length) - 1;
const TOP = ['_id', 'ts', 'link_id', 'domain', 'slug', 'destination', 'outcome', 'visitor', 'decision'] as const;
const TOP_BIT: Readonly<Record<string, number>> = Object.fromEntries(TOP.map((f, i) => [f, 1 << i]));
const ALL_TOP = (1 << TOP.length) - 1;
const ALL_DECISION = (1 << ROW_DECISION.length) - 1;
const TOP_NAMES = new Names([...TOP, 'conversions', 'revenue']);
const VISITOR_NAMES = new Names(ROW_VISITOR);
const DECISION_NAMES = new Names(ROW_DECISION);

function readVisitor(buf: Buffer, at: number, size: number): RowClick['visitor'] {
  const v: RowClick['visitor'] = {
    country: null,
    region: null,
    city: null,
    asn: null,
    device: 'desktop',
    os: 'other',
    browser: null,
    language: null,
    referer: null,
    visitor_type: 'human',
    verified_bot: false,
    bot_name: null,
    proxy_type: null,
    quality: 0,
    visit: 'first',
    ip: null,
  };
  const fields = v as Record<string, unknown>;
  let read = 0;
  walk(buf, at, size, VISITOR_NAMES, (name, type, o, n) => {
    switch (name) {
      case 'country':
      case 'region':
      case 'city':
      case 'browser':
      case 'language':
      case 'referer':
      case 'bot_name':
      case 'ip':
      case 'proxy_type':
        fields[name] = stringOrNull(buf, type, o, n);
        break;
      // The enumerations (device, os, visitor type, visit) as stored: the row writes them as they are.
      case 'device':
      case 'os':
      case 'visitor_type':
      case 'visit':
        fields[name] = string(buf, type, o, n);
        break;
      case 'asn':
        v.asn = numberOrNull(buf, type, o);
        break;
      case 'quality':
        v.quality = number(buf, type, o);
        break;
      case 'verified_bot':
        v.verified_bot = bool(buf, type, o);
        break;
      default:
        return;
    }
    read = once(read, VISITOR_BIT[name]!);
  });
  if (read !== ALL_VISITOR) fail();
  return v;
}

function readDecision(buf: Buffer, at: number, size: number): RowClick['decision'] {
  const d: RowClick['decision'] = { variant_index: null, destination_id: null, rule_id: null };
  let read = 0;
  walk(buf, at, size, DECISION_NAMES, (name, type, o, n) => {
    let bit: number;
    if (name === 'variant_index') {
      d.variant_index = numberOrNull(buf, type, o);
      bit = 1;
    } else if (name === 'destination_id') {
      d.destination_id = stringOrNull(buf, type, o, n);
      bit = 2;
    } else if (name === 'rule_id') {
      d.rule_id = stringOrNull(buf, type, o, n);
      bit = 4;
    } else return;
    read = once(read, bit);
  });
  if (read !== ALL_DECISION) fail();
  return d;
}

/** Revenue per currency: numbers only. */
function readRevenue(buf: Buffer, at: number, size: number): Record<string, number> {
  const revenue: Record<string, number> = {};
  walk(buf, at, size, null, (name, type, o) => {
    if (Object.hasOwn(revenue, name) || name === '__proto__') fail();
    revenue[name] = number(buf, type, o);
  });
  return revenue;
}

/** The row's fields of the stored click `bytes`, or null when it holds something this reader does not expect. */
export function readRowClick(bytes: Uint8Array): RowClick | null {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const click: RowClick = {
    _id: '',
    ts: new Date(0),
    link_id: '',
    domain: '',
    slug: '',
    destination: null,
    outcome: '',
    conversions: undefined,
    revenue: undefined,
    visitor: undefined as unknown as RowClick['visitor'],
    decision: undefined as unknown as RowClick['decision'],
  };
  let read = 0;
  try {
    if (buf.length < 5) fail();
    walk(buf, 0, buf.length, TOP_NAMES, (name, type, o, n) => {
      switch (name) {
        case '_id':
        case 'link_id':
        case 'domain':
        case 'slug':
        case 'outcome':
          click[name] = string(buf, type, o, n);
          break;
        case 'destination':
          click.destination = stringOrNull(buf, type, o, n);
          break;
        case 'ts':
          if (type !== DATE) fail();
          click.ts = new Date(buf.readUInt32LE(o) + buf.readInt32LE(o + 4) * 2 ** 32);
          break;
        case 'visitor':
          if (type !== DOC) fail();
          click.visitor = readVisitor(buf, o, n);
          break;
        case 'decision':
          if (type !== DOC) fail();
          click.decision = readDecision(buf, o, n);
          break;
        case 'conversions':
          if (click.conversions !== undefined) fail();
          click.conversions = number(buf, type, o);
          return;
        case 'revenue':
          if (type !== DOC || click.revenue !== undefined) fail();
          click.revenue = readRevenue(buf, o, n);
          return;
        default:
          return;
      }
      read = once(read, TOP_BIT[name]!);
    });
    if (read !== ALL_TOP) fail();
  } catch (error) {
    if (error === UNEXPECTED) return null;
    throw error;
  }
  return click;
}
