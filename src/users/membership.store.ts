import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../platform/errors.ts';

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
}

export class MembershipStore {
  readonly collection: Collection<MembershipDoc>;
  constructor(db: Db) {
    this.collection = db.collection<MembershipDoc>('memberships');
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

  async remove(userId: string, targetId: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ user_id: userId, target_id: targetId });
    return result.deletedCount === 1;
  }
}
