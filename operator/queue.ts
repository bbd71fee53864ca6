// A work queue in the manner of client-go's: keys, not objects, so a burst of changes to one Domain becomes one
// reconcile of its latest state; one worker per key at a time; failures retried with a per-key exponential delay;
// delayed re-adds for work that is due later (the next DNS check).

export type Handler = (key: string) => Promise<void>;

export interface QueueOptions {
  /** First retry delay after a failure; doubles per consecutive failure of the key. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  concurrency?: number;
  /** Told about each handler failure (logging, metrics); the key is retried regardless. */
  onError?: (key: string, error: unknown) => void;
}

export class WorkQueue {
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly concurrency: number;
  private readonly onError: (key: string, error: unknown) => void;
  /** Keys waiting for a worker, in order; `queued` mirrors it for O(1) dedupe. */
  private readonly pending: string[] = [];
  private readonly queued = new Set<string>();
  /** Keys a worker holds now; a key added meanwhile is marked dirty and queued again when the worker ends. */
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private handler: Handler | null = null;
  private running = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(options: QueueOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 100;
    this.maxDelayMs = options.maxDelayMs ?? 300_000;
    this.concurrency = options.concurrency ?? 4;
    this.onError = options.onError ?? (() => undefined);
  }

  add(key: string): void {
    if (this.closed) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.pending.push(key);
    this.pump();
  }

  /** Adds the key after a delay; an earlier pending delayed add of the same key wins over a later one. */
  addAfter(key: string, delayMs: number): void {
    if (this.closed) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  /** Adds the key after its failure delay (base × 2^failures, capped) and counts the failure. */
  addRateLimited(key: string): void {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    this.addAfter(key, this.delayFor(failures));
  }

  /** The key succeeded: its next failure starts from the base delay again. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  delayFor(failures: number): number {
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.min(failures, 30));
  }

  get length(): number {
    return this.pending.length;
  }

  /** Starts workers on the queued keys (the leader calls this); keys keep being collected while stopped. */
  run(handler: Handler): void {
    this.handler = handler;
    this.pump();
  }

  /** Stops taking keys; resolves when the workers in flight have finished. Queued keys stay queued. */
  async pause(): Promise<void> {
    this.handler = null;
    if (this.running === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Drops everything, timers included, and takes no more keys (shutdown). */
  async shutDown(): Promise<void> {
    this.closed = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.pending.length = 0;
    this.queued.clear();
    this.dirty.clear();
    await this.pause();
  }

  private pump(): void {
    while (this.handler !== null && this.running < this.concurrency && this.pending.length > 0) {
      const key = this.pending.shift()!;
      this.queued.delete(key);
      this.active.add(key);
      this.running += 1;
      void this.work(this.handler, key);
    }
  }

  private async work(handler: Handler, key: string): Promise<void> {
    try {
      await handler(key);
      this.forget(key);
    } catch (error) {
      this.onError(key, error);
      this.addRateLimited(key);
    } finally {
      this.active.delete(key);
      this.running -= 1;
      if (this.dirty.delete(key)) this.add(key);
      if (this.running === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
      this.pump();
    }
  }
}
