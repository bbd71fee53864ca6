// The worker's side of import jobs: it looks for queued jobs (and running ones whose worker died), takes one under a
// lease (`import:<id>`, so one worker runs a job at a time), and reads its source page by page, each page imported
// as one batch; the job's cursor and counts are written after each batch, so a worker that dies is followed by one
// that goes on from the last page written.
import type { Collection, Db } from 'mongodb';
import { Lease } from '../platform/lease.ts';
import { Periodic } from '../platform/periodic.ts';
import type { Logger } from '../platform/logger.ts';
import { outboundAgents, send, type OutboundAgents } from '../platform/outbound/outbound.ts';
import { effectivePlan } from '../tenancy/plans.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { ApiKeyDoc, KeyStore } from '../tenancy/key.store.ts';
import { MembershipStore } from '../tenancy/membership.store.ts';
import { SessionStore } from '../tenancy/session.store.ts';
import { scopesOf } from '../tenancy/roles.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import type { LinkService } from '../links/link.service.ts';
import type { LinkDoc } from '../links/link.store.ts';
import type { LabelStore } from '../links/label.store.ts';
import type { DomainService } from '../domains/domain.service.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import { SourceError, type SourceDeps, type SourceHttp } from './source.ts';
import { SOURCE_FACTORIES } from './source-registry.ts';
import { ImportDomains } from './import-domains.ts';
import { ImportBatch, type DryRunState } from './import-batch.ts';
import { openCredentials } from './import.service.ts';
import type { ImportJobDoc, ImportStore } from './import.store.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

export interface ImportRunnerDeps {
  db: Db;
  store: ImportStore;
  box: SecretBox;
  /** A links service whose domain directory also accepts the workspace's domains still being verified. */
  links: LinkService;
  linkDocs: Collection<LinkDoc>;
  tags: LabelStore;
  keys: KeyStore;
  workspaces: WorkspaceStore;
  domains: DomainService;
  defaultHostname: string;
  logger: Logger;
  pollMs: number;
  leaseMs: number;
  allowPrivateSources: boolean;
  /** Replaces the guarded outbound client (tests); the worker uses the platform's. */
  http?: SourceHttp;
  now?: () => Date;
}

const REQUEST_TIMEOUT_MS = 60_000;
const MAX_ANSWER_BYTES = 32 * 1_048_576;

/** Why a job stopped without finishing, as its `error.code`. */
const SOURCE_ERROR_CODES: Record<SourceError['kind'], string> = { auth: 'source_auth', input: 'source_input', remote: 'source_unavailable' };

export class ImportRunner {
  private readonly d: ImportRunnerDeps;
  private readonly periodic: Periodic;
  private readonly stopping = new AbortController();
  private readonly http: SourceHttp;
  private readonly now: () => Date;

  constructor(deps: ImportRunnerDeps) {
    this.d = deps;
    this.now = deps.now ?? (() => new Date());
    this.http = deps.http ?? guardedHttp(outboundAgents({ allowPrivate: deps.allowPrivateSources }, { maxSocketsPerOrigin: 4 }), deps.allowPrivateSources);
    this.periodic = new Periodic({ intervalMs: deps.pollMs, logger: deps.logger, failure: 'import round failed', round: () => this.round(), atStart: true });
  }

  start(): void {
    this.periodic.start();
  }

  /** Wakes the loop now (a job was just created in this process). */
  nudge(): void {
    void this.periodic.runOnce().catch((error: unknown) => this.d.logger.warn({ err: error }, 'import round failed'));
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.periodic.stop();
  }

  /** Runs every job that can be taken, one after the other, until none is left or the worker stops. */
  async round(): Promise<void> {
    const tried = new Set<string>();
    while (!this.stopping.signal.aborted) {
      const job = (await this.d.store.runnable(20)).find((j) => !tried.has(j._id));
      if (!job) return;
      tried.add(job._id);
      const lease = new Lease(this.d.db, `import:${job._id}`, this.d.leaseMs);
      if (!(await lease.acquire())) continue;
      try {
        await this.run(job._id, lease);
      } finally {
        await lease.release().catch(() => undefined);
      }
    }
  }

  /** One job, from its stored cursor to its end (or until it is canceled, the lease is lost, or the worker stops). */
  async run(id: string, lease: Lease): Promise<void> {
    const signal = this.stopping.signal;
    if (!(await this.d.store.start(id, this.now()))) return;
    let job = (await this.d.store.findById(id))!;
    const principal = await this.principalOf(job);
    if (!principal) {
      await this.d.store.fail(id, { code: 'forbidden', message: 'the key that started the import was revoked, or its workspace is gone' }, this.now());
      return;
    }
    const factory = SOURCE_FACTORIES[job.source];
    try {
      if (!factory) throw new SourceError('input', `no reader for ${job.source}`);
      const payload = await this.d.store.payload(id);
      if (payload === null) throw new SourceError('input', 'the job has lost what it was given to read');
      const source = factory(openCredentials(this.d.box, job, payload), this.sourceDeps());
      const domains = new ImportDomains({
        db: this.d.db,
        service: this.d.domains,
        principal,
        source: job.source,
        defaultHostname: this.d.defaultHostname,
        mode: job.domains,
        dryRun: job.dry_run,
      });
      const dryRunState: DryRunState = { taken: new Set<string>(), remaining: null };
      for (;;) {
        if (signal.aborted || !(await lease.acquire())) return;
        const page = await source.page(job.cursor, signal);
        const batch = new ImportBatch({ store: this.d.store, links: this.d.links, linkDocs: this.d.linkDocs, tags: this.d.tags, domains, principal, now: this.now }, job, dryRunState);
        const outcome = await batch.run(page);
        const committed = await this.d.store.commitBatch(id, { ...outcome, cursor: page.next, total: page.total ?? job.total, last: page.next === null }, this.now());
        if (!committed || page.next === null) return;
        job = (await this.d.store.findById(id))!;
        if (job.status !== 'running') return;
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof SourceError) {
        await this.d.store.fail(id, { code: SOURCE_ERROR_CODES[error.kind], message: error.message }, this.now());
        return;
      }
      // A database or network failure of ours: the job stays running and is taken again at the next round.
      throw error;
    }
  }

  /**
   * The job acts as the key that created it, with its workspace's current plan; null once the key is revoked. A job
   * started from the dashboard has its session's id for a key (the session stands for a key there): it acts as that
   * session's user, with the role the user has in the workspace now; null once the user is no longer a member.
   */
  private async principalOf(job: ImportJobDoc): Promise<WorkspacePrincipal | null> {
    const [stored, workspace] = await Promise.all([this.d.keys.findById(job.key_id), this.d.workspaces.findById(job.workspace_id)]);
    if (!workspace) return null;
    const key = stored ?? (await this.memberKeyOf(job));
    if (!key || key.revoked_at !== null) return null;
    const plan = effectivePlan(workspace.plan_id, workspace.limits_override, workspace.capabilities_override);
    return { kind: 'workspace', key, scopes: new Set(key.scopes), workspace, plan, rateLimitPerMinute: plan.limits.rate_limit_per_minute ?? 0 };
  }

  /** The key a dashboard session stood for when it started the job, with the scopes of its user's role today. */
  private async memberKeyOf(job: ImportJobDoc): Promise<ApiKeyDoc | null> {
    const session = await new SessionStore(this.d.db).collection.findOne({ _id: job.key_id });
    if (!session) return null;
    const membership = await new MembershipStore(this.d.db).find(session.user_id, job.workspace_id);
    if (!membership || membership.kind !== 'workspace') return null;
    return {
      _id: session._id,
      kind: 'workspace',
      workspace_id: job.workspace_id,
      partner_id: null,
      name: 'dashboard session',
      prefix: '',
      key_hash: '',
      scopes: [...scopesOf(membership.role)],
      created_at: session.created_at,
      expires_at: null,
      revoked_at: null,
      last_used_at: null,
    };
  }

  private sourceDeps(): SourceDeps {
    return {
      http: this.http,
      sleep: (ms, signal) =>
        new Promise<void>((resolve, reject) => {
          if (signal.aborted) return reject(signal.reason as Error);
          const timer = setTimeout(() => {
            signal.removeEventListener('abort', onAbort);
            resolve();
          }, ms);
          const onAbort = () => {
            clearTimeout(timer);
            reject(signal.reason as Error);
          };
          signal.addEventListener('abort', onAbort, { once: true });
        }),
    };
  }
}

/** Requests to a source through the platform's outbound client: SSRF-checked sockets, bounded in time and size. */
function guardedHttp(agents: OutboundAgents, allowPrivate: boolean): SourceHttp {
  return async (request, signal) => {
    if (signal.aborted) throw signal.reason as Error;
    const answer = await send(agents, { allowPrivate }, { ...request, timeoutMs: REQUEST_TIMEOUT_MS, maxBodyBytes: MAX_ANSWER_BYTES });
    return { status: answer.status, headers: answer.headers, body: answer.body.toString('utf8') };
  };
}
