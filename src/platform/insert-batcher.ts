// Single-document inserts made in the same event-loop turn, written as one unordered insertMany. Callers keep the
// insertOne contract: each promise settles with its own document's outcome (a duplicate key rejects only that
// caller, with code 11000); a failure of the whole command rejects them all.
import { MongoBulkWriteError, MongoServerError, type Collection, type Document, type OptionalUnlessRequiredId } from 'mongodb';

interface Pending<T> {
  doc: OptionalUnlessRequiredId<T>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class InsertBatcher<T extends Document> {
  private readonly collection: Collection<T>;
  private readonly maxBatch: number;
  private pending: Pending<T>[] = [];

  constructor(collection: Collection<T>, maxBatch = 500) {
    this.collection = collection;
    this.maxBatch = maxBatch;
  }

  insert(doc: OptionalUnlessRequiredId<T>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ doc, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
      else if (this.pending.length >= this.maxBatch) this.flush();
    });
  }

  private flush(): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.collection.insertMany(
      batch.map((p) => p.doc),
      { ordered: false },
    ).then(
      () => {
        for (const p of batch) p.resolve();
      },
      (error: unknown) => settleEach(batch, error),
    );
  }
}

/** Each caller gets its own write error, or success; anything but per-document write errors fails every caller. */
function settleEach<T>(batch: Pending<T>[], error: unknown): void {
  if (!(error instanceof MongoBulkWriteError) || error.writeConcernError) {
    for (const p of batch) p.reject(error);
    return;
  }
  const errors = new Map<number, MongoServerError>();
  for (const e of [error.writeErrors].flat()) errors.set(e.index, new MongoServerError({ message: e.errmsg ?? 'write error', code: e.code }));
  batch.forEach((p, i) => {
    const own = errors.get(i);
    if (own) p.reject(own);
    else p.resolve();
  });
}
