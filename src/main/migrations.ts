// The start-up migrations of this release, in order (platform/migrations.ts runs them under a lease). Each takes
// data written by the releases before it forward; append, never renumber or edit one that has been released.
import type { Db } from 'mongodb';
import { migrateLegacyRollups } from '../analytics/legacy-rollups.ts';
import { RollupStore } from '../analytics/rollup.store.ts';
import type { Logger } from '../platform/logger.ts';
import { migrate, type Migration, type MigrationOutcome } from '../platform/migrations.ts';

export const MIGRATIONS: readonly Migration[] = [
  {
    // Chart 0.2.0 and before stored one analytics_rollups document per rollup (sketches in analytics_sketches);
    // reads now take settled parts from analytics_parts. Each legacy rollup becomes one part, in transactions that
    // insert the part and delete what it replaces, so nothing is counted twice (the worker's settler also does it).
    version: 1,
    name: 'analytics rollups become settled parts',
    async up(db: Db, logger: Logger): Promise<void> {
      const turned = await migrateLegacyRollups(db, new RollupStore(db));
      logger.info({ rollups: turned }, 'legacy analytics rollups turned into parts');
    },
  },
];

/** Run by every process at start; the one holding the lease applies what is missing. */
export function migrateAtStart(db: Db, logger: Logger): Promise<MigrationOutcome> {
  return migrate(db, MIGRATIONS, logger);
}
