import type { Collection, Db } from 'mongodb';

export interface IpListDoc {
  _id: string;
  workspace_id: string;
  name: string;
  entries: string[];
  note: string | null;
  created_at: Date;
  updated_at: Date;
}

export type IpListChanges = Partial<Pick<IpListDoc, 'name' | 'entries' | 'note' | 'updated_at'>>;

/** IP lists of a workspace. Every query carries the workspace: another workspace's list is a missing one. */
export class IpListStore {
  readonly collection: Collection<IpListDoc>;
  constructor(db: Db) {
    this.collection = db.collection<IpListDoc>('ip_lists');
  }

  async ensureIndexes(): Promise<void> {
    // Serves the list (creation order), the count for the quota and the redirect's load of all lists at once.
    await this.collection.createIndexes([{ key: { workspace_id: 1, created_at: 1, _id: 1 }, name: 'workspace_list' }]);
  }

  async insert(doc: IpListDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  /** Oldest first: a single page of at most the quota. */
  list(workspaceId: string): Promise<IpListDoc[]> {
    return this.collection.find({ workspace_id: workspaceId }).sort({ created_at: 1, _id: 1 }).toArray();
  }

  count(workspaceId: string): Promise<number> {
    return this.collection.countDocuments({ workspace_id: workspaceId });
  }

  findById(workspaceId: string, id: string): Promise<IpListDoc | null> {
    return this.collection.findOne({ workspace_id: workspaceId, _id: id });
  }

  /** Which of `ids` name a list of the workspace (the entries are not read). */
  async existing(workspaceId: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const docs = await this.collection.find({ workspace_id: workspaceId, _id: { $in: [...ids] } }, { projection: { _id: 1 } }).toArray();
    return new Set(docs.map((d) => d._id));
  }

  update(workspaceId: string, id: string, changes: IpListChanges): Promise<IpListDoc | null> {
    return this.collection.findOneAndUpdate({ workspace_id: workspaceId, _id: id }, { $set: changes }, { returnDocument: 'after' });
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ workspace_id: workspaceId, _id: id });
    return result.deletedCount === 1;
  }
}
