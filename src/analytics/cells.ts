// The cells of one dimension of a rollup part, packed in one binary value: each cell's key, counts, revenue and
// unique-visitor sketches (hll.ts byte format, human and bot). A part stores one such value per dimension, so a query
// projects the dimension it reads and the database hands over bytes it never decodes; writing a batch costs one value
// per dimension instead of a document field per counter.
//
// Layout (integers are unsigned LEB128 varints; signed ones zigzag-encoded first; all of them exact up to 2^53):
//   u8 FORMAT, varint cell count, then per cell:
//     varint key length, key (UTF-8), varint c, varint b, signed cv, u8 flags (1: human sketch, 2: bot sketch,
//     4: revenue), [varint length, human sketch], [varint length, bot sketch],
//     [varint currencies, per currency: varint length, code (ASCII), signed amount]
import { SINGLE_REGISTER_BYTES, unionBytes, registersToBytes, writeSingleRegister } from './hll.ts';

const FORMAT = 1;
const HUMANS = 1;
const BOTS = 2;
const REVENUE = 4;

/** Integer minor units per ISO 4217 currency code, e.g. `{ EUR: 1250, USD: 300 }`. */
export type Revenue = Record<string, number>;

/** Adds `from` into `into`, currency by currency. */
export function addRevenue(into: Revenue, from: Readonly<Revenue> | undefined | null): void {
  if (!from) return;
  for (const currency of Object.keys(from)) into[currency] = (into[currency] ?? 0) + from[currency]!;
}

/** A cell as read: counts, and its sketches as stored (null: no visitor of that kind). */
export interface Cell {
  key: string;
  /** Clicks, bots included. */
  c: number;
  /** Bot clicks. */
  b: number;
  /** Conversions attributed to clicks of the cell. */
  cv: number;
  /** Revenue of those conversions per currency (absent: none). */
  rev?: Revenue;
  humans: Uint8Array | null;
  bots: Uint8Array | null;
}

/** A cell being built: counts, and its sketches as visitor keys (hll.ts visitorKey) and/or stored sketches. */
export interface CellBuilder {
  c: number;
  b: number;
  cv: number;
  rev: Revenue | null;
  humanRegisters: number[] | null;
  botRegisters: number[] | null;
  humanParts: Uint8Array[] | null;
  botParts: Uint8Array[] | null;
}

export function newCell(): CellBuilder {
  return { c: 0, b: 0, cv: 0, rev: null, humanRegisters: null, botRegisters: null, humanParts: null, botParts: null };
}

/** Adds a stored cell into a builder (merging parts: counts add up, sketches unite). */
export function addCell(into: CellBuilder, cell: Cell): void {
  into.c += cell.c;
  into.b += cell.b;
  into.cv += cell.cv;
  if (cell.rev) addRevenue((into.rev ??= {}), cell.rev);
  if (cell.humans) (into.humanParts ??= []).push(cell.humans);
  if (cell.bots) (into.botParts ??= []).push(cell.bots);
}

/** One sketch out of register updates and stored sketches, at the precision given (stored ones carry their own). */
function sketchOf(registers: number[] | null, parts: Uint8Array[] | null, precision: number): Uint8Array | null {
  if (parts && parts.length > 0) {
    const p = parts[0]![1]!;
    const all = registers && registers.length > 0 ? [...parts, registersToBytes(registers, p)] : parts;
    return all.length === 1 ? all[0]! : unionBytes(all, p);
  }
  return registers && registers.length > 0 ? registersToBytes(registers, precision) : null;
}

/** The one register update of a sketch that has nothing else (no stored sketch), or -1. */
function single(registers: number[] | null, parts: Uint8Array[] | null): number {
  return registers !== null && registers.length === 1 && (parts === null || parts.length === 0) ? registers[0]! : -1;
}

/** A growing byte buffer, reused from one encoding to the next. */
class Writer {
  buf = Buffer.allocUnsafe(64 * 1024);
  o = 0;

  reserve(n: number): void {
    if (this.o + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.o + n));
    this.buf.copy(next, 0, 0, this.o);
    this.buf = next;
  }

  varint(n: number): void {
    this.reserve(8);
    const buf = this.buf;
    while (n >= 0x80) {
      buf[this.o++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    buf[this.o++] = n;
  }

  signed(n: number): void {
    this.varint(n >= 0 ? n * 2 : -n * 2 - 1);
  }

  byte(n: number): void {
    this.reserve(1);
    this.buf[this.o++] = n;
  }

  string(s: string): void {
    const length = Buffer.byteLength(s);
    this.varint(length);
    this.reserve(length);
    this.o += this.buf.write(s, this.o, 'utf8');
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.reserve(b.length);
    this.buf.set(b, this.o);
    this.o += b.length;
  }

  /** The sketch of one register update (hll.ts), with its length first: as `bytes` of registersToBytes([packed]). */
  singleRegister(packed: number, p: number): void {
    this.reserve(1 + SINGLE_REGISTER_BYTES);
    this.buf[this.o++] = SINGLE_REGISTER_BYTES;
    writeSingleRegister(this.buf, this.o, packed, p);
    this.o += SINGLE_REGISTER_BYTES;
  }

  /** Where `finish` writes the cell count. */
  private countAt = 0;

  /** Starts a value of packed cells: the format, then 4 bytes kept for the count (a padded varint), so cells are walked once. */
  begin(): void {
    this.o = 0;
    this.byte(FORMAT);
    this.reserve(4);
    this.countAt = this.o;
    this.o += 4;
  }

  /** A cell's key, counts and flags; its sketches and revenue follow. */
  cellHead(key: string, c: number, b: number, cv: number, flags: number): void {
    this.string(key);
    this.varint(c);
    this.varint(b);
    this.signed(cv);
    this.byte(flags);
  }

  /** Writes the count of the cells written since `begin`, and takes the bytes. */
  finish(count: number): Buffer {
    if (count >= 2 ** 28) throw new RangeError('too many cells for one rollup part');
    const { buf, countAt } = this;
    buf[countAt] = (count & 0x7f) | 0x80;
    buf[countAt + 1] = ((count >>> 7) & 0x7f) | 0x80;
    buf[countAt + 2] = ((count >>> 14) & 0x7f) | 0x80;
    buf[countAt + 3] = (count >>> 21) & 0x7f;
    return this.take();
  }

  /** The bytes written, copied out (small ones from Node's buffer pool), and the writer emptied. */
  private take(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.o));
    this.o = 0;
    return out;
  }
}

const writer = new Writer();

/**
 * Packs the cells of one dimension. Sketches built from register updates take `precision`; empty cells (no click, no
 * conversion, no revenue) are left out.
 */
export function encodeCells(cells: Iterable<[string, CellBuilder]>, precision: number): Buffer {
  const w = writer;
  w.begin();
  let count = 0;
  for (const [key, cell] of cells) {
    const revenue = cell.rev && Object.keys(cell.rev).some((currency) => cell.rev![currency] !== 0) ? cell.rev : null;
    // A sketch of one visitor is written as it is (most cells of a batch), others built first.
    const oneHuman = single(cell.humanRegisters, cell.humanParts);
    const oneBot = single(cell.botRegisters, cell.botParts);
    const humans = oneHuman < 0 ? sketchOf(cell.humanRegisters, cell.humanParts, precision) : null;
    const bots = oneBot < 0 ? sketchOf(cell.botRegisters, cell.botParts, precision) : null;
    const hasHumans = humans !== null || oneHuman >= 0;
    const hasBots = bots !== null || oneBot >= 0;
    if (cell.c === 0 && cell.cv === 0 && !revenue && !hasHumans && !hasBots) continue;
    count++;
    w.cellHead(key, cell.c, cell.b, cell.cv, (hasHumans ? HUMANS : 0) | (hasBots ? BOTS : 0) | (revenue ? REVENUE : 0));
    if (humans) w.bytes(humans);
    else if (oneHuman >= 0) w.singleRegister(oneHuman, precision);
    if (bots) w.bytes(bots);
    else if (oneBot >= 0) w.singleRegister(oneBot, precision);
    if (revenue) {
      const currencies = Object.keys(revenue).filter((currency) => revenue[currency] !== 0);
      w.varint(currencies.length);
      for (const currency of currencies) {
        w.string(currency);
        w.signed(revenue[currency]!);
      }
    }
  }
  return w.finish(count);
}

/**
 * The packed cells of one click (a dimension of a link's day that a batch has one click for): the bytes encodeCells
 * gives for a cell `key` of one click, a human or a bot, whose sketch holds the register update `packed`.
 */
export function encodeOneClick(key: string, bot: boolean, packed: number, precision: number): Buffer {
  const w = writer;
  w.begin();
  w.cellHead(key, 1, bot ? 1 : 0, 0, bot ? BOTS : HUMANS);
  w.singleRegister(packed, precision);
  return w.finish(1);
}

/** Reads packed cells; `keys` keeps only those cells (null: all). Sketches are views into `bytes`. */
export function decodeCells(bytes: Uint8Array, keys: ReadonlySet<string> | null = null): Cell[] {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = 0;
  const fail = (): never => {
    throw new RangeError('malformed rollup cells');
  };
  const varint = (): number => {
    let n = 0;
    let scale = 1;
    for (;;) {
      if (o >= buf.length) fail();
      const byte = buf[o++]!;
      n += (byte & 0x7f) * scale;
      if (byte < 0x80) return n;
      scale *= 0x80;
      if (scale > 2 ** 56) fail();
    }
  };
  const signed = (): number => {
    const z = varint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  };
  const slice = (): Buffer => {
    const length = varint();
    if (o + length > buf.length) fail();
    const out = buf.subarray(o, o + length);
    o += length;
    return out;
  };
  if (buf.length === 0 || buf[o++] !== FORMAT) fail();
  const count = varint();
  const out: Cell[] = [];
  for (let i = 0; i < count; i++) {
    const keyBytes = slice();
    const key = keyBytes.toString('utf8');
    const c = varint();
    const b = varint();
    const cv = signed();
    if (o >= buf.length) fail();
    const flags = buf[o++]!;
    const humans = flags & HUMANS ? slice() : null;
    const bots = flags & BOTS ? slice() : null;
    let rev: Revenue | undefined;
    if (flags & REVENUE) {
      rev = {};
      const currencies = varint();
      for (let k = 0; k < currencies; k++) {
        const currency = slice().toString('latin1');
        rev[currency] = signed();
      }
    }
    if (keys && !keys.has(key)) continue;
    const cell: Cell = { key, c, b, cv, humans, bots };
    if (rev) cell.rev = rev;
    out.push(cell);
  }
  if (o !== buf.length) fail();
  return out;
}
