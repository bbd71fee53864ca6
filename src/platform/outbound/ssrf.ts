// Webhook targets are URLs our servers POST to on a customer's behalf: without this guard anyone could make the
// platform call its own internal services or a cloud metadata endpoint (SSRF). Checked at registration and again
// at delivery time, since DNS can change in between: deliveries and destination health checks connect through
// outbound.ts, whose sockets resolve the name once, check every address, and connect only to a checked one.
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
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

// One list per reason, so the refusal says which rule applied. BlockList matches IPv4-mapped IPv6 addresses
// (::ffff:127.0.0.1, ::ffff:7f00:1) against the IPv4 ranges itself.
const RANGES: ReadonlyArray<readonly [reason: string, ranges: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']>]> = [
  ['a cloud metadata address', [['169.254.169.254', 32, 'ipv4'], ['fd00:ec2::254', 128, 'ipv6']]],
  ['an unspecified address', [['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']]],
  ['a loopback address', [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']]],
  ['a private address', [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['fc00::', 7, 'ipv6']]],
  ['a link-local address', [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']]],
  ['a shared (CGNAT) address', [['100.64.0.0', 10, 'ipv4']]],
  ['a multicast address', [['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']]],
  // 240/4 includes the broadcast address; ::/96 is the deprecated IPv4-compatible form (::127.0.0.1).
  ['a reserved address', [['240.0.0.0', 4, 'ipv4'], ['::', 96, 'ipv6']]],
];

const BLOCKS = RANGES.map(([reason, ranges]) => {
  const list = new BlockList();
  for (const [network, prefix, type] of ranges) list.addSubnet(network, prefix, type);
  return { reason, list };
});

/** Why an IP address is refused, or null when it is a public address. */
export function refusalOf(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const own = BLOCKS.find((block) => block.list.check(address, type))?.reason ?? null;
  if (own !== null || family === 4) return own;
  // An IPv6 address that carries an IPv4 one reaches that IPv4 host through a translator or tunnel: judged by it.
  for (const { form, ipv4 } of embeddedIpv4(address)) {
    const reason = refusalOf(ipv4);
    if (reason !== null) return `${reason} (${ipv4}) in ${form} form`;
  }
  return null;
}

// Within the /48 local-use prefix, the network prefix an operator chooses is 48, 56, 64 or 96 bits long.
const LOCAL_USE_PREFIX_LENGTHS = [48, 56, 64, 96];

/**
 * The IPv4 addresses an IPv6 address embeds in the transition forms that route to IPv4 hosts: NAT64 (the well-known
 * 64:ff9b::/96, and the local-use 64:ff9b:1::/48 at every RFC 6052 prefix length, since the operator picks one),
 * 6to4 (2002::/16), Teredo (2001::/32: server and obfuscated client), SIIT (::ffff:0:0:0/96) and IPv4-compatible
 * (::/96). IPv4-mapped addresses (::ffff:0:0/96) are matched by BlockList itself.
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
