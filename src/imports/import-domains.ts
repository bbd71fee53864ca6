// Where an imported link goes: our default domain, or the workspace's domain of the source's host name. A custom
// domain missing here is connected by the import (pending verification, exactly as POST /domains would), and the
// import may put links on it before it is verified: they resolve once the customer points DNS at us, which is the
// order a move from another service happens in.
import type { Db } from 'mongodb';
import { AppError } from '../platform/errors.ts';
import type { Principal } from '../tenancy/principal.ts';
import { DEFAULT_DOMAIN_ID, DomainDirectory, type ResolvedDomain } from '../links/domains.ts';
import type { DomainService } from '../domains/domain.service.ts';
import type { SourceKind } from './source.ts';
import { isSharedHost } from './source-registry.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

/**
 * The links' view of domains for an import: besides what the API allows (active domains), the workspace's own
 * domains still being verified or provisioned, so links can be imported onto a domain connected for them.
 */
export class ImportDomainDirectory extends DomainDirectory {
  private readonly database: Db;
  constructor(db: Db, defaultHostname: string, defaultBaseUrl: string) {
    super(db, defaultHostname, defaultBaseUrl);
    this.database = db;
  }

  override async resolve(workspaceId: string, domainId: string | undefined): Promise<ResolvedDomain | null> {
    const active = await super.resolve(workspaceId, domainId);
    if (active) return active;
    const own = await this.database
      .collection<{ _id: string; workspace_id: string; hostname: string; status: string }>('domains')
      .findOne({ _id: domainId, workspace_id: workspaceId, status: { $in: ['pending_verification', 'pending_ssl'] } });
    return own ? { id: own._id, hostname: own.hostname, baseUrl: `https://${own.hostname}` } : null;
  }
}

export type DomainChoice = { id: string; hostname: string } | { error: { code: string; message: string } };

/** Host name → domain, for one run of one job; a host is looked up (and connected) once. */
export interface ImportDomainsDeps {
  db: Db;
  service: DomainService;
  principal: WorkspacePrincipal;
  source: SourceKind;
  defaultHostname: string;
  mode: 'create' | 'default';
  /** A dry run connects nothing: a missing domain is reported as one that would be connected. */
  dryRun: boolean;
}

export class ImportDomains {
  private readonly known = new Map<string, Promise<DomainChoice>>();
  private readonly deps: ImportDomainsDeps;
  constructor(deps: ImportDomainsDeps) {
    this.deps = deps;
  }

  choose(host: string | null): Promise<DomainChoice> {
    const { mode, source, defaultHostname } = this.deps;
    const name = host?.toLowerCase() ?? null;
    if (name === null || mode === 'default' || isSharedHost(source, name) || name === defaultHostname) {
      return Promise.resolve({ id: DEFAULT_DOMAIN_ID, hostname: defaultHostname });
    }
    let choice = this.known.get(name);
    if (!choice) {
      choice = this.lookUp(name);
      this.known.set(name, choice);
    }
    return choice;
  }

  private async lookUp(hostname: string): Promise<DomainChoice> {
    const { db, principal, service, dryRun } = this.deps;
    const existing = await db.collection<{ _id: string; workspace_id: string; hostname: string }>('domains').findOne({ hostname });
    if (existing) {
      if (existing.workspace_id === principal.workspace._id) return { id: existing._id, hostname };
      return { error: { code: 'conflict', message: `the domain ${hostname} is connected to another workspace; import with domains: default to put these links on the default domain` } };
    }
    if (!principal.plan.capabilities.includes('custom_domains')) {
      return { error: { code: 'plan_restricted', message: `the plan has no custom domains, so ${hostname} cannot be connected; import with domains: default` } };
    }
    if (dryRun) return { id: `dry-run:${hostname}`, hostname };
    try {
      const created = await service.create(principal, { hostname });
      return { id: created.id, hostname };
    } catch (error) {
      if (error instanceof AppError) return { error: { code: error.code, message: `the domain ${hostname} could not be connected: ${error.message}` } };
      throw error;
    }
  }
}
