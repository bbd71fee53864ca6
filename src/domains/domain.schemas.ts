// The Domains API contract (spec 4.2 GET/POST /domains, states of part 3, events of part 6): request and response
// schemas, validated by the router and published in the OpenAPI document from this one declaration.
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../platform/schema.ts';

const closed = { additionalProperties: false } as const;
const Nullable = <T>(schema: Record<string, unknown>, description: string) =>
  Type.Unsafe<T | null>({ ...schema, type: [schema.type as string, 'null'], description });

/** The stored names of a domain's states, in the order a domain normally passes through them. */
export const DOMAIN_STATUSES = ['pending_verification', 'pending_ssl', 'active', 'error'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

export const DOMAIN_STATUS_DESCRIPTION =
  'The state of the domain. `pending_verification`: connected, waiting for the DNS records below to be set and seen ' +
  '(checked with backoff). `pending_ssl`: DNS verified, the TLS certificate is being issued (event `domain.pending_ssl`). ' +
  '`active`: the domain serves its links (event `domain.activated`). `error`: provisioning failed; `error` says why ' +
  '(event `domain.error`); fixing the cause (for example a CAA record) brings the domain back to `active`. The ' +
  'certificate comes from cert-manager on Kubernetes, or from an ACME CA through HTTP-01 where the platform ' +
  'terminates TLS itself; there `error.reason` is `DNSVerificationTimedOut`, `ChallengeFailed`, `OrderRefused`, ' +
  '`FinalizeFailed`, `AccountRefused` or `CertificateExpired`, and a renewal changes no state. ' +
  'The default short domain is always `active`.';

export const HostnameField = Type.String({
  minLength: 1,
  maxLength: 300,
  description:
    'The hostname to connect, e.g. `links.acme.com` or `acme.link`. Trimmed, lower-cased, one trailing dot removed and ' +
    'internationalised names converted to punycode (`bücher.example` becomes `xn--bcher-kva.example`); at most 253 ' +
    'characters after that. It must be a registrable domain or a subdomain of one (not a public suffix such as `com` ' +
    'or `co.uk`), not an IP address, not a local name (`localhost`, `.local`, `.internal`), and not one of our own ' +
    'hosts (the default short domain, the API host, or their subdomains). A hostname connected by any workspace, ' +
    'this one included, answers 409 `conflict` until it is deleted there.',
});

export const DomainCreateSchema = Type.Object({ hostname: HostnameField }, { ...closed, $id: 'DomainCreate' });
export type DomainCreate = Static<typeof DomainCreateSchema>;

export const DnsRecordSchema = Type.Object(
  {
    type: Type.Unsafe<'TXT' | 'CNAME' | 'A'>({ type: 'string', enum: ['TXT', 'CNAME', 'A'] }),
    name: Type.String({ description: 'The fully qualified record name' }),
    value: Type.String({ description: 'The record value: the verification text, the CNAME target or an IPv4 address' }),
    note: Type.Optional(Type.String({ description: 'Guidance for this record, e.g. CNAME flattening at the apex' })),
  },
  { ...closed, $id: 'DnsRecord' },
);
export type DnsRecord = Static<typeof DnsRecordSchema>;

export const DomainErrorSchema = Type.Object(
  {
    reason: Type.String({ description: 'A stable, PascalCase reason (from the certificate issuer or the DNS check)' }),
    message: Type.String({ description: 'For humans: what failed and what to fix' }),
  },
  closed,
);

export const DomainCertificateSchema = Type.Object(
  {
    issuer: Type.String({ description: "The issuing CA's common name, e.g. `R11` for Let's Encrypt" }),
    not_before: Type.String({ format: 'date-time', description: 'Start of validity' }),
    not_after: Type.String({ format: 'date-time', description: 'End of validity' }),
    renews_at: Type.String({
      format: 'date-time',
      description: 'When it is renewed (two thirds of its lifetime by default); a failed renewal is retried while it stays valid',
    }),
  },
  closed,
);
export type DomainCertificate = Static<typeof DomainCertificateSchema>;

export const DomainSchema = Type.Object(
  {
    id: Type.String({ description: 'Prefix `dom_`; `dom_default` is the platform short domain' }),
    hostname: Type.String({ description: 'Punycode, lower case' }),
    status: Type.Unsafe<DomainStatus>({ type: 'string', enum: [...DOMAIN_STATUSES], description: DOMAIN_STATUS_DESCRIPTION }),
    default: Type.Boolean({ description: 'True only for the platform short domain, which every workspace can use and nobody can delete' }),
    partner_domain: Type.Optional(
      Type.Boolean({ description: "Present and true on a domain of the workspace's partner: its links may use it; the partner manages it (/partner/domains)" }),
    ),
    records: Type.Array(DnsRecordSchema, {
      description:
        'The DNS records to set at the DNS provider: a TXT record proving ownership, then a CNAME to our ingress for a ' +
        'subdomain, or A records for an apex domain (which cannot hold a CNAME). Empty for the default domain.',
    }),
    error: Type.Unsafe<{ reason: string; message: string } | null>({
      anyOf: [DomainErrorSchema, { type: 'null' }],
      description: 'Why provisioning failed, while `status` is `error`; null otherwise',
    }),
    created_at: Nullable<string>({ type: 'string', format: 'date-time' }, 'When it was connected; null for the default domain'),
    activated_at: Nullable<string>({ type: 'string', format: 'date-time' }, 'When it last became active; null if it never did (and for the default domain)'),
    certificate: Type.Optional(
      Type.Unsafe<DomainCertificate | null>({
        anyOf: [DomainCertificateSchema, { type: 'null' }],
        description:
          'Present only where the platform obtains certificates itself (ACME, without Kubernetes): the certificate ' +
          'the redirect serves for this hostname by SNI, or null before the first one is issued. Absent where the ' +
          'Kubernetes operator and cert-manager manage certificates, and for the default domain.',
      }),
    ),
  },
  { ...closed, $id: 'Domain' },
);
export type Domain = Static<typeof DomainSchema>;

/** Whether a domain can be connected here and now, said before anyone fills in the form. */
export const DomainConnectSchema = Type.Object(
  {
    available: Type.Boolean({ description: 'True when POST would be accepted for a valid, free hostname' }),
    reason: Type.Unsafe<'not_configured' | 'plan_restricted' | 'quota_exceeded' | null>({
      type: ['string', 'null'],
      enum: ['not_configured', 'plan_restricted', 'quota_exceeded', null],
      description:
        'Why not, as the error code POST would answer: `not_configured` (this installation runs without a Kubernetes ' +
        'cluster and the Linkplane operator, which issue certificates and route custom domains), `plan_restricted` (the ' +
        'plan lacks `custom_domains`), `quota_exceeded` (the plan\'s `domains` quota is used up); null when available',
    }),
    message: Type.Union([Type.String(), Type.Null()], { description: 'The reason for people; null when available' }),
    used: Type.Integer({ minimum: 0, description: 'Custom domains connected (the default short domain does not count)' }),
    limit: Type.Integer({ minimum: 0, description: "The plan's `domains` quota" }),
  },
  { ...closed, $id: 'DomainConnect' },
);
export type DomainConnect = Static<typeof DomainConnectSchema>;

export const DomainListSchema = Type.Object(
  {
    data: Type.Array(DomainSchema, { description: 'The default short domain first, then custom domains, oldest first' }),
    pagination: Type.Object({ next_cursor: Type.Null(), has_more: Type.Literal(false) }, { ...closed, description: 'Always a single page' }),
    connect: DomainConnectSchema,
  },
  { ...closed, $id: 'DomainList' },
);
export type DomainList = Static<typeof DomainListSchema>;

/** The `data` of `domain.pending_ssl`, `domain.activated` and `domain.error` deliveries (built in domain-events.ts). */
export const DomainEventDataSchema = Type.Object(
  {
    id: Type.String(),
    hostname: Type.String(),
    status: StringEnum(DOMAIN_STATUSES, { description: '`pending_ssl`, `active` or `error`: the status the event reports' }),
    reason: Type.Optional(Type.String({ description: '`domain.error` only: a short machine-readable cause' })),
    message: Type.Optional(Type.String({ description: '`domain.error` only: what went wrong, for people' })),
  },
  { additionalProperties: false, $id: 'DomainEventData' },
);
export type DomainEventData = Static<typeof DomainEventDataSchema>;
