import type { Collection, Db, Document, Filter } from 'mongodb';
import { findBytes } from './find-batch.ts';

const NEWEST_FIRST = { created_at: -1, _id: -1 } as const;

/**
 * One page of a newest-first list ordered by (created_at, _id), after a position. Rows inserted while a client
 * pages are newer than its position, so they never shift what it has still to read.
 */
export function newestFirst<T extends Document & { _id: string; created_at: Date }>(
  collection: Collection<T>,
  filters: Filter<T>[],
  after: { created_at: Date; id: string } | null,
  limit: number,
): Promise<T[]> {
  return collection.find(pageFilter(filters, after)).sort(NEWEST_FIRST).limit(limit).toArray() as Promise<T[]>;
}

/**
 * The same page as `newestFirst`, each row as its stored BSON bytes (see `findBytes`): for a caller that renders
 * rows itself and would otherwise pay for every field's decoding.
 */
export function newestFirstBytes<T extends Document & { _id: string; created_at: Date }>(
  db: Db,
  collection: string,
  filters: Filter<T>[],
  after: { created_at: Date; id: string } | null,
  limit: number,
): Promise<Uint8Array[]> {
  return findBytes<T>(db, { collection, filter: pageFilter(filters, after), sort: NEWEST_FIRST, limit });
}

function pageFilter<T extends Document>(filters: Filter<T>[], after: { created_at: Date; id: string } | null): Filter<T> {
  const and = [...filters];
  if (after) {
    const { created_at, id } = after;
    and.push({ $or: [{ created_at: { $lt: created_at } }, { created_at, _id: { $lt: id } }] } as Filter<T>);
  }
  return (and.length === 1 ? and[0] : { $and: and }) as Filter<T>;
}
