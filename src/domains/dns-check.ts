// The DNS check a custom domain passes before its certificate is requested: the TXT token proves ownership, the
// CNAME or A record proves the traffic reaches us. Asked of the configured resolvers (ports allowed, so tests and
// split-horizon setups can point anywhere). One implementation for the Kubernetes operator and for the worker that
// provisions domains itself (ACME), so both verify exactly the same records.
import { Resolver } from 'node:dns/promises';
import type { ResolverAddress } from '../config/config.ts';
import { verificationRecord } from './verification.ts';

export interface DnsTargets {
  readonly txtPrefix: string;
  readonly cnameTarget: string | null;
  readonly aTargets: readonly string[];
}

/** What is checked of a domain: its name and the token its TXT record must hold. */
export interface DnsSubject {
  readonly hostname: string;
  readonly verificationToken: string;
}

export type DnsResult = { verified: true } | { verified: false; error: string };

/** Absent names are an answer ("not set yet"), not a failure of the check. */
const NO_ANSWER = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'NXDOMAIN']);

export class DnsChecker {
  private readonly servers: readonly ResolverAddress[];
  private readonly targets: DnsTargets;
  private readonly timeoutMs: number;

  constructor(options: { servers: readonly ResolverAddress[]; targets: DnsTargets; timeoutMs?: number }) {
    this.servers = options.servers;
    this.targets = options.targets;
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  async check(spec: DnsSubject): Promise<DnsResult> {
    // A resolver per check: cancelling one (on timeout) must not disturb another domain's check.
    const resolver = new Resolver({ timeout: this.timeoutMs, tries: 2 });
    if (this.servers.length > 0) {
      resolver.setServers(this.servers.map((s) => (s.host.includes(':') ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`)));
    }
    const hostname = spec.hostname.toLowerCase();
    const { name: txtName, value: expected } = verificationRecord(hostname, spec.verificationToken, this.targets.txtPrefix);

    const txt = await lookup(() => resolver.resolveTxt(txtName));
    if ('error' in txt) return { verified: false, error: `TXT ${txtName}: ${txt.error}` };
    if (!txt.records.some((chunks) => chunks.join('') === expected)) {
      return { verified: false, error: `TXT ${txtName} does not contain "${expected}"` };
    }

    const problems: string[] = [];
    if (this.targets.cnameTarget !== null) {
      const cname = await lookup(() => resolver.resolveCname(hostname));
      if ('error' in cname) problems.push(`CNAME ${hostname}: ${cname.error}`);
      else if (cname.records.some((name) => normalise(name) === this.targets.cnameTarget)) return { verified: true };
      else problems.push(`CNAME ${hostname} points to ${cname.records.join(', ') || 'nothing'}, not ${this.targets.cnameTarget}`);
    }
    if (this.targets.aTargets.length > 0) {
      const a = await lookup(() => resolver.resolve4(hostname));
      if ('error' in a) problems.push(`A ${hostname}: ${a.error}`);
      else if (a.records.length > 0 && a.records.every((ip) => this.targets.aTargets.includes(ip))) return { verified: true };
      else problems.push(`A ${hostname} is ${a.records.join(', ') || 'empty'}, expected within ${this.targets.aTargets.join(', ')}`);
    }
    return { verified: false, error: problems.join('; ') };
  }
}

async function lookup<T>(query: () => Promise<T[]>): Promise<{ records: T[] } | { error: string }> {
  try {
    return { records: await query() };
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (NO_ANSWER.has(code)) return { error: 'no record' };
    return { error: `lookup failed (${code || (error as Error).message})` };
  }
}

function normalise(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
