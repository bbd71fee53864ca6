// Webhook targets are URLs our servers POST to on a customer's behalf: without this guard anyone could make the
// platform call its own internal services or a cloud metadata endpoint (SSRF). Checked at registration and again
// at delivery time, since DNS can change in between (the delivery slice calls assertPublicTarget before each POST).
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ValidationError } from '../platform/errors.ts';

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
  return BLOCKS.find((block) => block.list.check(address, type))?.reason ?? null;
}

async function resolveAll(hostname: string): Promise<ResolvedAddress[]> {
  return dnsLookup(hostname, { all: true, verbatim: true });
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
  let addresses: ResolvedAddress[];
  if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await (options.lookup ?? resolveAll)(host);
    } catch (error) {
      throw Object.assign(new UnsafeTargetError(`the host "${host}" does not resolve.`), { cause: error });
    }
    if (addresses.length === 0) throw new UnsafeTargetError(`the host "${host}" does not resolve.`);
  }
  for (const { address } of addresses) {
    const reason = refusalOf(address);
    if (reason !== null) {
      const shown = address === host ? address : `${host} (${address})`;
      throw new UnsafeTargetError(`${shown} is ${reason}; webhooks are only delivered to public addresses.`, address);
    }
  }
}
