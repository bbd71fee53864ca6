// Multi-document transactions as private copy-on-write overlays. Reads inside a transaction see
// the overlay over the committed collection; nothing is visible to others until commit, which
// applies every overlay in one synchronous step (so atomically) or not at all. Two transactions
// writing the same document conflict eagerly (WriteConflict, TransientTransactionError) and a
// commit fails the same way if a non-transactional write got to one of its documents first.
import type { Catalog } from './catalog.ts';
import { currentSequence, idDuplicateError, makeEntry, rawEntry, type Collection, type DocSet, type Entry } from './collection.ts';
import { transient } from './errors.ts';
import type { Index, IndexSpec } from './indexes.ts';
import type { Doc } from './values.ts';

type Locks = Map<string, Transaction>;

/** The keys of an uncommitted entry in a unique index, computed once per entry and index. */
const entryKeys = new WeakMap<Entry, Map<Index, Set<string>>>();
function keySetOf(index: Index, entry: Entry): Set<string> {
  let byIndex = entryKeys.get(entry);
  if (!byIndex) entryKeys.set(entry, (byIndex = new Map<Index, Set<string>>()));
  let keys = byIndex.get(index);
  if (!keys) byIndex.set(index, (keys = index.keySet(entry.view)));
  return keys;
}

class TxnView implements DocSet {
  readonly db: string;
  readonly name: string;
  readonly overlay = new Map<string, Entry | null>();
  /** Committed version of each touched document when first touched (0 = absent). */
  readonly seen = new Map<string, number>();
  private readonly txn: Transaction;

  constructor(txn: Transaction, db: string, name: string) {
    this.txn = txn;
    this.db = db;
    this.name = name;
  }

  get ns(): string {
    return `${this.db}.${this.name}`;
  }

  base(): Collection | undefined {
    return this.txn.catalog.get(this.db, this.name);
  }

  get(id: string): Entry | undefined {
    if (this.overlay.has(id)) return this.overlay.get(id) ?? undefined;
    return this.base()?.get(id);
  }

  *candidates(filter: Doc | undefined): Iterable<Entry> {
    const base = this.base();
    if (base) for (const e of base.candidates(filter)) if (!this.overlay.has(e.id)) yield e;
    for (const e of this.overlay.values()) if (e) yield e;
  }

  private touch(id: string): void {
    const lockKey = `${this.ns}\u0000${id}`;
    const holder = this.txn.locks.get(lockKey);
    if (holder && holder !== this.txn && holder.state === 'active' && holder.expired()) holder.abort();
    if (holder && holder !== this.txn && holder.state === 'active') {
      throw transient('WriteConflict', 'Write conflict during plan execution and yielding is disabled. :: Please retry your operation or multi-document transaction.');
    }
    if (this.seen.has(id)) return;
    const committed = this.base()?.get(id);
    if (committed && committed.version > this.txn.startSequence) {
      throw transient('WriteConflict', 'Write conflict: the document changed after the transaction started.');
    }
    this.seen.set(id, committed?.version ?? 0);
    this.txn.locks.set(lockKey, this.txn);
  }

  private checkUnique(entry: Entry): void {
    const base = this.base();
    if (!base) return;
    // The transaction's other writes are listed only when a unique index asks: collecting them for every write made
    // a transaction of n writes (a rollup batch touches hundreds of documents) cost n² even without unique indexes.
    // Each entry's keys are worked out once (entries are immutable; keySetOf keeps them with the entry): working
    // them out again for every later write made a transaction of n inserts cost n² key extractions.
    let others: Entry[] | undefined;
    base.checkUnique(
      entry,
      (owner) => !this.overlay.has(owner),
      (index, key) => {
        others ??= [...this.overlay.values()].filter((e): e is Entry => e !== null && e.id !== entry.id);
        return others.some((e) => keySetOf(index, e).has(key));
      },
    );
  }

  insert(doc: Doc): Entry {
    const entry = makeEntry(doc);
    if (this.get(entry.id)) throw idDuplicateError(this.ns, entry);
    this.checkUnique(entry);
    this.touch(entry.id);
    this.overlay.set(entry.id, entry);
    return entry;
  }

  replace(old: Entry, doc: Doc): Entry {
    const entry = makeEntry(doc);
    this.checkUnique(entry);
    this.touch(old.id);
    this.overlay.set(entry.id, entry);
    return entry;
  }

  replaceRaw(old: Entry, raw: Uint8Array, fields: ReadonlySet<string>): Entry {
    const entry = rawEntry(old, raw, fields, this.base()?.indexes ?? []);
    if (entry.sameKeysAs === undefined) this.checkUnique(entry);
    this.touch(old.id);
    this.overlay.set(entry.id, entry);
    return entry;
  }

  /**
   * Reads are read-committed rather than snapshot reads, so a matched document that another
   * writer committed after this transaction started must conflict even if the update is a no-op.
   */
  claim(entry: Entry): void {
    this.touch(entry.id);
  }

  remove(old: Entry): void {
    this.touch(old.id);
    this.overlay.set(old.id, null);
  }
}

export class Transaction {
  readonly catalog: Catalog;
  readonly locks: Locks;
  readonly txnNumber: string;
  readonly startSequence = currentSequence();
  readonly startedAt = Date.now();
  state: 'active' | 'committed' | 'aborted' = 'active';
  private readonly views = new Map<string, TxnView>();
  /** Collections the transaction created (`create`, `createIndexes`), with their indexes: made at commit. */
  private readonly created = new Map<string, { db: string; name: string; indexes: IndexSpec[] }>();
  private readonly limits: { readonly transactionLifetimeMs: number };

  constructor(catalog: Catalog, locks: Locks, txnNumber: string, limits: { readonly transactionLifetimeMs: number } = { transactionLifetimeMs: 60_000 }) {
    this.catalog = catalog;
    this.locks = locks;
    this.txnNumber = txnNumber;
    this.limits = limits;
  }

  private waiters: Array<() => void> = [];

  /** Calls `done` once the transaction has committed or aborted (at once if it has). */
  whenEnded(done: () => void): void {
    if (this.state === 'active') this.waiters.push(done);
    else done();
  }

  /** When it expires (see expired). */
  expiresAt(): number {
    return this.startedAt + this.limits.transactionLifetimeMs;
  }

  private ended(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const done of waiters) done();
  }

  /** Older than transactionLifetimeLimitSeconds: MongoDB aborts it (its client may be gone). */
  expired(now = Date.now()): boolean {
    return now - this.startedAt > this.limits.transactionLifetimeMs;
  }

  view(db: string, name: string): DocSet {
    const ns = `${db}.${name}`;
    let v = this.views.get(ns);
    if (!v) {
      v = new TxnView(this, db, name);
      this.views.set(ns, v);
    }
    return v;
  }

  /** Records a collection to create at commit; false when the transaction had already created it (or written to it). */
  createCollection(db: string, name: string): boolean {
    const ns = `${db}.${name}`;
    const had = this.created.has(ns) || (this.views.get(ns)?.overlay.size ?? 0) > 0;
    if (!this.created.has(ns)) this.created.set(ns, { db, name, indexes: [] });
    this.view(db, name);
    return !had;
  }

  addIndexes(db: string, name: string, specs: IndexSpec[]): void {
    this.created.get(`${db}.${name}`)?.indexes.push(...specs);
  }

  private release(): void {
    for (const [key, holder] of this.locks) if (holder === this) this.locks.delete(key);
  }

  abort(): void {
    if (this.state !== 'active') return;
    this.state = 'aborted';
    this.views.clear();
    this.created.clear();
    this.release();
    this.ended();
  }

  commit(): void {
    if (this.state !== 'active') throw transient('NoSuchTransaction', `Transaction ${this.txnNumber} has been aborted.`);
    const views = [...this.views.values()].filter((v) => v.overlay.size > 0);
    for (const v of views) {
      for (const [id, version] of v.seen) {
        if ((v.base()?.get(id)?.version ?? 0) !== version) {
          this.abort();
          throw transient('WriteConflict', 'Write conflict at commit: a document was modified outside the transaction.');
        }
      }
    }
    for (const { db, name, indexes } of this.created.values()) {
      const coll = this.catalog.getOrCreate(db, name);
      for (const spec of indexes) coll.createIndex(spec);
    }
    this.created.clear();
    const removed: [Collection, Entry][] = [];
    const added: [Collection, Entry][] = [];
    // Versions with the committed version's index keys (raw updates) take its place without touching the indexes.
    const swapped: [Collection, Entry, Entry][] = [];
    const placed = new Set<Entry>();
    try {
      const targets = views.map((v) => [v, this.catalog.getOrCreate(v.db, v.name)] as const);
      for (const [v, coll] of targets) {
        for (const [id, e] of v.overlay) {
          const old = coll.get(id);
          if (!old) continue;
          if (e && e.sameKeysAs === old) {
            const stamped = e.restamp();
            coll.swap(old, stamped);
            swapped.push([coll, old, stamped]);
            placed.add(e);
            continue;
          }
          coll.detach(old);
          removed.push([coll, old]);
        }
      }
      for (const [v, coll] of targets) {
        for (const e of v.overlay.values()) {
          if (!e || placed.has(e)) continue;
          if (coll.get(e.id)) throw coll.idDuplicate(e);
          coll.checkUnique(e);
          const stamped = e.restamp();
          coll.attach(stamped);
          added.push([coll, stamped]);
        }
      }
    } catch (err) {
      for (const [coll, e] of added.reverse()) coll.detach(e);
      for (const [coll, e] of removed) coll.attach(e);
      for (const [coll, old, stamped] of swapped) coll.swap(stamped, old);
      this.abort();
      // Another writer committed a conflicting document meanwhile; a retry will see it.
      throw transient('WriteConflict', `Write conflict at commit: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.state = 'committed';
    this.views.clear();
    this.release();
    this.ended();
  }
}
