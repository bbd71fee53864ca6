import type { Collection, Db } from 'mongodb';

interface UsageDoc {
  _id: string;
  workspace_id: string;
  /** Calendar month in UTC, `YYYY-MM`. */
  period: string;
  tracked_clicks: number;
}

export function periodOf(date: Date): { key: string; start: Date; end: Date } {
  const start = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1));
  const end = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1));
  return { key: start.toISOString().slice(0, 7), start, end };
}

/** Monthly counters per workspace; the click ingestion increments them in batches. */
export class UsageStore {
  private readonly collection: Collection<UsageDoc>;
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
    this.collection = db.collection<UsageDoc>('usage');
  }

  async trackedClicks(workspaceId: string, period: string): Promise<number> {
    const doc = await this.collection.findOne({ _id: `${workspaceId}:${period}` });
    return doc?.tracked_clicks ?? 0;
  }

  /** Resources counted live from their own collections, so the figure cannot drift from what exists. */
  countOwned(collection: 'links' | 'domains', workspaceId: string): Promise<number> {
    return this.db.collection(collection).countDocuments({ workspace_id: workspaceId });
  }
}
