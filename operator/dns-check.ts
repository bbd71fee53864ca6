// The operator's side of the DNS check: the records a Domain's status shows; the check itself is shared with the
// worker's own provisioning (src/domains/dns-check.ts).
import type { DnsRecord, Domain } from './domain.ts';
import { verificationRecord } from '../src/domains/verification.ts';
import type { DnsTargets } from '../src/domains/dns-check.ts';

export { DnsChecker, type DnsResult, type DnsTargets } from '../src/domains/dns-check.ts';

/** The records a customer must set, as the status (and the API) show them. */
export function expectedRecords(spec: Domain['spec'], targets: DnsTargets): DnsRecord[] {
  const records: DnsRecord[] = [
    verificationRecord(spec.hostname, spec.verificationToken, targets.txtPrefix),
  ];
  if (targets.cnameTarget !== null) records.push({ type: 'CNAME', name: spec.hostname, value: targets.cnameTarget });
  for (const ip of targets.aTargets) records.push({ type: 'A', name: spec.hostname, value: ip });
  return records;
}
