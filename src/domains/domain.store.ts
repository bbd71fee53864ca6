import type { ClientSession, Collection, Db } from 'mongodb';
import { DuplicateKeyError, isDuplicateKey } from '../platform/errors.ts';
import type { DnsRecord, DomainStatus } from './domain.schemas.ts';

export interface DomainDoc {
  _id: string;
  /** The tenant owning it: a workspace id, or a partner id for a partner domain (`owner_kind: 'partner'`). */
  workspace_id: string;
  /** `partner`: owned by a partner, usable by every client workspace of that partner; absent: a workspace's. */
  owner_kind?: 'partner';
  /** Punycode, lower case; unique across every workspace. */
  hostname: string;
  status: DomainStatus;
  verification_token: string;
  records: DnsRecord[];
  error: { reason: string; message: string } | null;
  /** The `Domain` object generation of the last transition applied (older ones are stale). */
  generation_seen?: number;
  /** `<generation>.<phase>` of the last transition applied: a redelivered message finds it and changes nothing. */
  last_transition?: string;
  created_at: Date;
  updated_at: Date;
  activated_at: Date | null;
}

export type DomainTransition = Pick<DomainDoc, 'status' | 'error' | 'updated_at'> & { generation_seen: number; last_transition: string; activated_at?: Date };

/** The `domains` collection. Every API query carries the workspace id; a foreign domain reads as a missing one. */
export class DomainStore {
  readonly collection: Collection<DomainDoc>;
  constructor(db: Db) {
    this.collection = db.collection<DomainDoc>('domains');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      // One owner per hostname, across tenants: the redirect resolves a host to exactly one workspace.
      { key: { hostname: 1 }, name: 'hostname_unique', unique: true },
      { key: { workspace_id: 1, created_at: 1, _id: 1 }, name: 'workspace_list' },
    ]);
  }

  /** Throws DuplicateKeyError when the hostname is already connected (by any workspace). */
  async insert(doc: DomainDoc): Promise<void> {
    try {
      await this.collection.insertOne(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw new DuplicateKeyError(`The hostname "${doc.hostname}" is already connected.`, error.keyValue, error);
      throw error;
    }
  }

  list(workspaceId: string): Promise<DomainDoc[]> {
    return this.collection.find({ workspace_id: workspaceId }).sort({ created_at: 1, _id: 1 }).toArray();
  }

  /** Every domain of these tenants (a partner and its clients), oldest first. */
  listOf(tenantIds: readonly string[]): Promise<DomainDoc[]> {
    return this.collection.find({ workspace_id: { $in: [...tenantIds] } }).sort({ created_at: 1, _id: 1 }).toArray();
  }

  count(workspaceId: string): Promise<number> {
    return this.collection.countDocuments({ workspace_id: workspaceId });
  }

  findById(workspaceId: string, id: string): Promise<DomainDoc | null> {
    return this.collection.findOne({ _id: id, workspace_id: workspaceId });
  }

  async exists(id: string): Promise<boolean> {
    return (await this.collection.countDocuments({ _id: id }, { limit: 1 })) > 0;
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: id, workspace_id: workspaceId });
    return result.deletedCount === 1;
  }

  /**
   * Applies a transition unless it was already applied or is older than the last one (a lower generation): the
   * filter makes the check and the write one atomic step. Returns the updated domain, or null when nothing changed.
   */
  applyTransition(workspaceId: string, id: string, change: DomainTransition, session: ClientSession): Promise<DomainDoc | null> {
    return this.collection.findOneAndUpdate(
      {
        _id: id,
        workspace_id: workspaceId,
        last_transition: { $ne: change.last_transition },
        $or: [{ generation_seen: { $exists: false } }, { generation_seen: { $lte: change.generation_seen } }],
      },
      { $set: change },
      { returnDocument: 'after', session },
    );
  }
}
