import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The openly licensed geography data shipped as npm dependencies, used when the operator configured no MaxMind
 * database of the same kind (docs/geography.md):
 * - country: `@ip-location-db/geo-whois-asn-country-mmdb`, an MMDB of `{ country_code }` records (CC0, built from
 *   RIR WHOIS data the NRO publishes under CC BY 4.0);
 * - ASN: `@ip-location-db/asn`, CSV ranges (CC BY 4.0: RouteViews, DB-IP, NRO). No openly licensed ASN database
 *   is published in MMDB format, so the ranges are read into sorted typed arrays at start-up.
 */
const require = createRequire(import.meta.url);

function packageDir(name: string): string | null {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    return null;
  }
}

export const OPEN_COUNTRY_PACKAGE = '@ip-location-db/geo-whois-asn-country-mmdb';
export const OPEN_ASN_PACKAGE = '@ip-location-db/asn';

/** The packaged country database (IPv4 and IPv6 in one tree), or null when the package is not installed. */
export function openCountryDbPath(): string | null {
  const dir = packageDir(OPEN_COUNTRY_PACKAGE);
  return dir === null ? null : join(dir, 'geo-whois-asn-country.mmdb');
}

/** The packaged ASN range files, or null when the package is not installed. */
export function openAsnPaths(): { v4: string; v6: string } | null {
  const dir = packageDir(OPEN_ASN_PACKAGE);
  return dir === null ? null : { v4: join(dir, 'asn-ipv4-num.csv'), v6: join(dir, 'asn-ipv6.csv') };
}

/**
 * Inclusive address ranges to AS numbers, found by binary search over the range starts. IPv4 ranges live in
 * Uint32Arrays (12 bytes a range); an IPv6 address is four 32-bit words, big-endian, compared word by word.
 * Parsing is a hand-written scan over character codes: the files hold half a million rows and are read at every
 * start of a redirect process.
 */
export class AsnRanges {
  private readonly v4Start: Uint32Array;
  private readonly v4End: Uint32Array;
  private readonly v4Asn: Uint32Array;
  private readonly v6Start: Uint32Array;
  private readonly v6End: Uint32Array;
  private readonly v6Asn: Uint32Array;

  private constructor(v4: Columns, v6: Columns) {
    this.v4Start = v4.start.subarray(0, v4.count);
    this.v4End = v4.end.subarray(0, v4.count);
    this.v4Asn = v4.asn.subarray(0, v4.count);
    this.v6Start = v6.start.subarray(0, v6.count * 4);
    this.v6End = v6.end.subarray(0, v6.count * 4);
    this.v6Asn = v6.asn.subarray(0, v6.count);
  }

  get size(): number {
    return this.v4Asn.length + this.v6Asn.length;
  }

  /**
   * Parses `start,end,asn,organisation` CSV files: IPv4 with numeric addresses, IPv6 with textual ones (the
   * organisation is not kept). Rows must be sorted by start and not overlap, as the package ships them; a row
   * that breaks the order, or does not parse, is dropped rather than trusted.
   */
  static parse(v4Csv: string, v6Csv: string): AsnRanges {
    const v4 = columns(1, 1 << 19);
    const v6 = columns(4, 1 << 17);
    const row = { start: new Uint32Array(4), end: new Uint32Array(4), asn: 0 };
    let at = 0;
    while (at < v4Csv.length) {
      const next = nextLine(v4Csv, at);
      if (parseV4Row(v4Csv, at, next, row) && (v4.count === 0 || row.start[0]! > v4.end[v4.count - 1]!)) push(v4, 1, row);
      at = next + 1;
    }
    at = 0;
    while (at < v6Csv.length) {
      const next = nextLine(v6Csv, at);
      if (parseV6Row(v6Csv, at, next, row) && (v6.count === 0 || compare(row.start, 0, v6.end, (v6.count - 1) * 4) > 0)) push(v6, 4, row);
      at = next + 1;
    }
    return new AsnRanges(v4, v6);
  }

  static async load(paths: { v4: string; v6: string }): Promise<AsnRanges> {
    const [v4, v6] = await Promise.all([readFile(paths.v4, 'latin1'), readFile(paths.v6, 'latin1')]);
    return AsnRanges.parse(v4, v6);
  }

  /** The AS number announcing a (valid, normalised) address, or null. */
  lookup(ip: string): number | null {
    if (!ip.includes(':')) {
      const value = parseV4(ip, 0, ip.length);
      if (value < 0) return null;
      const at = lastAtOrBelow(this.v4Asn.length, (i) => this.v4Start[i]! <= value);
      return at >= 0 && value <= this.v4End[at]! ? this.v4Asn[at]! : null;
    }
    const words = new Uint32Array(4);
    if (!parseV6(ip, 0, ip.length, words)) return null;
    if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return this.lookup(v4Text(words[3]!));
    const at = lastAtOrBelow(this.v6Asn.length, (i) => compare(this.v6Start, i * 4, words, 0) <= 0);
    return at >= 0 && compare(words, 0, this.v6End, at * 4) <= 0 ? this.v6Asn[at]! : null;
  }
}

interface Columns {
  start: Uint32Array;
  end: Uint32Array;
  asn: Uint32Array;
  count: number;
}

function columns(width: number, capacity: number): Columns {
  return { start: new Uint32Array(capacity * width), end: new Uint32Array(capacity * width), asn: new Uint32Array(capacity), count: 0 };
}

function push(into: Columns, width: number, row: { start: Uint32Array; end: Uint32Array; asn: number }): void {
  if (into.count === into.asn.length) {
    const grown = columns(width, into.asn.length * 2);
    grown.start.set(into.start);
    grown.end.set(into.end);
    grown.asn.set(into.asn);
    into.start = grown.start;
    into.end = grown.end;
    into.asn = grown.asn;
  }
  for (let w = 0; w < width; w++) {
    into.start[into.count * width + w] = row.start[w]!;
    into.end[into.count * width + w] = row.end[w]!;
  }
  into.asn[into.count] = row.asn;
  into.count++;
}

/** Word-by-word comparison of two four-word addresses. */
function compare(a: Uint32Array, aAt: number, b: Uint32Array, bAt: number): number {
  for (let w = 0; w < 4; w++) {
    const d = a[aAt + w]! - b[bAt + w]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** The last index for which `atOrBelow` holds, in an array where it holds for a prefix; -1 when for none. */
function lastAtOrBelow(length: number, atOrBelow: (i: number) => boolean): number {
  let low = 0;
  let high = length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    if (atOrBelow(mid)) {
      found = mid;
      low = mid + 1;
    } else {
      high = mid - 1;
    }
  }
  return found;
}

function nextLine(text: string, from: number): number {
  const eol = text.indexOf('\n', from);
  return eol === -1 ? text.length : eol;
}

const COMMA = 44;
const ZERO = 48;
const NINE = 57;

/** A decimal integer from `from` to the next comma (before `limit`); -1 when malformed or above 2^32-1. */
function decimalField(text: string, from: number, limit: number): { value: number; next: number } {
  let value = 0;
  let at = from;
  for (; at < limit; at++) {
    const c = text.charCodeAt(at);
    if (c === COMMA) break;
    if (c < ZERO || c > NINE) return { value: -1, next: at };
    value = value * 10 + (c - ZERO);
  }
  return { value: at === from || value > 0xffffffff ? -1 : value, next: at };
}

function parseV4Row(text: string, from: number, limit: number, row: { start: Uint32Array; end: Uint32Array; asn: number }): boolean {
  const start = decimalField(text, from, limit);
  if (start.value < 0 || start.next >= limit) return false;
  const end = decimalField(text, start.next + 1, limit);
  if (end.value < start.value || end.next >= limit) return false;
  const asn = decimalField(text, end.next + 1, limit);
  if (asn.value <= 0) return false;
  row.start[0] = start.value;
  row.end[0] = end.value;
  row.asn = asn.value;
  return true;
}

function parseV6Row(text: string, from: number, limit: number, row: { start: Uint32Array; end: Uint32Array; asn: number }): boolean {
  const firstComma = text.indexOf(',', from);
  if (firstComma === -1 || firstComma >= limit || !parseV6(text, from, firstComma, row.start)) return false;
  const secondComma = text.indexOf(',', firstComma + 1);
  if (secondComma === -1 || secondComma >= limit || !parseV6(text, firstComma + 1, secondComma, row.end)) return false;
  if (compare(row.end, 0, row.start, 0) < 0) return false;
  const asn = decimalField(text, secondComma + 1, limit);
  if (asn.value <= 0) return false;
  row.asn = asn.value;
  return true;
}

/** Dotted IPv4 to its 32-bit value, or -1. */
function parseV4(text: string, from: number, to: number): number {
  let value = 0;
  let part = -1;
  let parts = 0;
  for (let at = from; at <= to; at++) {
    const c = at === to ? 46 : text.charCodeAt(at);
    if (c === 46) {
      if (part < 0 || part > 255) return -1;
      value = value * 256 + part;
      part = -1;
      parts++;
    } else if (c >= ZERO && c <= NINE) {
      part = (part < 0 ? 0 : part * 10) + (c - ZERO);
    } else {
      return -1;
    }
  }
  return parts === 4 ? value : -1;
}

function hexDigit(c: number): number {
  if (c >= ZERO && c <= NINE) return c - ZERO;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Textual IPv6 (with `::`, and an embedded dotted IPv4 tail) into four big-endian words; false when malformed. */
const GROUPS = new Uint32Array(8);

function parseV6(text: string, from: number, to: number, words: Uint32Array): boolean {
  const groups = GROUPS;
  let count = 0;
  let gap = -1;
  let at = from;
  if (text.charCodeAt(at) === 58 && text.charCodeAt(at + 1) === 58) {
    gap = 0;
    at += 2;
  }
  while (at < to) {
    let end = at;
    let value = 0;
    let dotted = false;
    while (end < to && text.charCodeAt(end) !== 58) {
      if (text.charCodeAt(end) === 46) dotted = true;
      end++;
    }
    if (dotted) {
      const v4 = parseV4(text, at, end);
      if (v4 < 0 || end !== to || count > 6) return false;
      groups[count++] = Math.floor(v4 / 65536);
      groups[count++] = v4 % 65536;
      break;
    }
    if (end === at || end - at > 4 || count === 8) return false;
    for (let i = at; i < end; i++) {
      const d = hexDigit(text.charCodeAt(i));
      if (d < 0) return false;
      value = value * 16 + d;
    }
    groups[count++] = value;
    if (end === to) break;
    if (text.charCodeAt(end + 1) === 58) {
      if (gap >= 0) return false;
      gap = count;
      at = end + 2;
    } else {
      at = end + 1;
      if (at === to) return false;
    }
  }
  if (gap < 0 ? count !== 8 : count > 7) return false;
  if (gap >= 0) {
    // Move the groups after `::` to the end, zeros in between.
    const shift = 8 - count;
    for (let i = count - 1; i >= gap; i--) groups[i + shift] = groups[i]!;
    for (let i = gap; i < gap + shift; i++) groups[i] = 0;
  }
  for (let w = 0; w < 4; w++) words[w] = groups[w * 2]! * 65536 + groups[w * 2 + 1]!;
  return true;
}

function v4Text(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}
