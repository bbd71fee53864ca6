// Import jobs as the API sees them: created queued (their credentials sealed), read with their progress and their
// per-row errors, canceled. The worker runs them (import-runner.ts).
import { newId } from '../platform/ids.ts';
import { ConflictError, NotFoundError, ValidationError } from '../platform/errors.ts';
import { decodeCursor, decodeTimePosition, pageOf, timePosition } from '../http/cursor.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import { SourceError, type SourceDeps, type SourceOptions } from './source.ts';
import { SOURCE_FACTORIES } from './source-registry.ts';
import type { ImportErrorDoc, ImportJobDoc, ImportStore } from './import.store.ts';
import { FILE_SOURCES, type Import, type ImportCreate, type ImportErrorList, type ImportList, type ImportListQuery, type ImportRowError } from './import.schemas.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

/** What is sealed in a job: everything that may be a secret or the user's data. */
export interface SealedCredentials {
  token: string | null;
  base_url: string | null;
  file: string | null;
}

/** The purpose SecretBox derives the import credentials' key for (distinct from webhook secrets'). */
export const IMPORT_SEAL_PURPOSE = 'import-credentials/v1';

/** Sources are built once at creation only to check their options: nothing is fetched. */
const NO_NETWORK: SourceDeps = {
  http: () => Promise.reject(new Error('no request is made while checking the options')),
  sleep: () => Promise.resolve(),
};

export function openCredentials(box: SecretBox, job: ImportJobDoc, payload: string): SourceOptions {
  const sealed = JSON.parse(box.open(payload, job._id)) as SealedCredentials;
  return { token: sealed.token, baseUrl: sealed.base_url, params: job.params, file: sealed.file };
}

export class ImportService {
  private readonly store: ImportStore;
  private readonly box: SecretBox;
  private readonly now: () => Date;
  private readonly onCreated: () => void;

  constructor(deps: { store: ImportStore; box: SecretBox; now?: () => Date; onCreated?: () => void }) {
    this.store = deps.store;
    this.box = deps.box;
    this.now = deps.now ?? (() => new Date());
    this.onCreated = deps.onCreated ?? (() => undefined);
  }

  async create(principal: WorkspacePrincipal, input: ImportCreate): Promise<Import> {
    const isFile = FILE_SOURCES.includes(input.source);
    const factory = SOURCE_FACTORIES[input.source];
    if (!factory) throw new ValidationError([{ path: 'source', message: `importing from ${input.source} is not available yet` }]);
    if (isFile && input.file === undefined) throw new ValidationError([{ path: 'file', message: `is required for ${input.source}: the export file's text` }]);
    if (!isFile && input.file !== undefined) throw new ValidationError([{ path: 'file', message: `is only for file sources (${FILE_SOURCES.join(', ')})` }]);
    const options: SourceOptions = { token: input.token ?? null, baseUrl: input.base_url ?? null, params: input.params ?? {}, file: input.file ?? null };
    try {
      factory(options, NO_NETWORK);
    } catch (error) {
      if (error instanceof SourceError) throw new ValidationError([{ path: pathOf(error.message), message: error.message }], `The ${input.source} options are not usable: ${error.message}`);
      throw error;
    }
    const now = this.now();
    const id = newId('imp');
    const sealed: SealedCredentials = { token: options.token, base_url: options.baseUrl, file: options.file };
    const doc: ImportJobDoc = {
      _id: id,
      workspace_id: principal.workspace._id,
      key_id: principal.key._id,
      source: input.source,
      params: options.params,
      has_token: options.token !== null,
      dry_run: input.dry_run,
      domains: input.domains,
      on_slug_clash: input.on_slug_clash,
      status: 'queued',
      cursor: null,
      batches: 0,
      total: null,
      created: 0,
      skipped: 0,
      failed: 0,
      error: null,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
    };
    await this.store.insert(doc, this.box.seal(JSON.stringify(sealed), id));
    this.onCreated();
    return importView(doc);
  }

  async list(principal: WorkspacePrincipal, query: ImportListQuery): Promise<ImportList> {
    const rows = await this.store.page(principal.workspace._id, decodeTimePosition(query.cursor), query.limit + 1);
    const { page, pagination } = pageOf(rows, query.limit, timePosition);
    return { data: page.map(importView), pagination };
  }

  async get(principal: WorkspacePrincipal, id: string): Promise<Import> {
    return importView(await this.find(principal, id));
  }

  async errors(principal: WorkspacePrincipal, id: string, query: ImportListQuery): Promise<ImportErrorList> {
    const job = await this.find(principal, id);
    const after = query.cursor === undefined ? null : (decodeCursor(query.cursor, { s: 'number' }).s as number);
    const rows = await this.store.errorPage(job._id, after, query.limit + 1);
    const { page, pagination } = pageOf(rows, query.limit, (row) => ({ s: row.seq }));
    return { data: page.map(rowErrorView), pagination };
  }

  /** A queued or running job stops (a running one after the batch in hand); an ended one answers 409. */
  async cancel(principal: WorkspacePrincipal, id: string): Promise<Import> {
    const job = await this.find(principal, id);
    const canceled = await this.store.cancel(principal.workspace._id, job._id, this.now());
    if (!canceled) throw new ConflictError(`The import has already ended (${(await this.find(principal, id)).status}).`);
    return importView(canceled);
  }

  private async find(principal: WorkspacePrincipal, id: string): Promise<ImportJobDoc> {
    const job = await this.store.find(principal.workspace._id, id);
    if (!job) throw new NotFoundError('import');
    return job;
  }
}

/** Which request field a source's `input` complaint is about, from the words it uses. */
function pathOf(message: string): string {
  if (/base url/i.test(message)) return 'base_url';
  if (/token|key|signature|needs/i.test(message)) return 'token';
  if (/file|row|column|header|csv/i.test(message)) return 'file';
  return 'params';
}

export function importView(doc: ImportJobDoc): Import {
  return {
    id: doc._id,
    source: doc.source,
    status: doc.status,
    dry_run: doc.dry_run,
    domains: doc.domains,
    on_slug_clash: doc.on_slug_clash,
    params: doc.params,
    has_token: doc.has_token,
    total: doc.total,
    done: doc.created + doc.skipped + doc.failed,
    created: doc.created,
    skipped: doc.skipped,
    failed: doc.failed,
    error: doc.error,
    created_at: doc.created_at.toISOString(),
    started_at: doc.started_at?.toISOString() ?? null,
    finished_at: doc.finished_at?.toISOString() ?? null,
  };
}

function rowErrorView(doc: ImportErrorDoc): ImportRowError {
  return { ref: doc.ref, code: doc.code, message: doc.message, slug: doc.slug, domain: doc.domain };
}
