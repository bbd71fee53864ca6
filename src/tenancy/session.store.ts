import type { Collection, Db } from 'mongodb';

/** One signed-in browser. The cookie holds a random token; only its sha256 is stored, so a database leak signs no one in. */
export interface SessionDoc {
  _id: string;
  token_hash: string;
  user_id: string;
  /** The synchronizer token every state-changing request of this session must echo in X-CSRF-Token. */
  csrf_token: string;
  created_at: Date;
  last_seen_at: Date;
  /** The idle timeout: pushed forward as the session is used, never past `expires_at`. */
  idle_expires_at: Date;
  /** The absolute lifetime; the TTL index removes the record after it. */
  expires_at: Date;
  revoked_at: Date | null;
  user_agent: string | null;
  ip: string | null;
}

export class SessionStore {
  readonly collection: Collection<SessionDoc>;
  constructor(db: Db) {
    this.collection = db.collection<SessionDoc>('sessions');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { token_hash: 1 }, name: 'token_hash_unique', unique: true },
      { key: { user_id: 1, created_at: -1 }, name: 'user_sessions' },
      { key: { expires_at: 1 }, name: 'ttl', expireAfterSeconds: 0 },
    ]);
  }

  async insert(doc: SessionDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  findByHash(hash: string): Promise<SessionDoc | null> {
    return this.collection.findOne({ token_hash: hash });
  }

  /** The user's sessions still usable at `now`, newest first. */
  listLive(userId: string, now: Date): Promise<SessionDoc[]> {
    return this.collection
      .find({ user_id: userId, revoked_at: null, expires_at: { $gt: now }, idle_expires_at: { $gt: now } })
      .sort({ created_at: -1 })
      .toArray();
  }

  async touch(id: string, at: Date, idleExpiresAt: Date): Promise<void> {
    await this.collection.updateOne({ _id: id, revoked_at: null }, { $set: { last_seen_at: at, idle_expires_at: idleExpiresAt } });
  }

  /** Revokes one of the user's sessions; false when it is not theirs or already revoked. */
  async revoke(userId: string, id: string, at: Date): Promise<boolean> {
    const result = await this.collection.updateOne({ _id: id, user_id: userId, revoked_at: null }, { $set: { revoked_at: at } });
    return result.modifiedCount === 1;
  }

  /** Revokes every session of the user but `keepId` (after a password change). */
  async revokeOthers(userId: string, keepId: string | null, at: Date): Promise<void> {
    await this.collection.updateMany({ user_id: userId, revoked_at: null, ...(keepId ? { _id: { $ne: keepId } } : {}) }, { $set: { revoked_at: at } });
  }
}
