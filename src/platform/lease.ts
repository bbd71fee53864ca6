import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './errors.ts';

interface LeaseDoc {
  _id: string;
  holder: string;
  expires_at: Date;
}

/**
 * A named lease in MongoDB: one replica at a time runs a singleton job (the outbox relay). Held by renewing before
 * it expires; a replica that dies loses it after `ttlMs`. The holder writes only when a third of the term has passed
 * since its last renewal: the relay asks at every wake-up, and a write there was a MongoDB round trip on the way of
 * every event to its webhooks.
 */
export class Lease {
  private readonly collection: Collection<LeaseDoc>;
  private readonly name: string;
  private readonly ttlMs: number;
  readonly holder = randomUUID();
  /** When this holder last took or renewed the lease (its `expires_at` minus the term); null when it does not hold it. */
  private renewedAt: number | null = null;

  constructor(db: Db, name: string, ttlMs: number) {
    this.collection = db.collection<LeaseDoc>('leases');
    this.name = name;
    this.ttlMs = ttlMs;
  }

  /** Takes or renews the lease; false when another live holder has it. */
  async acquire(now = new Date()): Promise<boolean> {
    const since = this.renewedAt === null ? null : now.getTime() - this.renewedAt;
    // Two thirds of the term or more are left: no other replica can have taken it (it waits for expires_at).
    if (since !== null && since >= 0 && since < this.ttlMs / 3) return true;
    try {
      const doc = await this.collection.findOneAndUpdate(
        { _id: this.name, $or: [{ holder: this.holder }, { expires_at: { $lt: now } }] },
        { $set: { holder: this.holder, expires_at: new Date(now.getTime() + this.ttlMs) } },
        { upsert: true, returnDocument: 'after' },
      );
      const held = doc?.holder === this.holder;
      this.renewedAt = held ? now.getTime() : null;
      return held;
    } catch (error) {
      this.renewedAt = null;
      // The upsert collided with the live holder's document: someone else has it.
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  async release(): Promise<void> {
    this.renewedAt = null;
    await this.collection.deleteOne({ _id: this.name, holder: this.holder });
  }
}
