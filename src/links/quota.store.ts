import type { ClientSession, Collection, Db } from 'mongodb';
import { QuotaExceededError, isDuplicateKey } from '../platform/errors.ts';

interface CounterDoc {
  _id: string;
  links: number;
}

/**
 * Link counts per workspace, so a quota holds under concurrent creates: the increment is atomic and conditional
 * on staying under the limit. The link service takes a place before creating and gives it back on failure or
 * deletion.
 */
export class QuotaStore {
  private readonly collection: Collection<CounterDoc>;
  constructor(db: Db) {
    this.collection = db.collection<CounterDoc>('quota_counters');
  }

  async takeLinks(workspaceId: string, count: number, limit: number, session?: ClientSession): Promise<void> {
    try {
      const doc = await this.collection.findOneAndUpdate(
        { _id: workspaceId, links: { $lte: limit - count } },
        { $inc: { links: count } },
        { upsert: true, returnDocument: 'after', ...(session ? { session } : {}) },
      );
      if (!doc || doc.links > limit) {
        // Only a first counter created over the limit (a bulk larger than the quota) gets here: undo it.
        await this.releaseLinks(workspaceId, count, session);
        throw new QuotaExceededError('links', limit);
      }
    } catch (error) {
      // The filter missed an existing counter (it is at the limit), so the upsert collided with it.
      if (isDuplicateKey(error)) throw new QuotaExceededError('links', limit);
      throw error;
    }
  }

  /**
   * Takes as many of `count` places as are left, at most: the number taken (0 when the quota is reached). A batch
   * asks once; only at the limit does it read the counter to take what remains.
   */
  async takeLinksUpTo(workspaceId: string, count: number, limit: number): Promise<number> {
    for (let want = count; want > 0; ) {
      try {
        await this.takeLinks(workspaceId, want, limit);
        return want;
      } catch (error) {
        if (!(error instanceof QuotaExceededError)) throw error;
        const counter = await this.collection.findOne({ _id: workspaceId });
        // Fewer each time: concurrent creates may take the remaining places meanwhile.
        want = Math.min(want - 1, limit - (counter?.links ?? 0));
      }
    }
    return 0;
  }

  /** The places taken in the workspace's links quota (its links). */
  async linksUsed(workspaceId: string): Promise<number> {
    return (await this.collection.findOne({ _id: workspaceId }))?.links ?? 0;
  }

  async releaseLinks(workspaceId: string, count: number, session?: ClientSession): Promise<void> {
    await this.collection.updateOne({ _id: workspaceId }, { $inc: { links: -count } }, session ? { session } : {});
  }
}
