// A job's rounds every intervalMs: only by the holder of its lease when one is given (one replica at a time), a round
// still running when the next is due is joined rather than doubled, and a failed round is logged and left to the next.
import type { Lease } from './lease.ts';
import type { Logger } from './logger.ts';

export interface PeriodicOptions {
  intervalMs: number;
  lease?: Lease;
  logger: Logger;
  /** Logged when a round fails, e.g. 'rotator health round failed'. */
  failure: string;
  round: (now: Date) => Promise<void>;
  /** Runs a round when started, rather than an interval later. */
  atStart?: boolean;
}

export class Periodic {
  private readonly o: PeriodicOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(options: PeriodicOptions) {
    this.o = options;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.o.intervalMs);
    this.timer.unref();
    if (this.o.atStart) void this.tick();
  }

  /** Stops the rounds, waits for the one running, and gives the lease up. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    await this.o.lease?.release().catch(() => undefined);
  }

  /** One round now (a round in progress is joined rather than doubled); its failure is thrown. */
  runOnce(now = new Date()): Promise<void> {
    this.running ??= this.o.round(now).finally(() => (this.running = null));
    return this.running;
  }

  private async tick(): Promise<void> {
    try {
      if (this.o.lease && !(await this.o.lease.acquire())) return;
      await this.runOnce();
    } catch (error) {
      this.o.logger.warn({ err: error }, this.o.failure);
    }
  }
}
