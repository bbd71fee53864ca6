// TTL monitor: a document expires once the earliest Date in its TTL-indexed field plus
// expireAfterSeconds is in the past. Non-Date values never expire, as in MongoDB.
import type { Catalog } from './catalog.ts';
import { pathValues } from './paths.ts';

export function sweepExpired(catalog: Catalog, now = Date.now()): number {
  let removed = 0;
  for (const coll of catalog.all()) {
    for (const index of coll.indexes) {
      const ttl = index.ttlSeconds;
      if (ttl === undefined || index.fields.length !== 1) continue;
      const field = index.fields[0]!;
      for (const entry of [...coll.docs.values()]) {
        let earliest = Infinity;
        for (const v of pathValues(entry.view, field)) if (v instanceof Date) earliest = Math.min(earliest, v.getTime());
        if (earliest + ttl * 1000 < now) {
          coll.remove(entry);
          removed++;
        }
      }
    }
  }
  return removed;
}
