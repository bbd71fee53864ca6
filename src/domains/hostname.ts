// What a customer may connect as a custom domain: a registrable DNS name, in the one canonical form every part of
// the platform compares (punycode, lower case, no trailing dot), that is not one of our own hosts.
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import { parse } from 'tldts';
import { ValidationError } from '../platform/errors.ts';

export const MAX_HOSTNAME_LENGTH = 253;

/** Names that never reach the public internet, whatever the public suffix list says about them. */
const LOCAL_SUFFIXES = ['localhost', 'local', 'internal', 'invalid', 'arpa', 'home.arpa', 'lan'];

/** LDH rule (RFC 1123): letters, digits and inner hyphens, 1 to 63 characters. Punycode labels (`xn--`) pass it. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export interface HostnamePolicy {
  /** Our own hosts (the default short domain, the API host, the ingress target): neither they nor their subdomains. */
  reserved: readonly string[];
}

export interface ConnectableHostname {
  /** The canonical name: punycode, lower case, no trailing dot. */
  hostname: string;
  /** The registrable domain (`acme.co.uk` for `go.acme.co.uk`). */
  registrable: string;
  /** True when the hostname is the registrable domain itself: it cannot carry a CNAME, so A records are given. */
  apex: boolean;
}

/** A host as compared: lower case, no port, no trailing dot. */
export function bareHost(host: string): string {
  const lower = host.trim().toLowerCase().replace(/\.$/, '');
  // A bracketed IPv6 literal keeps its colons; anything else loses a `:port`.
  return lower.startsWith('[') ? lower : lower.replace(/:\d+$/, '');
}

/**
 * The canonical form of a hostname a customer asks to connect, or a ValidationError naming `hostname` that says
 * which rule it broke. IDN input (`bücher.example`) is converted to punycode (`xn--bcher-kva.example`).
 */
export function normaliseHostname(input: string, policy: HostnamePolicy): ConnectableHostname {
  const refuse = (message: string): never => {
    throw new ValidationError([{ path: 'hostname', message }]);
  };
  const trimmed = input.trim().toLowerCase();
  const undotted = trimmed.endsWith('.') ? trimmed.slice(0, -1) : trimmed;
  if (undotted === '') refuse('must not be empty');
  if (isIP(undotted.replace(/^\[|\]$/g, '')) !== 0) refuse('must be a DNS name, not an IP address');
  if (/[/:@?#\s]/.test(undotted)) refuse('must be a bare hostname: no scheme, port, path or spaces');
  const ascii = domainToASCII(undotted);
  if (ascii === '') refuse('is not a valid internationalised domain name');
  if (ascii.length > MAX_HOSTNAME_LENGTH) refuse(`must be at most ${MAX_HOSTNAME_LENGTH} characters (in punycode)`);
  const labels = ascii.split('.');
  const bad = labels.find((label) => !LABEL.test(label));
  if (bad !== undefined) refuse(`label "${bad}" may hold only letters, digits and inner hyphens (1 to 63 characters)`);
  if (/^\d+$/.test(labels.at(-1)!)) refuse('must be a DNS name, not an IP address');
  if (LOCAL_SUFFIXES.some((suffix) => ascii === suffix || ascii.endsWith(`.${suffix}`))) refuse('must be a public name, not a local one');

  const parsed = parse(ascii);
  if (parsed.isIp) refuse('must be a DNS name, not an IP address');
  if (!parsed.publicSuffix || !parsed.domain) refuse('must be a registrable domain or a subdomain of one, not a public suffix such as "com" or "co.uk"');

  for (const ours of policy.reserved.map(bareHost).filter((host) => host !== '')) {
    if (ascii === ours || ascii.endsWith(`.${ours}`)) refuse('is one of our own domains and cannot be connected');
  }
  return { hostname: ascii, registrable: parsed.domain!, apex: ascii === parsed.domain };
}
