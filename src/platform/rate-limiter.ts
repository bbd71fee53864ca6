import type { Collection, Db } from 'mongodb';
import type { Logger } from './logger.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds: when the oldest request counted leaves the window (when denied: when one request fits again). */
  resetAt: number;
  /** Seconds until a request fits again; 0 when allowed. */
  retryAfter: number;
}

interface RateDoc {
  _id: string;
  /** Requests per one-second bucket, keyed `s<unix second>` (a numeric key would read as an array index). */
  b: Record<string, number>;
  expires_at: Date;
}

interface Waiter {
  limit: number;
  resolve: (d: RateDecision) => void;
}

/** What this process knows of one key's window. */
interface KeyState {
  limit: number;
  /** Requests counted in the window at the last answer from the database (every replica's, our reservation too). */
  known: number;
  /** Unix seconds the oldest counted bucket leaves the window, as of that answer. */
  resetAt: number;
  syncedAt: number;
  /** Tokens this process reserved at its last update and has not used yet. */
  reservedLeft: number;
  /** Size of that reservation, and the bucket it was counted in (unused tokens are given back there). */
  reserved: number;
  reservedField: string;
  /** Local admissions since the last update: sizes the next reservation. */
  usedSinceFlush: number;
  queued: Waiter[];
  inFlight: boolean;
  timer: NodeJS.Timeout | null;
  /** Buckets seen to have left the window, removed by the key's next update. */
  stale: string[];
}

const WINDOW_SECONDS = 60;
/** A reservation is used for at most this long, then given back. */
const FRESH_MS = 1000;
/**
 * Reservations are taken only while the key is below half its limit, each at most a tenth of the remaining half:
 * tokens are counted in the shared window before they are used, so the limit holds for any number of replicas,
 * and near it every request waits for the database's atomic count (exact). A key whose share would be under
 * MIN_RESERVATION (limits under about 160 a minute) never reserves. The price: tokens reserved just before a burst
 * drives the key to its limit can hold back up to one share per replica, for at most FRESH_MS.
 */
const REPLICA_SHARE = 10;
const MIN_RESERVATION = 8;
const MAX_TRACKED_KEYS = 50_000;

/**
 * A sliding one-minute window per key, at one-second resolution, shared by every replica through one MongoDB
 * document per key. Every request (admitted or not) is counted by an atomic `$inc` whose answer is the whole window.
 * Far from the limit, a process reserves a few tokens in that same `$inc` and admits the next requests from them at
 * once (the hot path does not wait for the database); unused tokens are given back within a second. Near the limit,
 * requests wait for the `$inc` that decides them; those arriving while one is in flight are folded into the next.
 */
export class RateLimiter {
  private readonly collection: Collection<RateDoc>;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly keys = new Map<string, KeyState>();

  constructor(db: Db, logger: Logger, now: () => number = Date.now) {
    this.collection = db.collection<RateDoc>('rate_limits');
    this.logger = logger;
    this.now = now;
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { expires_at: 1 }, name: 'expires_ttl', expireAfterSeconds: 0 }]);
  }

  /** A decision now when a reserved token is at hand, else a promise of the database's decision. */
  check(keyId: string, limit: number): RateDecision | Promise<RateDecision> {
    const state = this.stateOf(keyId);
    state.limit = limit;
    if (state.reservedLeft > 0 && this.now() - state.syncedAt < FRESH_MS) {
      state.reservedLeft -= 1;
      state.usedSinceFlush += 1;
      // Refill in the background before the reservation runs out, so a steady stream never waits.
      if (state.reservedLeft <= state.reserved / 2 && !state.inFlight) void this.flush(keyId);
      return {
        allowed: true,
        limit,
        remaining: Math.max(0, limit - (state.known - state.reservedLeft)),
        resetAt: state.resetAt,
        retryAfter: 0,
      };
    }
    return new Promise((resolve) => {
      state.queued.push({ limit, resolve });
      if (!state.inFlight) void this.flush(keyId);
    });
  }

  /** At shutdown: gives back unused reservations, so a rolling restart leaves no phantom requests behind. */
  async close(): Promise<void> {
    for (const s of this.keys.values()) if (s.timer) clearTimeout(s.timer);
    await Promise.all([...this.keys].filter(([, s]) => s.reservedLeft > 0 && !s.inFlight).map(([key]) => this.flush(key, true)));
  }

  private stateOf(keyId: string): KeyState {
    let state = this.keys.get(keyId);
    if (state) return state;
    if (this.keys.size >= MAX_TRACKED_KEYS) this.forgetIdle();
    state = {
      limit: 0,
      known: 0,
      resetAt: 0,
      syncedAt: 0,
      reservedLeft: 0,
      reserved: 0,
      reservedField: '',
      usedSinceFlush: 0,
      queued: [],
      inFlight: false,
      timer: null,
      stale: [],
    };
    this.keys.set(keyId, state);
    return state;
  }

  private async flush(keyId: string, closing = false): Promise<void> {
    const state = this.keys.get(keyId);
    if (!state || state.inFlight) return;
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    const waiters = state.queued;
    const unused = state.reservedLeft;
    const active = waiters.length > 0 || state.usedSinceFlush > 0;
    if (!active && unused === 0) return;
    const nowMs = this.now();
    const nowSec = Math.floor(nowMs / 1000);
    const field = `s${nowSec}`;
    const share = state.syncedAt === 0 || closing ? 0 : Math.floor((state.limit / 2 - (state.known - unused)) / REPLICA_SHARE);
    // Enough tokens for about one FRESH_MS at the rate seen since the last update, within the share.
    const used = state.usedSinceFlush + waiters.length;
    const wanted = Math.max(MIN_RESERVATION, Math.ceil((used * FRESH_MS) / Math.max(1, nowMs - state.syncedAt)));
    // A share too small to be worth it is not taken: small limits stay exact to the request.
    const reserve = active && share >= MIN_RESERVATION ? Math.min(share, wanted) : 0;
    state.queued = [];
    state.reservedLeft = 0;
    state.usedSinceFlush = 0;
    state.inFlight = true;
    try {
      const inc: Record<string, number> = { [`b.${field}`]: waiters.length + reserve };
      if (unused > 0 && state.reservedField !== '') {
        const back = `b.${state.reservedField}`;
        inc[back] = (inc[back] ?? 0) - unused;
      }
      const unset: Record<string, ''> = {};
      for (const stale of state.stale) if (!(`b.${stale}` in inc)) unset[`b.${stale}`] = '';
      const doc = await this.collection.findOneAndUpdate(
        { _id: keyId },
        {
          $inc: inc,
          $set: { expires_at: new Date(nowMs + 2 * WINDOW_SECONDS * 1000) },
          ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}),
        },
        { upsert: true, returnDocument: 'after' },
      );
      const buckets = inWindow(doc?.b ?? {}, nowSec, state);
      const total = buckets.reduce((sum, [, n]) => sum + n, 0);
      state.known = total;
      state.resetAt = (buckets[0]?.[0] ?? nowSec) + WINDOW_SECONDS;
      state.syncedAt = nowMs;
      state.reserved = reserve;
      state.reservedLeft = reserve;
      state.reservedField = field;
      // Our fresh reservation is not a request: waiters are decided against everything else.
      decide(buckets, total - reserve, waiters, nowSec);
    } catch (error) {
      // Availability over strictness: a database hiccup must not turn every request into a 429 or a 500.
      this.logger.error({ err: error, key_id: keyId }, 'rate limit check failed; admitting');
      for (const w of waiters) {
        w.resolve({ allowed: true, limit: w.limit, remaining: w.limit, resetAt: nowSec + WINDOW_SECONDS, retryAfter: 0 });
      }
    } finally {
      state.inFlight = false;
      if (state.queued.length > 0) void this.flush(keyId);
      else if (state.reservedLeft > 0 && !closing) state.timer = setTimeout(() => void this.flush(keyId), FRESH_MS);
    }
  }

  private forgetIdle(): void {
    const cutoff = this.now() - 2 * WINDOW_SECONDS * 1000;
    for (const [key, s] of this.keys) {
      if (s.syncedAt < cutoff && !s.inFlight && s.queued.length === 0 && s.reservedLeft === 0) this.keys.delete(key);
    }
  }
}

/** The buckets inside the window, oldest first; remembers the ones that left it for removal. */
function inWindow(raw: Record<string, number>, nowSec: number, state: KeyState): Array<[number, number]> {
  const inside: Array<[number, number]> = [];
  state.stale = [];
  for (const [field, count] of Object.entries(raw)) {
    const sec = Number(field.slice(1));
    if (sec > nowSec - WINDOW_SECONDS) inside.push([sec, count]);
    else state.stale.push(field);
  }
  return inside.sort((a, b) => a[0] - b[0]);
}

function decide(buckets: Array<[number, number]>, total: number, waiters: Waiter[], nowSec: number): void {
  // `total` leaves out our own new reservation, which sits in the newest bucket.
  const before = total - waiters.length;
  const oldest = buckets[0]?.[0] ?? nowSec;
  waiters.forEach((w, i) => {
    const count = before + i + 1;
    if (count <= w.limit) {
      w.resolve({ allowed: true, limit: w.limit, remaining: w.limit - count, resetAt: oldest + WINDOW_SECONDS, retryAfter: 0 });
      return;
    }
    const retryAfter = secondsUntilRoom(buckets, total, w.limit, nowSec);
    w.resolve({ allowed: false, limit: w.limit, remaining: 0, resetAt: nowSec + retryAfter, retryAfter });
  });
}

/** Walks the buckets oldest first: room returns once enough of them have left the window. */
function secondsUntilRoom(buckets: Array<[number, number]>, total: number, limit: number, nowSec: number): number {
  let running = total;
  for (const [sec, n] of buckets) {
    running -= n;
    if (running < limit) return Math.max(1, sec + WINDOW_SECONDS - nowSec);
  }
  return WINDOW_SECONDS;
}
