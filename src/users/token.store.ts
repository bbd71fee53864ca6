import type { Collection, Db } from 'mongodb';

/** A one-time sign-in link: stored by the sha256 of its token, used at most once, within its lifetime. */
export interface SignInLinkDoc {
  _id: string;
  user_id: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export class SignInLinkStore {
  readonly collection: Collection<SignInLinkDoc>;
  /** `sign_in_links`, or `password_resets` for the password reset links, which have the same lifecycle. */
  constructor(db: Db, collection = 'sign_in_links') {
    this.collection = db.collection<SignInLinkDoc>(collection);
  }

  async ensureIndexes(): Promise<void> {
    // Looked up by _id only; the TTL index clears used and expired links.
    await this.collection.createIndexes([{ key: { expires_at: 1 }, name: 'ttl', expireAfterSeconds: 0 }]);
  }

  async insert(doc: SignInLinkDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  /** The link if still usable, without using it: following the e-mailed link only reads. */
  findOpen(hash: string, now: Date): Promise<SignInLinkDoc | null> {
    return this.collection.findOne({ _id: hash, used_at: null, expires_at: { $gt: now } });
  }

  /** Marks every open link of the user used (a password reset ends the other reset links sent before it). */
  async closeAllOf(userId: string, now: Date): Promise<void> {
    await this.collection.updateMany({ user_id: userId, used_at: null }, { $set: { used_at: now } });
  }

  /** Marks the link used, atomically: of two concurrent uses exactly one gets the record, the other null. */
  consume(hash: string, now: Date): Promise<SignInLinkDoc | null> {
    return this.collection.findOneAndUpdate({ _id: hash, used_at: null, expires_at: { $gt: now } }, { $set: { used_at: now } }, { returnDocument: 'after' });
  }
}
