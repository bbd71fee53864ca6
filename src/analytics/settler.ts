// The worker's rollup upkeep: once a bucket has ended (SETTLE_AFTER_MS), its parts are merged into one, so a query
// over past days reads one part per rollup; when the worker starts, rollups stored in the earlier layout are turned
// into parts first (legacy-rollups.ts). One replica settles at a time (lease); two at once would only waste work,
// since merges are transactions that give way to each other.
import type { Db } from 'mongodb';
import type { Lease } from '../platform/lease.ts';
import type { Logger } from '../platform/logger.ts';
import { Periodic } from '../platform/periodic.ts';
import { migrateLegacyRollups } from './legacy-rollups.ts';
import { SETTLE_AFTER_MS, type RollupStore } from './rollup.store.ts';

export interface RollupSettlerOptions {
  db: Db;
  store: RollupStore;
  lease?: Lease;
  logger: Logger;
  /** How often ended buckets are looked for (config.analytics.settleIntervalMs). */
  intervalMs: number;
}

export class RollupSettler {
  private readonly o: RollupSettlerOptions;
  private readonly rounds: Periodic;
  private migrated = false;

  constructor(options: RollupSettlerOptions) {
    this.o = options;
    this.rounds = new Periodic({
      intervalMs: options.intervalMs,
      lease: options.lease,
      logger: options.logger,
      failure: 'rollup settling failed; the next round retries',
      round: (now) => this.round(now.getTime()),
      atStart: true,
    });
  }

  start(): void {
    this.rounds.start();
  }

  stop(): Promise<void> {
    return this.rounds.stop();
  }

  /** One round: the legacy rollups (first round only), then every bucket ended SETTLE_AFTER_MS before `now`. */
  runOnce(now = new Date()): Promise<void> {
    return this.rounds.runOnce(now);
  }

  private async round(now: number): Promise<void> {
    if (!this.migrated) {
      const migrated = await migrateLegacyRollups(this.o.db, this.o.store, now);
      if (migrated > 0) this.o.logger.info({ rollups: migrated }, 'rollups of the earlier layout turned into parts');
      this.migrated = true;
    }
    const settled = await this.o.store.settle(new Date(now - SETTLE_AFTER_MS));
    if (settled > 0) this.o.logger.debug({ rollups: settled }, 'ended buckets settled');
  }
}
