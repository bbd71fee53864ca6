import type { Collection, Db, MongoClient } from 'mongodb';
import { isDuplicateKey } from '../platform/errors.ts';
import { inTransaction } from '../platform/mongo.ts';

export type MembershipKind = 'workspace' | 'partner';
export type Role = 'owner' | 'member';

/** A user's place in one workspace or partner: what the dashboard lets them see and do there. */
export interface MembershipDoc {
  _id: string;
  user_id: string;
  kind: MembershipKind;
  /** The workspace (`ws_…`) or partner (`ptr_…`) id. */
  target_id: string;
  role: Role;
  created_at: Date;
  /** Bumped by each removal that relies on this owner staying (see removeKeepingAnOwner). */
  owner_guard?: number;
}

export type RemoveOutcome = 'removed' | 'missing' | 'last_owner';

export class MembershipStore {
  readonly collection: Collection<MembershipDoc>;
  private readonly client: MongoClient;
  constructor(db: Db) {
    this.collection = db.collection<MembershipDoc>('memberships');
    this.client = db.client;
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      // The gate's lookup on every dashboard call to /v1, and the one membership per user and target.
      { key: { user_id: 1, target_id: 1 }, name: 'user_target_unique', unique: true },
      { key: { target_id: 1, created_at: 1 }, name: 'target_members' },
    ]);
  }

  /** Adds the user, or changes their role when they already belong. */
  async upsert(doc: MembershipDoc): Promise<void> {
    const write = () =>
      this.collection.updateOne(
        { user_id: doc.user_id, target_id: doc.target_id },
        { $set: { role: doc.role }, $setOnInsert: { _id: doc._id, kind: doc.kind, created_at: doc.created_at } },
        { upsert: true },
      );
    try {
      await write();
    } catch (error) {
      // Two upserts racing: one inserted, the other now finds it.
      if (!isDuplicateKey(error)) throw error;
      await write();
    }
  }

  /** Adds the user with `role` unless they already belong (an invite never demotes an owner). */
  async join(doc: MembershipDoc): Promise<void> {
    try {
      await this.collection.updateOne(
        { user_id: doc.user_id, target_id: doc.target_id },
        { $setOnInsert: { _id: doc._id, kind: doc.kind, role: doc.role, created_at: doc.created_at } },
        { upsert: true },
      );
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
  }

  find(userId: string, targetId: string): Promise<MembershipDoc | null> {
    return this.collection.findOne({ user_id: userId, target_id: targetId });
  }

  listForUser(userId: string): Promise<MembershipDoc[]> {
    return this.collection.find({ user_id: userId }).sort({ created_at: 1 }).toArray();
  }

  listForTarget(targetId: string): Promise<MembershipDoc[]> {
    return this.collection.find({ target_id: targetId }).sort({ created_at: 1 }).toArray();
  }

  countOwners(targetId: string): Promise<number> {
    return this.collection.countDocuments({ target_id: targetId, role: 'owner' });
  }

  /**
   * Removes the membership unless it is the target's last owner. A count then a delete would let two owners
   * removing each other both pass (each sees two owners); so one transaction also writes every other owner's
   * membership: two such removals then write each other's document, one conflicts and, retried, finds itself
   * removing the last owner.
   */
  removeKeepingAnOwner(userId: string, targetId: string): Promise<RemoveOutcome> {
    return inTransaction(this.client, async (session): Promise<RemoveOutcome> => {
      const membership = await this.collection.findOne({ user_id: userId, target_id: targetId }, { session });
      if (!membership) return 'missing';
      if (membership.role === 'owner') {
        // $inc, not $set: a write that changes nothing would not conflict.
        const others = await this.collection.updateMany({ target_id: targetId, role: 'owner', user_id: { $ne: userId } }, { $inc: { owner_guard: 1 } }, { session });
        if (others.matchedCount === 0) return 'last_owner';
      }
      await this.collection.deleteOne({ _id: membership._id }, { session });
      return 'removed';
    });
  }
}
