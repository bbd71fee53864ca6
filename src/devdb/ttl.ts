// TTL monitor: a document expires once the earliest Date in its TTL-indexed field plus
// expireAfterSeconds is in the past. Non-Date values never expire, as in MongoDB. The sweep walks the
// TTL index from its oldest Date and stops at the first one not yet expired, so its cost is the
// number of expired documents, not the size of the collection.
import type { Catalog } from './catalog.ts';
import { pathValues } from './paths.ts';

/** Below every Date. */
const EARLIEST = new Date(-8.64e15);

export function sweepExpired(catalog: Catalog, now = Date.now()): number {
  let removed = 0;
  for (const coll of catalog.all()) {
    for (const index of coll.indexes) {
      const ttl = index.ttlSeconds;
      if (ttl === undefined || index.fields.length !== 1) continue;
      const field = index.fields[0]!;
      const cutoff = now - ttl * 1000;
      const expired: string[] = [];
      // Dates sort together, after every other type but a few (Timestamp, RegExp, MaxKey) that never expire.
      for (const id of index.walk([], index.dirs[0]! < 0, { value: EARLIEST, inclusive: true })) {
        const entry = coll.get(id);
        if (!entry) continue;
        let earliest = Infinity;
        for (const v of pathValues(entry.view, field)) if (v instanceof Date) earliest = Math.min(earliest, v.getTime());
        // Keys come in ascending Date order, so a document is met first at its earliest Date: the first one not
        // yet expired (or past the Dates) ends the walk.
        if (earliest >= cutoff) break;
        expired.push(id);
      }
      for (const id of new Set(expired)) {
        const entry = coll.get(id);
        if (entry) {
          coll.remove(entry);
          removed++;
        }
      }
    }
  }
  return removed;
}
