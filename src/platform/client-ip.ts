import { createHmac, hash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';
import ipaddr from 'ipaddr.js';

/**
 * The visitor's address: the socket peer, or, behind `trustedProxyHops` proxies that each append the address they
 * saw to X-Forwarded-For, the entry that many hops from the right (the last hop is the socket itself). Entries left
 * of that one were written by the client and prove nothing. A header shorter than the hop count yields its
 * left-most entry, the farthest address any trusted proxy vouched for. Null when nothing valid is found.
 */
export function clientIp(headers: IncomingHttpHeaders, remoteAddress: string | undefined, trustedProxyHops: number): string | null {
  if (trustedProxyHops > 0) {
    const forwarded = headers['x-forwarded-for'];
    if (forwarded !== undefined && forwarded !== '') {
      const entry = hopFromRight(Array.isArray(forwarded) ? forwarded.join(',') : forwarded, trustedProxyHops);
      return entry === null ? null : normalizeIp(entry);
    }
  }
  return remoteAddress === undefined ? null : normalizeIp(remoteAddress);
}

/** The n-th comma-separated entry from the right (1: the last), or the first when there are fewer; no split array. */
function hopFromRight(list: string, hops: number): string | null {
  let end = list.length;
  for (let hop = 1; ; hop++) {
    const comma = list.lastIndexOf(',', end - 1);
    if (hop === hops || comma === -1) {
      const entry = list.slice(comma + 1, end).trim();
      return entry === '' ? null : entry;
    }
    end = comma;
  }
}

/**
 * A textual address in the form the rest of the redirect uses: IPv4 dotted quad (also out of an IPv4-mapped IPv6
 * address), IPv6 in RFC 5952 form; a port some proxies add (`1.2.3.4:5678`, `[2001:db8::1]:443`) is dropped.
 * Null for anything else (including "127.1" style shorthands, which no proxy writes).
 */
export function normalizeIp(text: string): string | null {
  if (isIPv4(text)) return text;
  let candidate = text;
  if (candidate.startsWith('[')) {
    const close = candidate.indexOf(']');
    if (close === -1) return null;
    candidate = candidate.slice(1, close);
  } else if (candidate.indexOf(':') !== -1 && candidate.indexOf(':') === candidate.lastIndexOf(':')) {
    // exactly one colon: IPv4 with a port
    const host = candidate.slice(0, candidate.indexOf(':'));
    return isIPv4(host) ? host : null;
  }
  if (candidate.length > 7 && candidate.slice(0, 7).toLowerCase() === '::ffff:' && isIPv4(candidate.slice(7))) {
    return candidate.slice(7);
  }
  const zone = candidate.indexOf('%');
  if (zone !== -1) candidate = candidate.slice(0, zone);
  if (!isIPv6(candidate)) return null;
  const parsed = ipaddr.IPv6.parse(candidate);
  return parsed.isIPv4MappedAddress() ? parsed.toIPv4Address().toString() : parsed.toString();
}

export type IpStorage = 'truncate' | 'hash' | 'none';

const DAY_MS = 86_400_000;
/** SHA-256's block size; the 32-byte day key is shorter, so it is zero-padded to it. */
const HMAC_BLOCK = 64;

/**
 * How an address may be kept in a click record (IP_STORAGE). `truncate` keeps the network (IPv4 /24, IPv6 /48),
 * enough for coarse analytics and abuse reports. `hash` keeps an HMAC-SHA256 whose key is derived from the secret
 * key and the UTC day: the same visitor hashes alike within a day (unique-visitor counts) and differently the next
 * day, so stored hashes cannot follow someone across days, nor be reversed by hashing the whole IPv4 space without
 * the secret. `none` keeps nothing.
 */
export class IpPrivacy {
  private readonly mode: IpStorage;
  private readonly secretKey: string;
  private day = -1;
  /** The day key XOR-ed with HMAC's inner and outer pads (RFC 2104), prepared once a day. */
  private innerPad = Buffer.alloc(HMAC_BLOCK);
  private outerPad = Buffer.alloc(HMAC_BLOCK);

  constructor(mode: IpStorage, secretKey: string) {
    this.mode = mode;
    this.secretKey = secretKey;
  }

  store(ip: string | null, now: Date): string | null {
    if (ip === null) return null;
    switch (this.mode) {
      case 'none':
        return null;
      case 'truncate':
        return truncateIp(ip);
      case 'hash':
        return this.hmac(now, ip).slice(0, 32);
    }
  }

  /**
   * HMAC-SHA256 written out over one-shot hashes: `createHmac` builds a key object per call and costs several
   * times more, on every redirect.
   */
  private hmac(now: Date, message: string): string {
    const day = Math.floor(now.getTime() / DAY_MS);
    if (day !== this.day) this.prepareDay(day);
    const inner = hash('sha256', Buffer.concat([this.innerPad, Buffer.from(message)]), 'buffer');
    return hash('sha256', Buffer.concat([this.outerPad, inner]), 'hex');
  }

  private prepareDay(day: number): void {
    const label = new Date(day * DAY_MS).toISOString().slice(0, 10);
    const key = createHmac('sha256', this.secretKey).update(`linkplane/ip-hash/${label}`).digest();
    this.innerPad = Buffer.alloc(HMAC_BLOCK, 0x36);
    this.outerPad = Buffer.alloc(HMAC_BLOCK, 0x5c);
    for (let i = 0; i < key.length; i++) {
      this.innerPad[i] = this.innerPad[i]! ^ key[i]!;
      this.outerPad[i] = this.outerPad[i]! ^ key[i]!;
    }
    this.day = day;
  }
}

/** IPv4 to its /24 (`203.0.113.77` → `203.0.113.0`), IPv6 to its /48 (`2001:db8:1:2::5` → `2001:db8:1::`). */
export function truncateIp(ip: string): string | null {
  if (isIPv4(ip)) return `${ip.slice(0, ip.lastIndexOf('.'))}.0`;
  if (!isIPv6(ip)) return null;
  const parts = ipaddr.IPv6.parse(ip).parts.slice(0, 3);
  return new ipaddr.IPv6([...parts, 0, 0, 0, 0, 0]).toString();
}
