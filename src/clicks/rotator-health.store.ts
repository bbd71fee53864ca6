import type { Collection, Db } from 'mongodb';

/** The health of one rotator destination, as the worker's checker last saw it. */
export interface RotatorHealthDoc {
  /** `<link id>|<destination id>` */
  _id: string;
  link_id: string;
  destination_id: string;
  url: string;
  /** Consecutive failed probes; a success resets it. */
  failures: number;
  /** Absent until the first verdict: a destination never probed counts as healthy. */
  healthy?: boolean;
  checked_at: Date;
  /** When `healthy` last changed. */
  changed_at?: Date;
}

/** Consecutive failures after which a destination is skipped by the rotator. */
export const UNHEALTHY_AFTER_FAILURES = 3;

export class RotatorHealthStore {
  readonly collection: Collection<RotatorHealthDoc>;

  constructor(db: Db) {
    this.collection = db.collection<RotatorHealthDoc>('rotator_health');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { link_id: 1, healthy: 1 }, name: 'link_health' }]);
  }

  /**
   * Records one probe. A failure only turns the destination unhealthy at the third in a row; a success makes it
   * healthy at once. Returns the verdict after this probe.
   */
  async record(linkId: string, destinationId: string, url: string, ok: boolean, now: Date): Promise<boolean> {
    const _id = `${linkId}|${destinationId}`;
    const base = { link_id: linkId, destination_id: destinationId, url, checked_at: now };
    if (ok) {
      const before = await this.collection.findOneAndUpdate({ _id }, { $set: { ...base, failures: 0, healthy: true } }, { upsert: true, returnDocument: 'before' });
      if (before?.healthy === false) await this.collection.updateOne({ _id }, { $set: { changed_at: now } });
      return true;
    }
    // A probe result for another URL (the destination was edited) starts the count afresh.
    const previous = await this.collection.findOne({ _id });
    const failures = previous && previous.url === url ? previous.failures + 1 : 1;
    const healthy = failures < UNHEALTHY_AFTER_FAILURES;
    const changed = (previous?.healthy ?? true) !== healthy;
    await this.collection.updateOne({ _id }, { $set: { ...base, failures, healthy, ...(changed ? { changed_at: now } : {}) } }, { upsert: true });
    return healthy;
  }

  /** The destination ids currently marked unhealthy, per link. */
  async unhealthy(linkIds: readonly string[]): Promise<Map<string, Set<string>>> {
    const result = new Map<string, Set<string>>();
    if (linkIds.length === 0) return result;
    const docs = await this.collection.find({ link_id: { $in: [...linkIds] }, healthy: false }, { projection: { link_id: 1, destination_id: 1 } }).toArray();
    for (const doc of docs) {
      let set = result.get(doc.link_id);
      if (!set) result.set(doc.link_id, (set = new Set()));
      set.add(doc.destination_id);
    }
    return result;
  }
}
