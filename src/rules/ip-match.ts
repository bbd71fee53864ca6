import ipaddr from 'ipaddr.js';

/** Membership test for a set of addresses and CIDR ranges (rule `ip` field, workspace IP lists). */
export interface IpMatcher {
  has(ip: string): boolean;
}

/** IPv4 as an unsigned 32-bit number; IPv6 as its eight 16-bit groups. IPv4-mapped IPv6 is IPv4. */
type Address = { v4: true; value: number } | { v4: false; groups: readonly number[] };

type Entry = Address & { prefix: number };

// ---------------------------------------------------------------------------------------------------------------
// List entries, validated once per cache fill with ipaddr.js.
// ---------------------------------------------------------------------------------------------------------------

/**
 * Strict: four-part decimal IPv4 or IPv6, no zone id. ipaddr.js alone would also accept "127.1" or "0x7f000001",
 * which nobody means in an allow/deny list. ipaddr.js validates; the value comes from the same parser as the
 * visitor's address, so both sides agree on every form (ipaddr.js reads the deprecated "::1.2.3.4" as mapped).
 */
function parseListAddress(text: string): Address | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return parseVisitorAddress(text);
  if (!text.includes(':') || text.includes('%') || !ipaddr.IPv6.isValid(text)) return null;
  return parseVisitorAddress(text);
}

function parseEntry(text: string): Entry | null {
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  const addressText = slash === -1 ? trimmed : trimmed.slice(0, slash);
  const address = parseListAddress(addressText);
  if (!address) return null;
  if (slash === -1) return { ...address, prefix: address.v4 ? 32 : 128 };
  const prefixText = trimmed.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  let prefix = Number(prefixText);
  // An IPv4-mapped IPv6 range (::ffff:10.0.0.0/104) became IPv4 above: its prefix counts the 96 mapped bits too.
  if (address.v4 && addressText.includes(':')) {
    if (prefix < 96) return null;
    prefix -= 96;
  }
  if (prefix > (address.v4 ? 32 : 128)) return null;
  return { ...address, prefix };
}

/** True for an IPv4/IPv6 address or CIDR as accepted in rules and IP lists. */
export function isIpOrCidr(text: string): boolean {
  return parseEntry(text) !== null;
}

// ---------------------------------------------------------------------------------------------------------------
// Addresses to values. ipaddr.js parses an IPv4 address about five times and an IPv6 address about twenty times
// slower than this (it builds regular expressions per call): on the visitor's address, per request and per rule,
// that would cost more than all the rest of a twenty-rule decision. This parser accepts exactly the strict forms ipaddr.js validates above (the unit tests hold the two to
// the same answers) in a fraction of that. IPv4-mapped IPv6 (::ffff:a.b.c.d) becomes IPv4, so an entry and a
// visitor address match whichever notation the socket or the list used.
// ---------------------------------------------------------------------------------------------------------------

function parseV4(text: string): number | null {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 46) {
      if (digits === 0 || ++dots > 3) return null;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
    } else if (code >= 48 && code <= 57) {
      if (digits > 0 && octet === 0) return null; // a leading zero (octal to some parsers) is refused
      octet = octet * 10 + (code - 48);
      if (++digits > 3 || octet > 255) return null;
    } else {
      return null;
    }
  }
  if (dots !== 3 || digits === 0) return null;
  return value * 256 + octet;
}

function parseHexGroup(text: string): number | null {
  if (text.length === 0 || text.length > 4) return null;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i) | 0x20; // lower-cases A–F, leaves digits alone
    const digit = code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : -1;
    if (digit < 0) return null;
    value = value * 16 + digit;
  }
  return value;
}

/** Appends the 16-bit groups of one side of "::"; an embedded IPv4 may only end the address. */
function pushGroups(text: string, endsAddress: boolean, out: number[]): boolean {
  if (text === '') return true;
  const parts = text.split(':');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (endsAddress && i === parts.length - 1 && part.includes('.')) {
      const v4 = parseV4(part);
      if (v4 === null) return false;
      out.push(v4 >>> 16, v4 & 0xffff);
    } else {
      const group = parseHexGroup(part);
      if (group === null) return false;
      out.push(group);
    }
  }
  return true;
}

function parseVisitorAddress(text: string): Address | null {
  if (!text.includes(':')) {
    const value = parseV4(text);
    return value === null ? null : { v4: true, value };
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const compressed = halves.length === 2;
  const head: number[] = [];
  const tail: number[] = [];
  if (!pushGroups(halves[0]!, !compressed, head)) return null;
  if (compressed && !pushGroups(halves[1]!, true, tail)) return null;
  if (compressed ? head.length + tail.length > 7 : head.length !== 8) return null;
  const groups = compressed ? [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail] : head;
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff) {
    return { v4: true, value: ((groups[6]! << 16) | groups[7]!) >>> 0 };
  }
  return { v4: false, groups };
}

// ---------------------------------------------------------------------------------------------------------------
// Matching: one Set per prefix length, holding the masked networks of that length.
// ---------------------------------------------------------------------------------------------------------------

function maskV4(value: number, prefix: number): number {
  return prefix === 0 ? 0 : (value & (0xffffffff << (32 - prefix))) >>> 0;
}

/** The first ⌈prefix/16⌉ groups, the last one masked, as a short string key (one Set per length, so no ambiguity). */
function keyV6(groups: readonly number[], prefix: number): string {
  let key = '';
  const whole = prefix >> 4;
  for (let i = 0; i < whole; i++) key += String.fromCharCode(groups[i]!);
  const bits = prefix & 15;
  if (bits > 0) key += String.fromCharCode(groups[whole]! & (0xffff << (16 - bits)) & 0xffff);
  return key;
}

/**
 * Compiles entries once; a lookup then costs one Set probe per distinct prefix length (not per entry), so a list of
 * a thousand CIDRs stays a handful of hash lookups. Invalid entries are ignored (they were validated on write; a
 * stale one must not break redirects).
 */
export function compileIpMatcher(entries: readonly string[]): IpMatcher {
  const v4ByPrefix = new Map<number, Set<number>>();
  const v6ByPrefix = new Map<number, Set<string>>();
  for (const text of entries) {
    const entry = parseEntry(text);
    if (!entry) continue;
    if (entry.v4) {
      const set = v4ByPrefix.get(entry.prefix) ?? new Set<number>();
      set.add(maskV4(entry.value, entry.prefix));
      v4ByPrefix.set(entry.prefix, set);
    } else {
      const set = v6ByPrefix.get(entry.prefix) ?? new Set<string>();
      set.add(keyV6(entry.groups, entry.prefix));
      v6ByPrefix.set(entry.prefix, set);
    }
  }
  const v4 = [...v4ByPrefix.entries()];
  const v6 = [...v6ByPrefix.entries()];
  if (v4.length === 0 && v6.length === 0) return { has: () => false };
  return {
    has(ip: string): boolean {
      const address = parseVisitorAddress(ip);
      if (address === null) return false;
      if (address.v4) {
        for (const [prefix, set] of v4) if (set.has(maskV4(address.value, prefix))) return true;
        return false;
      }
      for (const [prefix, set] of v6) if (set.has(keyV6(address.groups, prefix))) return true;
      return false;
    },
  };
}
