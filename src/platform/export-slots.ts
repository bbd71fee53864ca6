// At most N exports of a workspace run at once, across every API pod: an export holds one of the workspace's N slot
// documents (in its own collection per kind of export: the analytics clicks, the links) for its duration. A slot is a lease (renewed while the export streams), so a pod that dies while
// exporting frees its slot after LEASE_MS instead of never.
import { MongoServerError, type Collection, type Db } from 'mongodb';
import { randomUUID } from 'node:crypto';

export const LEASE_MS = 60_000;

interface SlotDoc {
  _id: string;
  holder: string;
  expires_at: Date;
}

export interface Slot {
  /** Keeps the slot while the export runs (call at least every LEASE_MS / 2). */
  renew(): Promise<void>;
  release(): Promise<void>;
}

export class ExportSlots {
  readonly collection: Collection<SlotDoc>;
  readonly perWorkspace: number;

  constructor(db: Db, collection: string, perWorkspace: number) {
    this.collection = db.collection<SlotDoc>(collection);
    this.perWorkspace = perWorkspace;
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { expires_at: 1 }, name: 'lease_ttl', expireAfterSeconds: 60 }]);
  }

  /** A free slot of the workspace, or the seconds until one may free up. */
  async acquire(workspaceId: string, now = Date.now()): Promise<Slot | { retryAfterSeconds: number }> {
    const holder = randomUUID();
    let soonest = Infinity;
    for (let i = 0; i < this.perWorkspace; i++) {
      const _id = `${workspaceId}|${i}`;
      try {
        const taken = await this.collection.findOneAndUpdate(
          { _id, expires_at: { $lte: new Date(now) } },
          { $set: { holder, expires_at: new Date(now + LEASE_MS) } },
          { upsert: true, returnDocument: 'after' },
        );
        if (taken?.holder === holder) return this.slot(_id, holder);
      } catch (error) {
        // The slot exists and is held (the upsert collided with it).
        if (!(error instanceof MongoServerError && error.code === 11000)) throw error;
      }
      const held = await this.collection.findOne({ _id });
      if (held) soonest = Math.min(soonest, held.expires_at.getTime() - now);
    }
    return { retryAfterSeconds: Math.max(1, Math.ceil((Number.isFinite(soonest) ? Math.min(soonest, LEASE_MS) : LEASE_MS) / 1000)) };
  }

  private slot(_id: string, holder: string): Slot {
    return {
      renew: async () => {
        await this.collection.updateOne({ _id, holder }, { $set: { expires_at: new Date(Date.now() + LEASE_MS) } });
      },
      release: async () => {
        await this.collection.deleteOne({ _id, holder });
      },
    };
  }
}
