import type { Collection, Document, Filter } from 'mongodb';

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
  return pageCursor(collection, filters, after, limit, {}).toArray() as Promise<T[]>;
}

/**
 * The same page as `newestFirst`, each row as its stored BSON bytes (the driver's `raw` read): for a caller that
 * renders rows itself and would otherwise pay for every field's decoding.
 */
export function newestFirstBytes<T extends Document & { _id: string; created_at: Date }>(
  collection: Collection<T>,
  filters: Filter<T>[],
  after: { created_at: Date; id: string } | null,
  limit: number,
): Promise<Uint8Array[]> {
  return pageCursor(collection, filters, after, limit, { raw: true }).toArray() as unknown as Promise<Uint8Array[]>;
}

function pageCursor<T extends Document & { _id: string; created_at: Date }>(
  collection: Collection<T>,
  filters: Filter<T>[],
  after: { created_at: Date; id: string } | null,
  limit: number,
  options: { raw?: boolean },
) {
  const and = [...filters];
  if (after) {
    const { created_at, id } = after;
    and.push({ $or: [{ created_at: { $lt: created_at } }, { created_at, _id: { $lt: id } }] } as Filter<T>);
  }
  const filter = (and.length === 1 ? and[0] : { $and: and }) as Filter<T>;
  return collection.find(filter, options).sort({ created_at: -1, _id: -1 }).limit(limit);
}
