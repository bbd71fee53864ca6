import { newId, randomBase62 } from '../platform/ids.ts';
import {
  ConflictError,
  DuplicateKeyError,
  InvalidRequestError,
  NotConfiguredError,
  NotFoundError,
  PlanRestrictedError,
  QuotaExceededError,
} from '../platform/errors.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { Principal } from '../tenancy/principal.ts';
import { DEFAULT_DOMAIN_ID } from '../links/domains.ts';
import { normaliseHostname, type ConnectableHostname, type HostnamePolicy } from './hostname.ts';
import { DomainObjectExistsError, type KubeDomains } from './kube-domains.ts';
import type { DomainDoc, DomainStore } from './domain.store.ts';
import type { DomainTlsDoc, DomainTlsStore } from './tls.store.ts';
import { verificationRecord } from './verification.ts';
import type { DnsRecord, Domain, DomainConnect, DomainCreate, DomainList } from './domain.schemas.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

/** What customers point their DNS at (config.domains). */
export interface RecordTargets {
  cnameTarget: string | null;
  aTargets: readonly string[];
  txtPrefix: string;
}

export interface DomainServiceDeps {
  domains: DomainStore;
  /** Null without a cluster: domains are then connected only when `tls` is set, else listed only. */
  kube: KubeDomains | null;
  /**
   * Set when the platform provisions custom domains itself (ACME_DIRECTORY_URL): a connected domain is taken up by
   * the worker (DNS check, certificate) instead of a `Domain` object; its TLS state goes with it on delete.
   */
  tls?: DomainTlsStore | null;
  /** Null in tools that run without NATS; the api always has it. */
  bus: CacheBus | null;
  /** The default short domain's hostname (shown first in the list). */
  defaultHostname: string;
  policy: HostnamePolicy;
  targets: RecordTargets;
  now?: () => Date;
}

export class HostnameTakenError extends ConflictError {
  readonly hostname: string;
  constructor(hostname: string, cause?: unknown) {
    super(`The hostname "${hostname}" is already connected to a workspace; delete it there first.`, { cause });
    this.hostname = hostname;
  }
}

export class DefaultDomainUndeletableError extends InvalidRequestError {
  constructor() {
    super('The default short domain cannot be deleted.');
  }
}

const VERIFICATION_TOKEN_LENGTH = 32;
const CUSTOM_DOMAINS = 'custom_domains';

/** The DNS records that prove ownership of `name` and route it to us. */
export function dnsRecords(name: ConnectableHostname, token: string, targets: RecordTargets): DnsRecord[] {
  const txt: DnsRecord = verificationRecord(name.hostname, token, targets.txtPrefix);
  const cname = (note?: string): DnsRecord => ({ type: 'CNAME', name: name.hostname, value: targets.cnameTarget!, ...(note ? { note } : {}) });
  if (!name.apex && targets.cnameTarget !== null) return [txt, cname()];
  if (targets.aTargets.length > 0) return [txt, ...targets.aTargets.map((ip): DnsRecord => ({ type: 'A', name: name.hostname, value: ip }))];
  // An apex cannot hold a CNAME next to its SOA and NS records; providers that flatten one (ALIAS, ANAME) can.
  return [txt, cname('An apex domain cannot hold a plain CNAME: set it as an ALIAS/ANAME or flattened CNAME at your DNS provider.')];
}

export class DomainService {
  private readonly d: DomainServiceDeps;
  private readonly now: () => Date;
  constructor(deps: DomainServiceDeps) {
    this.d = deps;
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * The MongoDB record first (it claims the hostname through the unique index), then the `Domain` object; if the
   * cluster refuses, the record is removed again, so a failure leaves nothing half-made.
   */
  async create(principal: WorkspacePrincipal, input: DomainCreate): Promise<Domain> {
    if (!principal.plan.capabilities.includes(CUSTOM_DOMAINS)) throw new PlanRestrictedError(CUSTOM_DOMAINS, principal.plan.id);
    return this.connect(principal.workspace._id, principal.plan.limits.domains, input, null);
  }

  /**
   * A partner domain: owned by the partner (its id is the tenant of the record and of the `Domain` object), usable
   * by the links of every client of the partner, provisioned by the same operator. `plan`: the partner's platform plan.
   */
  async createForPartner(partnerId: string, plan: { id: string; capabilities: readonly string[]; limits: { domains: number } }, input: DomainCreate): Promise<Domain> {
    if (!plan.capabilities.includes(CUSTOM_DOMAINS)) throw new PlanRestrictedError(CUSTOM_DOMAINS, plan.id);
    return this.connect(partnerId, plan.limits.domains, input, 'partner');
  }

  private async connect(workspaceId: string, limit: number, input: DomainCreate, ownerKind: 'partner' | null): Promise<Domain> {
    // The hostname is checked first: a malformed one is 422 whether or not a cluster is configured.
    const name = normaliseHostname(input.hostname, this.d.policy);
    const kube = this.d.kube;
    if (!kube && !this.d.tls) {
      throw new NotConfiguredError('Custom domains (a Kubernetes cluster running the Linkplane operator, or ACME_DIRECTORY_URL for certificates obtained by the platform)');
    }
    // Checked before writing for a clean refusal, and again after: two concurrent creates at the limit cannot both stay.
    if ((await this.d.domains.count(workspaceId)) >= limit) throw new QuotaExceededError('domains', limit);

    const token = randomBase62(VERIFICATION_TOKEN_LENGTH);
    const now = this.now();
    const doc: DomainDoc = {
      _id: newId('dom'),
      workspace_id: workspaceId,
      ...(ownerKind ? { owner_kind: ownerKind } : {}),
      hostname: name.hostname,
      status: 'pending_verification',
      verification_token: token,
      records: dnsRecords(name, token, this.d.targets),
      error: null,
      created_at: now,
      updated_at: now,
      activated_at: null,
    };
    try {
      await this.d.domains.insert(doc);
    } catch (error) {
      if (error instanceof DuplicateKeyError) throw new HostnameTakenError(name.hostname, error);
      throw error;
    }
    // Every replica's list of our hostnames (src/links/domains.ts: destinations pointing back at one are refused)
    // is read again: the new one counts from now on, whatever its status.
    await this.d.bus?.publish({ kind: 'domain', id: doc._id, keys: [doc.hostname] });
    try {
      if ((await this.d.domains.count(workspaceId)) > limit) throw new QuotaExceededError('domains', limit);
      // With ACME the worker finds the new pending domain at its next round; there is no object to create.
      if (kube) await this.createObject(kube, doc);
    } catch (error) {
      await this.d.domains.delete(workspaceId, doc._id);
      await this.d.bus?.publish({ kind: 'domain', id: doc._id, keys: [doc.hostname] });
      throw error;
    }
    return view(doc, this.d.tls ? null : undefined);
  }

  /** The default domain, the workspace's own, then its partner's (usable by its links, managed by the partner). */
  async list(principal: WorkspacePrincipal): Promise<DomainList> {
    const partnerId = principal.workspace.partner_id;
    const [docs, shared] = await Promise.all([this.d.domains.list(principal.workspace._id), partnerId ? this.d.domains.list(partnerId) : []]);
    const tls = await this.tlsOf([...docs, ...shared]);
    const show = (doc: DomainDoc) => view(doc, tls === null ? undefined : (tls.get(doc._id) ?? null));
    return {
      data: [this.defaultView(), ...docs.map(show), ...shared.map(show)],
      pagination: { next_cursor: null, has_more: false },
      connect: this.connectability(principal.plan, docs.length),
    };
  }

  /**
   * Whether POST /domains would be accepted now (for a valid, free hostname), checked in the order POST checks:
   * the plan, the provisioner (the operator on Kubernetes, or ACME), the quota. `used`: the custom domains the tenant has.
   */
  connectability(plan: { id: string; capabilities: readonly string[]; limits: { domains: number } }, used: number): DomainConnect {
    const limit = plan.limits.domains;
    const no = (reason: NonNullable<DomainConnect['reason']>, message: string): DomainConnect => ({ available: false, reason, message, used, limit });
    if (!plan.capabilities.includes(CUSTOM_DOMAINS)) return no('plan_restricted', `The "${plan.id}" plan does not include custom domains; links use the default short domain.`);
    if (!this.d.kube && !this.d.tls) {
      return no(
        'not_configured',
        'This installation can not connect custom domains: it runs without Kubernetes (whose Linkplane operator issues their certificates and routes them) and without an ACME directory (ACME_DIRECTORY_URL) for certificates obtained by the platform; links use the default short domain.',
      );
    }
    if (used >= limit) return no('quota_exceeded', `The plan allows ${limit} custom domain${limit === 1 ? '' : 's'}, and all are in use.`);
    return { available: true, reason: null, message: null, used, limit };
  }

  /** A partner's own domains and every domain of its clients, oldest first (a single page). */
  async listForPartner(partnerId: string, clientIds: readonly string[]): Promise<Array<DomainDoc>> {
    return this.d.domains.listOf([partnerId, ...clientIds]);
  }

  async getForPartner(partnerId: string, id: string): Promise<DomainDoc> {
    const doc = await this.d.domains.findById(partnerId, id);
    if (!doc) throw new NotFoundError('domain');
    return doc;
  }

  async deleteForPartner(partnerId: string, id: string): Promise<void> {
    const doc = await this.getForPartner(partnerId, id);
    await this.d.kube?.delete(doc.hostname, doc._id);
    if (!(await this.d.domains.delete(partnerId, id))) throw new NotFoundError('domain');
    await this.d.tls?.remove(id);
    await this.d.bus?.publish({ kind: 'domain', id, keys: [doc.hostname] });
  }

  async get(principal: WorkspacePrincipal, id: string): Promise<Domain> {
    if (id === DEFAULT_DOMAIN_ID) return this.defaultView();
    const doc = await this.find(principal, id);
    return view(doc, this.d.tls ? await this.d.tls.get(doc._id) : undefined);
  }

  /**
   * The `Domain` object first (the operator's finalizer then removes certificate and route), then the record; links
   * on the domain stay but stop resolving, and every redirect pod drops what it cached for the host.
   */
  async delete(principal: WorkspacePrincipal, id: string): Promise<void> {
    if (id === DEFAULT_DOMAIN_ID) throw new DefaultDomainUndeletableError();
    const doc = await this.find(principal, id);
    // Without a cluster there is no object to remove (the domain was connected while one was configured).
    await this.d.kube?.delete(doc.hostname, doc._id);
    if (!(await this.d.domains.delete(doc.workspace_id, id))) throw new NotFoundError('domain');
    // The certificate and its key go with the domain (a crash in between leaves an orphan the worker removes).
    await this.d.tls?.remove(id);
    await this.d.bus?.publish({ kind: 'domain', id, keys: [doc.hostname] });
  }

  /**
   * An object already named after the hostname is either live (another connection holds it: conflict) or an orphan
   * whose record is gone (a delete that failed half-way): the orphan is removed and the create tried once more.
   */
  private async createObject(kube: KubeDomains, doc: DomainDoc): Promise<void> {
    const spec = { hostname: doc.hostname, tenant: doc.workspace_id, domainId: doc._id, verificationToken: doc.verification_token };
    try {
      await kube.create(spec);
    } catch (error) {
      if (!(error instanceof DomainObjectExistsError)) throw error;
      const existing = await kube.get(doc.hostname);
      const owner = existing?.spec?.domainId;
      if (owner !== undefined && (owner === doc._id || (await this.d.domains.exists(owner)))) throw new HostnameTakenError(doc.hostname, error);
      if (owner !== undefined) await kube.delete(doc.hostname, owner);
      try {
        await kube.create(spec);
      } catch (retryError) {
        if (retryError instanceof DomainObjectExistsError) throw new HostnameTakenError(doc.hostname, retryError);
        throw retryError;
      }
    }
  }

  /** The TLS state of these domains by id, or null where the platform does not manage certificates. */
  private async tlsOf(docs: DomainDoc[]): Promise<Map<string, DomainTlsDoc> | null> {
    if (!this.d.tls) return null;
    const rows = await this.d.tls.domains.find({ _id: { $in: docs.map((d) => d._id) } }).toArray();
    return new Map(rows.map((row) => [row._id, row]));
  }

  private async find(principal: WorkspacePrincipal, id: string): Promise<DomainDoc> {
    const doc = await this.d.domains.findById(principal.workspace._id, id);
    if (!doc) throw new NotFoundError('domain');
    return doc;
  }

  private defaultView(): Domain {
    return {
      id: DEFAULT_DOMAIN_ID,
      hostname: this.d.defaultHostname,
      status: 'active',
      default: true,
      records: [],
      error: null,
      created_at: null,
      activated_at: null,
    };
  }
}

/** The `certificate` field: only where the platform manages TLS (`tls` given; undefined elsewhere, then omitted). */
function certificateView(tls: DomainTlsDoc | null | undefined): Domain['certificate'] {
  const cert = tls?.certificate;
  if (!cert) return null;
  return { issuer: cert.issuer, not_before: cert.not_before.toISOString(), not_after: cert.not_after.toISOString(), renews_at: cert.renew_after.toISOString() };
}

export function view(doc: DomainDoc, tls?: DomainTlsDoc | null): Domain {
  return {
    id: doc._id,
    hostname: doc.hostname,
    status: doc.status,
    default: false,
    ...(doc.owner_kind === 'partner' ? { partner_domain: true } : {}),
    records: doc.records,
    error: doc.error,
    created_at: doc.created_at.toISOString(),
    activated_at: doc.activated_at?.toISOString() ?? null,
    ...(tls === undefined ? {} : { certificate: certificateView(tls) }),
  };
}
