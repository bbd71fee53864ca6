// Snapshot reads (readConcern `snapshot` outside transactions: find, aggregate, distinct), as a snapshot session
// of the driver sends them: the first read of the session takes the snapshot and answers its time (`atClusterTime`),
// later reads name that time, and all of them see the documents as they were then.
//
// Stored versions never change (collection.ts) and carry their place in the write sequence. While a snapshot is in
// use, each collection keeps the versions it replaced or removed, with the sequence at which that happened; a read at
// snapshot S sees the current versions written at or before S and the kept versions written at or before S and
// superseded after it. Nothing is kept while no snapshot is in use; a snapshot unused for SNAPSHOT_WINDOW_MS is
// forgotten, and a read naming it is refused with MongoDB's SnapshotTooOld.
import { Long, Timestamp } from 'bson';
import type { DocSet, Entry, OrderedEntries } from './collection.ts';
import { CommandError } from './errors.ts';
import type { Doc } from './values.ts';

/**
 * How long an unused snapshot stays readable. MongoDB keeps 300 s of history (minSnapshotHistoryWindowInSeconds);
 * devdb keeps the versions in memory, so it keeps a minute: a read naming an older snapshot is refused (239).
 */
const SNAPSHOT_WINDOW_MS = 60_000;

/** A version no longer current: visible to snapshots taken at or after its version and before `until`. */
export interface Superseded {
  entry: Entry;
  until: number;
}

class Snapshots {
  /** Snapshot sequence → when it was last used. */
  private readonly inUse = new Map<number, number>();

  /** Whether superseded versions must be kept (a snapshot is in use). */
  recording(): boolean {
    return this.inUse.size > 0;
  }

  take(sequence: number, now = Date.now()): number {
    this.expire(now);
    this.inUse.set(sequence, now);
    return sequence;
  }

  use(sequence: number, now = Date.now()): void {
    this.expire(now);
    if (!this.inUse.has(sequence)) {
      throw new CommandError('SnapshotTooOld', `Read timestamp ${sequence} is older than the oldest available timestamp.`);
    }
    this.inUse.set(sequence, now);
  }

  /** The oldest snapshot in use (kept versions superseded at or before it are seen by none). */
  oldest(): number | undefined {
    let min: number | undefined;
    for (const s of this.inUse.keys()) if (min === undefined || s < min) min = s;
    return min;
  }

  private expire(now: number): void {
    for (const [s, used] of this.inUse) if (now - used > SNAPSHOT_WINDOW_MS) this.inUse.delete(s);
  }
}

export const snapshots = new Snapshots();

/** Drops the kept versions no snapshot in use can see. */
export function trimHistory(history: Superseded[]): Superseded[] {
  const oldest = snapshots.oldest();
  if (oldest === undefined) return [];
  return history.filter((h) => h.until > oldest);
}

export function clusterTime(sequence: number): Timestamp {
  return new Timestamp(Long.fromNumber(sequence));
}

export function sequenceOf(ts: unknown): number | undefined {
  return ts instanceof Timestamp ? ts.toNumber() : undefined;
}

/** What a collection offers a snapshot read: its current versions and the ones it keeps. */
export interface Versioned extends DocSet {
  history(): readonly Superseded[];
}

/** A collection as it was at `at` (read-only). */
export class SnapshotView implements DocSet {
  private readonly base: Versioned;
  private readonly at: number;

  constructor(base: Versioned, at: number) {
    this.base = base;
    this.at = at;
  }

  get ns(): string {
    return this.base.ns;
  }

  get(id: string): Entry | undefined {
    const current = this.base.get(id);
    if (current && current.version <= this.at) return current;
    for (const h of this.base.history()) if (h.entry.id === id && h.entry.version <= this.at && h.until > this.at) return h.entry;
    return undefined;
  }

  *candidates(filter: Doc | undefined): Iterable<Entry> {
    // Current versions are found through the indexes (their keys are current); kept versions are all offered, the
    // filter then decides.
    for (const e of this.base.candidates(filter)) if (e.version <= this.at) yield e;
    for (const h of this.base.history()) if (h.entry.version <= this.at && h.until > this.at) yield h.entry;
  }

  ordered(): OrderedEntries | undefined {
    return undefined;
  }

  private readOnly(): never {
    throw new CommandError('BadValue', 'a snapshot is read-only');
  }

  insert(): Entry {
    return this.readOnly();
  }

  replace(): Entry {
    return this.readOnly();
  }

  replaceRaw(): Entry {
    return this.readOnly();
  }

  remove(): void {
    this.readOnly();
  }

  claim(): void {
    this.readOnly();
  }
}
