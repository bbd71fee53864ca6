import type { ClientSession, Collection, Db } from 'mongodb';
import { DuplicateKeyError, isDuplicateKey } from '../platform/errors.ts';
import { findDocs } from '../platform/find-batch.ts';

/** A workspace-scoped, uniquely named thing that links refer to: tags and folders. */
export interface LabelDoc {
  _id: string;
  workspace_id: string;
  name: string;
  /** Tags only: `#rrggbb` or null. */
  color?: string | null;
  created_at: Date;
}

export class LabelStore {
  readonly collection: Collection<LabelDoc>;
  private readonly kind: string;
  private readonly db: Db;

  constructor(db: Db, collection: 'tags' | 'folders') {
    this.db = db;
    this.collection = db.collection<LabelDoc>(collection);
    this.kind = collection === 'tags' ? 'tag' : 'folder';
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { workspace_id: 1, name: 1 }, name: 'workspace_name_unique', unique: true }]);
  }

  async insert(doc: LabelDoc): Promise<void> {
    try {
      await this.collection.insertOne(doc);
    } catch (error) {
      throw this.translate(error, doc.name);
    }
  }

  list(workspaceId: string): Promise<LabelDoc[]> {
    return this.collection.find({ workspace_id: workspaceId }).sort({ name: 1 }).limit(1000).toArray();
  }

  findById(workspaceId: string, id: string): Promise<LabelDoc | null> {
    return this.collection.findOne({ _id: id, workspace_id: workspaceId });
  }

  /** The labels of a page of links, read with every page: one find command, no driver cursor (see `findDocs`). */
  findMany(workspaceId: string, ids: readonly string[]): Promise<LabelDoc[]> {
    if (ids.length === 0) return Promise.resolve([]);
    // Ids are unique: at most one label each.
    return findDocs<LabelDoc>(this.db, { collection: this.collection.collectionName, filter: { workspace_id: workspaceId, _id: { $in: [...ids] } }, limit: ids.length });
  }

  async update(workspaceId: string, id: string, changes: { name?: string; color?: string | null }): Promise<LabelDoc | null> {
    try {
      return await this.collection.findOneAndUpdate({ _id: id, workspace_id: workspaceId }, { $set: changes }, { returnDocument: 'after' });
    } catch (error) {
      throw this.translate(error, changes.name ?? '');
    }
  }

  async delete(workspaceId: string, id: string, session?: ClientSession): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: id, workspace_id: workspaceId }, session ? { session } : {});
    return result.deletedCount === 1;
  }

  private translate(error: unknown, name: string): unknown {
    if (isDuplicateKey(error)) return new DuplicateKeyError(`A ${this.kind} named "${name}" already exists.`, error.keyValue, error);
    return error;
  }
}
