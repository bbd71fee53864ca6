import { BSON, type Db, type Document, type Filter, type Long } from 'mongodb';

/** A find whose answer is bounded by its limit: the page of a list, the labels a page refers to. */
export interface BoundedFind<T extends Document> {
  collection: string;
  filter: Filter<T>;
  sort?: Document;
  limit: number;
}

/**
 * The documents of a bounded find, each as its stored BSON bytes. Sent as the `find` command itself, its batch left
 * as bytes (`fieldsAsRaw`), instead of through a driver cursor: the cursor (its object, the implicit session it
 * holds and ends, the batch read back one document at a time) cost the api more per page of links than rendering
 * it. The answer is one batch, its size the limit, unless its bytes exceed a reply's 16 MiB (never for a page of
 * links within their bounds): then the server keeps a cursor for the rest that only the session that opened it may
 * read (an implicit one, already gone), so the find is run again through a driver cursor and the first one closed.
 */
export async function findBytes<T extends Document>(db: Db, find: BoundedFind<T>): Promise<Uint8Array[]> {
  const readConcern = db.readConcern?.level ? { readConcern: { level: db.readConcern.level } } : {};
  const reply = await db.command(
    { find: find.collection, filter: find.filter, ...(find.sort ? { sort: find.sort } : {}), limit: find.limit, batchSize: find.limit, ...readConcern },
    { readPreference: db.readPreference, fieldsAsRaw: { firstBatch: true } },
  );
  const { id, firstBatch } = reply.cursor as { id: number | Long; firstBatch: Uint8Array[] };
  if (typeof id === 'number' ? id === 0 : id.isZero()) return firstBatch;
  db.command({ killCursors: find.collection, cursors: [id] }).catch(() => {
    // The server closes an idle cursor itself after 10 minutes.
  });
  const cursor = db.collection<T>(find.collection).find(find.filter, { raw: true }).limit(find.limit);
  return (await (find.sort ? cursor.sort(find.sort) : cursor).toArray()) as unknown as Uint8Array[];
}

/** The same, decoded as a driver cursor decodes by default. */
export async function findDocs<T extends Document>(db: Db, find: BoundedFind<T>): Promise<T[]> {
  return (await findBytes(db, find)).map((bytes) => BSON.deserialize(bytes) as T);
}
