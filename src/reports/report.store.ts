import type { ClientSession, Collection, Db, Filter } from 'mongodb';
import { newestFirst } from '../platform/paging.ts';
import type { ReportAction, ReportReason } from './report.schemas.ts';

export interface ReportDoc {
  _id: string;
  workspace_id: string;
  link_id: string;
  short_url: string;
  destination: string;
  reason: ReportReason;
  details: string | null;
  reporter_contact: string | null;
  source: 'form' | 'api';
  status: 'open' | 'resolved';
  resolution: { action: ReportAction; note: string | null; resolved_at: Date } | null;
  created_at: Date;
  updated_at: Date;
}

/** The `abuse_reports` collection; every read carries the workspace id. */
export class ReportStore {
  readonly collection: Collection<ReportDoc>;
  constructor(db: Db) {
    this.collection = db.collection<ReportDoc>('abuse_reports');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { workspace_id: 1, created_at: -1, _id: -1 }, name: 'workspace_list' },
      { key: { workspace_id: 1, status: 1, created_at: -1, _id: -1 }, name: 'workspace_status_list' },
      { key: { link_id: 1, created_at: -1 }, name: 'link_reports' },
    ]);
  }

  async insert(doc: ReportDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  findById(workspaceId: string, id: string): Promise<ReportDoc | null> {
    return this.collection.findOne({ workspace_id: workspaceId, _id: id });
  }

  page(query: { workspaceId: string; status?: 'open' | 'resolved'; linkId?: string; after: { created_at: Date; id: string } | null; limit: number }): Promise<ReportDoc[]> {
    const and: Filter<ReportDoc>[] = [{ workspace_id: query.workspaceId }];
    if (query.status !== undefined) and.push({ status: query.status });
    if (query.linkId !== undefined) and.push({ link_id: query.linkId });
    return newestFirst(this.collection, and, query.after, query.limit);
  }

  async resolve(workspaceId: string, id: string, resolution: NonNullable<ReportDoc['resolution']>, session: ClientSession): Promise<ReportDoc | null> {
    return this.collection.findOneAndUpdate(
      { workspace_id: workspaceId, _id: id },
      { $set: { status: 'resolved', resolution, updated_at: resolution.resolved_at } },
      { returnDocument: 'after', session },
    );
  }
}
