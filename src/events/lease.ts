import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../platform/errors.ts';

interface LeaseDoc {
  _id: string;
  holder: string;
  expires_at: Date;
}

/**
 * A named lease in MongoDB: one replica at a time runs a singleton job (the outbox relay). Held by renewing before
 * it expires; a replica that dies loses it after `ttlMs`.
 */
export class Lease {
  private readonly collection: Collection<LeaseDoc>;
  private readonly name: string;
  private readonly ttlMs: number;
  readonly holder = randomUUID();

  constructor(db: Db, name: string, ttlMs: number) {
    this.collection = db.collection<LeaseDoc>('leases');
    this.name = name;
    this.ttlMs = ttlMs;
  }

  /** Takes or renews the lease; false when another live holder has it. */
  async acquire(now = new Date()): Promise<boolean> {
    try {
      const doc = await this.collection.findOneAndUpdate(
        { _id: this.name, $or: [{ holder: this.holder }, { expires_at: { $lt: now } }] },
        { $set: { holder: this.holder, expires_at: new Date(now.getTime() + this.ttlMs) } },
        { upsert: true, returnDocument: 'after' },
      );
      return doc?.holder === this.holder;
    } catch (error) {
      // The upsert collided with the live holder's document: someone else has it.
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  async release(): Promise<void> {
    await this.collection.deleteOne({ _id: this.name, holder: this.holder });
  }
}
