// The Domain answer (src/domains/domain.schemas.ts is the authority); partner lists add the owner.

export type DomainStatus = 'pending_verification' | 'pending_ssl' | 'active' | 'error';

export interface DnsRecord {
  type: 'TXT' | 'CNAME' | 'A';
  name: string;
  value: string;
  note?: string;
}

export interface Domain {
  id: string;
  hostname: string;
  status: DomainStatus;
  default: boolean;
  partner_domain?: boolean;
  records: DnsRecord[];
  error: { reason: string; message: string } | null;
  created_at: string | null;
  activated_at: string | null;
  owner?: { kind: 'partner' | 'client'; client_id: string | null };
}

/** Whether a domain can be connected here (the list answer's `connect`). */
export interface DomainConnect {
  available: boolean;
  reason: 'not_configured' | 'plan_restricted' | 'quota_exceeded' | null;
  message: string | null;
  used: number;
  limit: number;
}

export const STEPS: { status: DomainStatus; label: string; doing: string }[] = [
  { status: 'pending_verification', label: 'DNS verification', doing: 'Waiting for the DNS records below to be set and seen.' },
  { status: 'pending_ssl', label: 'Certificate', doing: 'DNS is verified; the TLS certificate is being issued.' },
  { status: 'active', label: 'Active', doing: 'The domain serves its links.' },
];

export function statusLabel(status: DomainStatus): string {
  if (status === 'error') return 'Error';
  return STEPS.find((s) => s.status === status)?.label ?? status;
}

/** Where the domains of the context in view live. */
export function domainsPath(kind: 'workspace' | 'partner'): string {
  return kind === 'partner' ? '/v1/partner/domains' : '/v1/domains';
}
