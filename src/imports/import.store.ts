// Where import jobs live: the jobs (`import_jobs`), what each was given to read (`import_payloads`: token, base URL and
// file, sealed), their per-row errors (`import_errors`), and the source ids already imported into each workspace
// (`imported_links`), which is what makes running the same import twice create nothing twice: one row per workspace +
// source kind + source id, under a unique index.
//
// The payload has its own document because a file can weigh megabytes while the job is read on every poll of its
// progress and rewritten after every batch: kept in the job, each of those reads and writes carried the whole file.
import type { Collection, Db, MongoClient } from 'mongodb';
import { inTransaction } from '../platform/mongo.ts';
import type { SourceKind } from './source.ts';
import type { ImportStatus } from './import.schemas.ts';

export interface ImportJobDoc {
  _id: string;
  workspace_id: string;
  /** The key that created the job: the job acts with that key's workspace and plan. */
  key_id: string;
  source: SourceKind;
  params: Record<string, string>;
  has_token: boolean;
  dry_run: boolean;
  domains: 'create' | 'default';
  on_slug_clash: 'error' | 'suffix';
  status: ImportStatus;
  /** The source's cursor of the next page to read; null before the first page (and after the last). */
  cursor: string | null;
  /** Pages written so far; numbers the rows' errors so a batch read again after a restart writes the same ones. */
  batches: number;
  total: number | null;
  created: number;
  skipped: number;
  failed: number;
  error: { code: string; message: string } | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** What a job reads: its token, base URL and file as JSON sealed with SecretBox (AES-256-GCM, bound to the job id); never returned. */
export interface ImportPayloadDoc {
  /** The job's id. */
  _id: string;
  workspace_id: string;
  sealed: string;
  created_at: Date;
}

export interface ImportErrorDoc {
  _id: string;
  job_id: string;
  workspace_id: string;
  /** Order of the row in the import: batch × 1,000,000 + its index in the batch. */
  seq: number;
  ref: string;
  code: string;
  message: string;
  slug: string | null;
  domain: string | null;
}

export interface ImportedLinkDoc {
  _id: string;
  workspace_id: string;
  source: SourceKind;
  source_id: string;
  job_id: string;
  /** `pending`: claimed before its link is written; `created` once it is. A pending row left by a dead worker is resolved by the next run. */
  state: 'pending' | 'created';
  /** The id its link is (or, while pending, is to be) created with; null on claims made before ids were chosen ahead. */
  link_id: string | null;
  domain_id: string;
  slug: string;
  url: string;
  at: Date;
}

/** What one batch changes on its job, written in one transaction with the batch's row errors. */
export interface BatchProgress {
  cursor: string | null;
  total: number | null;
  created: number;
  skipped: number;
  failed: number;
  errors: ImportErrorDoc[];
  /** The job is done with this batch (the source had no further page). */
  last: boolean;
}

export class ImportStore {
  readonly jobs: Collection<ImportJobDoc>;
  readonly errors: Collection<ImportErrorDoc>;
  readonly imported: Collection<ImportedLinkDoc>;
  readonly payloads: Collection<ImportPayloadDoc>;
  private readonly client: MongoClient;

  constructor(db: Db) {
    this.client = db.client;
    this.jobs = db.collection<ImportJobDoc>('import_jobs');
    this.errors = db.collection<ImportErrorDoc>('import_errors');
    this.imported = db.collection<ImportedLinkDoc>('imported_links');
    this.payloads = db.collection<ImportPayloadDoc>('import_payloads');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.jobs.createIndexes([
        { key: { workspace_id: 1, created_at: -1, _id: -1 }, name: 'workspace_newest' },
        { key: { status: 1, created_at: 1 }, name: 'status_oldest' },
      ]),
      this.errors.createIndex({ job_id: 1, seq: 1 }, { name: 'job_seq' }),
      this.imported.createIndex({ workspace_id: 1, source: 1, source_id: 1 }, { name: 'workspace_source_id_unique', unique: true }),
    ]);
  }

  /** The job and its payload, together: a worker never finds a job without what it is to read. */
  async insert(doc: ImportJobDoc, sealed: string): Promise<void> {
    await inTransaction(this.client, async (session) => {
      await this.payloads.insertOne({ _id: doc._id, workspace_id: doc.workspace_id, sealed, created_at: doc.created_at }, { session });
      await this.jobs.insertOne(doc, { session });
    });
  }

  /** The job's sealed payload; null when there is none. */
  async payload(id: string): Promise<string | null> {
    return (await this.payloads.findOne({ _id: id }))?.sealed ?? null;
  }

  find(workspaceId: string, id: string): Promise<ImportJobDoc | null> {
    return this.jobs.findOne({ _id: id, workspace_id: workspaceId });
  }

  findById(id: string): Promise<ImportJobDoc | null> {
    return this.jobs.findOne({ _id: id });
  }

  /** Newest first, positioned after (created_at, id). */
  page(workspaceId: string, after: { created_at: Date; id: string } | null, limit: number): Promise<ImportJobDoc[]> {
    const filter = after
      ? { workspace_id: workspaceId, $or: [{ created_at: { $lt: after.created_at } }, { created_at: after.created_at, _id: { $lt: after.id } }] }
      : { workspace_id: workspaceId };
    return this.jobs.find(filter).sort({ created_at: -1, _id: -1 }).limit(limit).toArray();
  }

  errorPage(jobId: string, afterSeq: number | null, limit: number): Promise<ImportErrorDoc[]> {
    const filter = afterSeq === null ? { job_id: jobId } : { job_id: jobId, seq: { $gt: afterSeq } };
    return this.errors.find(filter).sort({ seq: 1 }).limit(limit).toArray();
  }

  /** Jobs a worker may take: queued or running (a running one whose worker died is resumed under its lease). */
  runnable(limit: number): Promise<ImportJobDoc[]> {
    return this.jobs.find({ status: { $in: ['queued', 'running'] } }).sort({ created_at: 1 }).limit(limit).toArray();
  }

  /** Queued or running → canceled; null when the job had already ended. */
  cancel(workspaceId: string, id: string, now: Date): Promise<ImportJobDoc | null> {
    return this.jobs.findOneAndUpdate(
      { _id: id, workspace_id: workspaceId, status: { $in: ['queued', 'running'] } },
      { $set: { status: 'canceled', finished_at: now, updated_at: now } },
      { returnDocument: 'after' },
    );
  }

  /** queued → running (kept when already running: a resumed job). False when the job ended meanwhile (canceled). */
  async start(id: string, now: Date): Promise<boolean> {
    const result = await this.jobs.updateOne(
      { _id: id, status: { $in: ['queued', 'running'] } },
      [{ $set: { status: 'running', updated_at: now, started_at: { $ifNull: ['$started_at', now] } } }],
    );
    return result.matchedCount === 1;
  }

  /**
   * The batch's errors and the job's new cursor and counts, together: a worker that dies before this commit reads the
   * batch again (its links are found in `imported_links`, its errors get the same ids), one that dies after goes on
   * from the next page. False when the job was canceled meanwhile (nothing is written).
   */
  async commitBatch(id: string, progress: BatchProgress, now: Date): Promise<boolean> {
    return inTransaction(this.client, async (session) => {
      const result = await this.jobs.updateOne(
        { _id: id, status: 'running' },
        {
          $set: {
            cursor: progress.cursor,
            total: progress.total,
            updated_at: now,
            ...(progress.last ? { status: 'succeeded' as const, finished_at: now } : {}),
          },
          $inc: { batches: 1, created: progress.created, skipped: progress.skipped, failed: progress.failed },
        },
        { session },
      );
      // Nothing was written: the transaction commits empty.
      if (result.matchedCount !== 1) return false;
      // Written only here, with the batch's count: a batch read again after a restart never finds its errors written.
      if (progress.errors.length > 0) await this.errors.insertMany(progress.errors, { session });
      return true;
    });
  }

  async fail(id: string, error: { code: string; message: string }, now: Date): Promise<void> {
    await this.jobs.updateOne({ _id: id, status: 'running' }, { $set: { status: 'failed', error, finished_at: now, updated_at: now } });
  }
}
