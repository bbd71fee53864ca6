import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../platform/errors.ts';

export interface StoredResponse {
  status: number;
  body: string | null;
  headers: Record<string, string>;
}

interface IdempotencyDoc {
  _id: string;
  fingerprint: string;
  state: 'in_progress' | 'done';
  /** An in-progress claim older than this belongs to a process that died; a retry may take it over. */
  locked_until: Date;
  response: StoredResponse | null;
  created_at: Date;
  expires_at: Date;
}

export type Claim =
  | { outcome: 'claimed' }
  | { outcome: 'replay'; response: StoredResponse }
  | { outcome: 'mismatch' }
  | { outcome: 'in_progress' };

const LOCK_MS = 60_000;

export class IdempotencyStore {
  private readonly collection: Collection<IdempotencyDoc>;
  readonly ttlMs: number;

  constructor(db: Db, ttlHours: number) {
    this.collection = db.collection<IdempotencyDoc>('idempotency_keys');
    this.ttlMs = ttlHours * 3_600_000;
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { expires_at: 1 }, name: 'expires_ttl', expireAfterSeconds: 0 }]);
  }

  /** The unique `_id` is the lock: of two concurrent first attempts exactly one insert succeeds. */
  async claim(id: string, fingerprint: string, now: Date): Promise<Claim> {
    try {
      await this.collection.insertOne({
        _id: id,
        fingerprint,
        state: 'in_progress',
        locked_until: new Date(now.getTime() + LOCK_MS),
        response: null,
        created_at: now,
        expires_at: new Date(now.getTime() + this.ttlMs),
      });
      return { outcome: 'claimed' };
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
    const existing = await this.collection.findOne({ _id: id });
    if (!existing) return this.claim(id, fingerprint, now);
    if (existing.fingerprint !== fingerprint) return { outcome: 'mismatch' };
    if (existing.state === 'done' && existing.response) return { outcome: 'replay', response: existing.response };
    if (existing.locked_until.getTime() < now.getTime()) {
      const taken = await this.collection.updateOne(
        { _id: id, state: 'in_progress', locked_until: existing.locked_until },
        { $set: { locked_until: new Date(now.getTime() + LOCK_MS) } },
      );
      if (taken.modifiedCount === 1) return { outcome: 'claimed' };
    }
    return { outcome: 'in_progress' };
  }

  async complete(id: string, response: StoredResponse): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $set: { state: 'done', response } });
  }

  /** Forgets a claim whose request failed on our side, so the client's retry executes again. */
  async release(id: string): Promise<void> {
    await this.collection.deleteOne({ _id: id, state: 'in_progress' });
  }
}
