// The raw clicks of the partial UTC days at the edges of a range, for the answers that need one link's (or a few
// links') figures per dimension value: link-level rollups exist per UTC day only (see rollup.store.ts), so a range
// in New York or Kolkata, or one given to the quarter-hour, takes its whole UTC days from them and the rest (less than
// a day at each end) from the raw clicks. Raw clicks are kept for the plan's raw click retention: an edge older than
// that has no clicks left to count.
import type { Collection, Filter } from 'mongodb';
import type { ClickDoc } from '../clicks/click.store.ts';

export interface EdgeQuery {
  workspaces: readonly string[];
  /** The links read, or every link of the workspaces. */
  links: readonly string[] | 'all-links';
  from: number;
  to: number;
}

/** What a raw click adds to the figures: the fields a dimension value is taken from, its counting state and its conversions. */
export type EdgeClickDoc = Omit<ClickDoc, 'counted' | 'expire_at'>;

export class EdgeClickStore {
  private readonly clicks: Collection<ClickDoc>;

  constructor(clicks: Collection<ClickDoc>) {
    this.clicks = clicks;
  }

  async *read(query: EdgeQuery): AsyncGenerator<EdgeClickDoc> {
    if (query.to <= query.from || query.workspaces.length === 0) return;
    if (query.links !== 'all-links' && query.links.length === 0) return;
    const filter: Filter<ClickDoc> = {
      workspace_id: query.workspaces.length === 1 ? query.workspaces[0]! : { $in: [...query.workspaces] },
      ts: { $gte: new Date(query.from), $lt: new Date(query.to) },
    };
    if (query.links !== 'all-links') filter.link_id = { $in: [...query.links] };
    const cursor = this.clicks.find(filter, { projection: { counted: 0, expire_at: 0 }, batchSize: 2000 });
    try {
      for await (const doc of cursor) yield doc;
    } finally {
      await cursor.close();
    }
  }
}
