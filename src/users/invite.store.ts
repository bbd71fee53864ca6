import type { Collection, Db } from 'mongodb';
import type { MembershipKind, Role } from '../tenancy/membership.store.ts';

/** An owner's invitation of an e-mail address to a workspace or partner; the token in the e-mail is stored hashed. */
export interface InviteDoc {
  _id: string;
  token_hash: string;
  kind: MembershipKind;
  target_id: string;
  email: string;
  role: Role;
  invited_by: string;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  accepted_by: string | null;
}

export class InviteStore {
  readonly collection: Collection<InviteDoc>;
  constructor(db: Db) {
    this.collection = db.collection<InviteDoc>('invites');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { token_hash: 1 }, name: 'token_hash_unique', unique: true },
      { key: { target_id: 1, created_at: 1 }, name: 'target_invites' },
      // OpenID Connect: a first-time user is let in by an open invite to their verified address.
      { key: { email: 1, accepted_at: 1 }, name: 'email_open' },
      { key: { expires_at: 1 }, name: 'ttl', expireAfterSeconds: 0 },
    ]);
  }

  async insert(doc: InviteDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  findById(id: string): Promise<InviteDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  findOpenByHash(hash: string, now: Date): Promise<InviteDoc | null> {
    return this.collection.findOne({ token_hash: hash, accepted_at: null, expires_at: { $gt: now } });
  }

  listOpen(targetId: string, now: Date): Promise<InviteDoc[]> {
    return this.collection.find({ target_id: targetId, accepted_at: null, expires_at: { $gt: now } }).sort({ created_at: 1 }).toArray();
  }

  listOpenForEmail(email: string, now: Date): Promise<InviteDoc[]> {
    return this.collection.find({ email, accepted_at: null, expires_at: { $gt: now } }).toArray();
  }

  /** Accepts once: of two concurrent acceptances exactly one gets the invite, the other null. */
  accept(id: string, userId: string, now: Date): Promise<InviteDoc | null> {
    return this.collection.findOneAndUpdate(
      { _id: id, accepted_at: null, expires_at: { $gt: now } },
      { $set: { accepted_at: now, accepted_by: userId } },
      { returnDocument: 'after' },
    );
  }

  async remove(targetId: string, id: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: id, target_id: targetId, accepted_at: null });
    return result.deletedCount === 1;
  }
}
