// Webhook targets are URLs our servers POST to on a customer's behalf: without this guard anyone could make the
// platform call its own internal services or a cloud metadata endpoint (SSRF). Checked at registration and again
// at delivery time, since DNS can change in between: deliveries and destination health checks connect through
// outbound.ts, whose sockets resolve the name once, check every address, and connect only to a checked one.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ValidationError } from '../errors.ts';

export interface ResolvedAddress {
  address: string;
  family: number;
}

export interface TargetOptions {
  /** Development runs (all-in-one) post to receivers on the same machine. */
  allowPrivate: boolean;
  /** Every address of a host name; node:dns by default, replaceable in tests. */
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
}

/** The endpoint URL would reach an address the platform must not call; answered 422 naming `url`. */
export class UnsafeTargetError extends ValidationError {
  readonly address: string | null;
  constructor(message: string, address: string | null = null) {
    super([{ path: 'url', message }], `The webhook URL is refused: ${message}`);
    this.address = address;
  }
}

// Only globally routable unicast is a target: ipaddr.js classifies every address into the IANA special-purpose ranges
// (RFC 6890 and successors) and calls the rest `unicast`, for IPv4 and IPv6 alike. These names say which range
// refused an address; ipaddr.js's own `reserved` lumps several together, so those get a finer name here.
const RANGE_NAMES: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a shared (CGNAT) address',
  private: 'a private address',
  uniqueLocal: 'a private (unique local) address',
  deprecatedSiteLocal: 'a site-local address',
  discard: 'a discard-only address',
  benchmarking: 'a benchmarking address',
  as112: 'an AS112 (DNS sink) address',
  as112v6: 'an AS112 (DNS sink) address',
  amt: 'an AMT relay address',
  deprecatedOrchid: 'an ORCHID (overlay identifier) address',
  orchid2: 'an ORCHID (overlay identifier) address',
  droneRemoteIdProtocolEntityTags: 'a drone remote ID (DET) address',
  segmentRouting: 'a segment routing (SRv6) address',
};

const RESERVED_NAMES: ReadonlyArray<readonly [ipaddr.IPv4 | ipaddr.IPv6, number, string]> = (
  [
    ['192.0.0.0/24', 'an IETF protocol assignment address'],
    ['192.0.2.0/24', 'a documentation address'],
    ['198.51.100.0/24', 'a documentation address'],
    ['203.0.113.0/24', 'a documentation address'],
    ['192.88.99.0/24', 'a 6to4 relay anycast address'],
    ['198.18.0.0/15', 'a benchmarking address'],
    ['2001:db8::/32', 'a documentation address'],
    ['3fff::/20', 'a documentation address'],
    ['2001::/23', 'an IETF protocol assignment address'],
  ] as const
).map(([cidr, name]) => [...ipaddr.parseCIDR(cidr), name] as const);

/** Where a cloud provider answers instance credentials: named apart, as the most likely target of an attack. */
const METADATA: ReadonlyArray<readonly [ipaddr.IPv4 | ipaddr.IPv6, number]> = ['169.254.169.254/32', 'fd00:ec2::254/128'].map((cidr) => ipaddr.parseCIDR(cidr));

/** IPv6 ranges that carry an IPv4 address and reach that host (mapped, SIIT, NAT64, 6to4, Teredo): judged by it. */
const TRANSITION_RANGES: ReadonlySet<string> = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo']);

/** IPv6 global unicast (RFC 4291 2.4): everything outside it is reserved by IANA, whatever ipaddr.js calls it. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

function within(address: ipaddr.IPv4 | ipaddr.IPv6, [network, bits]: readonly [ipaddr.IPv4 | ipaddr.IPv6, number]): boolean {
  return address.kind() === network.kind() && address.match(network, bits);
}

/**
 * Why an IP address is refused as a target, or null when it is globally routable unicast. The one check of every
 * address: webhook URLs when they are registered (assertPublicTarget) and every connection made to a customer's URL
 * (outbound.ts: IP literals, and each address a name resolves to when the socket connects).
 */
export function refusalOf(address: string): string | null {
  if (isIP(address) === 0) return 'not an IP address';
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return 'not an IP address';
  }
  if (METADATA.some((range) => within(parsed, range))) return 'a cloud metadata address';
  const range = parsed.range();
  if (parsed.kind() === 'ipv6' && TRANSITION_RANGES.has(range)) {
    const embedded = range === 'ipv4Mapped' ? [{ form: 'IPv4-mapped', ipv4: (parsed as ipaddr.IPv6).toIPv4Address().toString() }] : embeddedIpv4(address);
    for (const { form, ipv4 } of embedded) {
      const reason = refusalOf(ipv4);
      if (reason !== null) return `${reason} (${ipv4}) in ${form} form`;
    }
    return null;
  }
  if (range === 'reserved') return RESERVED_NAMES.find(([network, bits]) => within(parsed, [network, bits]))?.[2] ?? 'a reserved address';
  if (range !== 'unicast') return RANGE_NAMES[range] ?? `a special-purpose address (${range})`;
  // Outside 2000::/3 ipaddr.js still says `unicast` (unassigned space, and the deprecated IPv4-compatible ::/96).
  if (parsed.kind() === 'ipv6' && !within(parsed, GLOBAL_UNICAST_V6)) return 'a reserved address, not global unicast (outside 2000::/3)';
  return null;
}

// Within the /48 local-use prefix, the network prefix an operator chooses is 48, 56, 64 or 96 bits long.
const LOCAL_USE_PREFIX_LENGTHS = [48, 56, 64, 96];

/**
 * The IPv4 addresses an IPv6 address embeds in the transition forms that route to IPv4 hosts: NAT64 (the well-known
 * 64:ff9b::/96, and the local-use 64:ff9b:1::/48 at every RFC 6052 prefix length, since the operator picks one),
 * 6to4 (2002::/16), Teredo (2001::/32: server and obfuscated client), SIIT (::ffff:0:0:0/96) and IPv4-compatible
 * (::/96). IPv4-mapped addresses (::ffff:0:0/96) are read by ipaddr.js itself (see refusalOf).
 */
export function embeddedIpv4(address: string): Array<{ form: string; ipv4: string }> {
  let bytes: number[];
  try {
    const parsed = ipaddr.parse(address);
    if (parsed.kind() !== 'ipv6') return [];
    bytes = parsed.toByteArray();
  } catch {
    return [];
  }
  const word = (i: number) => (bytes[i]! << 8) | bytes[i + 1]!;
  const v4 = (b: number[]) => b.join('.');
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const found: Array<{ form: string; ipv4: string }> = [];
  if (word(0) === 0x0064 && word(2) === 0xff9b && zeros(4, 12)) found.push({ form: 'NAT64', ipv4: v4(bytes.slice(12)) });
  if (word(0) === 0x0064 && word(2) === 0xff9b && word(4) === 0x0001) {
    for (const length of LOCAL_USE_PREFIX_LENGTHS) found.push({ form: 'NAT64 local-use', ipv4: v4(rfc6052(bytes, length)) });
  }
  if (word(0) === 0x2002) found.push({ form: '6to4', ipv4: v4(bytes.slice(2, 6)) });
  if (word(0) === 0x2001 && word(2) === 0x0000) {
    found.push({ form: 'Teredo server', ipv4: v4(bytes.slice(4, 8)) });
    found.push({ form: 'Teredo client', ipv4: v4(bytes.slice(12).map((b) => b ^ 0xff)) });
  }
  if (zeros(0, 8) && word(8) === 0xffff && word(10) === 0) found.push({ form: 'SIIT', ipv4: v4(bytes.slice(12)) });
  if (zeros(0, 12)) found.push({ form: 'IPv4-compatible', ipv4: v4(bytes.slice(12)) });
  return found;
}

/** The IPv4 address in an RFC 6052 IPv4-embedded IPv6 address with the given prefix length (bits 64-71 are skipped). */
function rfc6052(bytes: number[], prefixLength: number): number[] {
  const start = prefixLength / 8;
  const positions = [0, 1, 2, 3].map((i) => (start + i >= 8 && prefixLength < 96 ? start + i + 1 : start + i));
  return positions.map((p) => bytes[p]!);
}

async function resolveAll(hostname: string): Promise<ResolvedAddress[]> {
  return dnsLookup(hostname, { all: true, verbatim: true });
}

/**
 * Every address of `host` (an IP literal, or a name resolved once), each checked unless private targets are allowed:
 * one refused address among several is enough to refuse, since the connection may pick any of them. The answer is
 * what a connection may use (see outbound.ts: sockets connect to these addresses, not to a second resolution).
 */
export async function checkedAddresses(host: string, options: TargetOptions): Promise<ResolvedAddress[]> {
  let addresses: ResolvedAddress[];
  const family = isIP(host);
  if (family !== 0) addresses = [{ address: host, family }];
  else {
    try {
      addresses = await (options.lookup ?? resolveAll)(host);
    } catch (error) {
      throw Object.assign(new UnsafeTargetError(`the host "${host}" does not resolve.`), { cause: error });
    }
    if (addresses.length === 0) throw new UnsafeTargetError(`the host "${host}" does not resolve.`);
  }
  if (options.allowPrivate) return addresses;
  for (const { address } of addresses) {
    const reason = refusalOf(address);
    if (reason !== null) {
      const shown = address === host ? address : `${host} (${address})`;
      throw new UnsafeTargetError(`${shown} is ${reason}; webhooks are only delivered to public addresses.`, address);
    }
  }
  return addresses;
}

/**
 * Resolves the URL's host and throws UnsafeTargetError unless every address is public: one private address among
 * several is enough to refuse, since the connection may pick any of them.
 */
export async function assertPublicTarget(url: string, options: TargetOptions): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UnsafeTargetError('it is not a valid absolute URL.');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UnsafeTargetError('only http and https URLs are accepted.');
  if (options.allowPrivate) return;
  // WHATWG URL keeps IPv6 literals in brackets and already normalises 0x7f000001 and 127.1 to dotted IPv4.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw new UnsafeTargetError('the URL has no host.');
  await checkedAddresses(host, options);
}
