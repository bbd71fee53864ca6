import { createHmac } from 'node:crypto';
import type { Collection, Db } from 'mongodb';

interface AttemptDoc {
  _id: string;
  count: number;
  expires_at: Date;
}

/**
 * Wrong passwords per visitor and link in a fixed window, kept in MongoDB so every redirect replica sees the same
 * count (a password POST is rare next to redirects; the database round trip is affordable there). The visitor is
 * its IP address, keyed-hashed: a cookie would be dropped by exactly the clients worth limiting.
 */
export class PasswordAttempts {
  private readonly collection: Collection<AttemptDoc>;
  private readonly max: number;
  private readonly windowMs: number;
  private readonly key: string;

  constructor(db: Db, options: { maxAttempts: number; windowMs: number; secretKey: string }) {
    this.collection = db.collection<AttemptDoc>('password_attempts');
    this.max = options.maxAttempts;
    this.windowMs = options.windowMs;
    this.key = options.secretKey;
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { expires_at: 1 }, name: 'ttl', expireAfterSeconds: 0 }]);
  }

  private id(linkId: string, visitor: string): string {
    return `${linkId}:${createHmac('sha256', this.key).update(visitor).digest('base64url').slice(0, 22)}`;
  }

  /** Seconds until the visitor may try again, or 0 when an attempt is allowed now. */
  async lockedFor(linkId: string, visitor: string, now = Date.now()): Promise<number> {
    const doc = await this.collection.findOne({ _id: this.id(linkId, visitor) });
    if (!doc || doc.expires_at.getTime() <= now || doc.count < this.max) return 0;
    return Math.max(1, Math.ceil((doc.expires_at.getTime() - now) / 1000));
  }

  /** Counts a wrong password; the window starts at the first failure. */
  async fail(linkId: string, visitor: string, now = Date.now()): Promise<void> {
    const _id = this.id(linkId, visitor);
    // A window that has run out starts again (the TTL monitor removes it only about once a minute).
    await this.collection.deleteOne({ _id, expires_at: { $lte: new Date(now) } });
    await this.collection.updateOne(
      { _id },
      { $inc: { count: 1 }, $setOnInsert: { expires_at: new Date(now + this.windowMs) } },
      { upsert: true },
    );
  }

  /** A correct password clears the count. */
  async succeed(linkId: string, visitor: string): Promise<void> {
    await this.collection.deleteOne({ _id: this.id(linkId, visitor) });
  }
}
