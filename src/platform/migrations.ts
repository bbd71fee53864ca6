// Start-up migrations: what takes a database written by an earlier release forward to the schema this release reads.
//
// The version record is one document in `schema_migrations` ({_id: 'schema', version, applied: [{version, name,
// at, ms}]}); a database without it was written before migrations existed and is at version 0. Every process calls
// migrate() at start; the one that holds the `schema-migrations` lease applies, in order, each migration above the
// recorded version and records it as soon as it is done, so a process killed halfway resumes at the first migration
// not recorded. The others start at once: a migration is written so that the previous release and this one both read
// the data while it runs (rollouts run both), and so that running it again, or after a crash midway, changes
// nothing more (idempotent). A database recorded at a version this release does not know was written by a newer
// release: starting on it is refused rather than guessed at.
import type { Db } from 'mongodb';
import type { Logger } from './logger.ts';
import { Lease } from './lease.ts';

export interface Migration {
  /** 1, 2, 3...: consecutive, never reused, never renumbered once released. */
  version: number;
  /** What it does, for the logs and the version record. */
  name: string;
  /** Applies it; must be idempotent. */
  up(db: Db, logger: Logger): Promise<void>;
}

export interface SchemaRecord {
  _id: 'schema';
  version: number;
  applied: Array<{ version: number; name: string; at: Date; ms: number }>;
}

export type MigrationOutcome =
  | { ran: number[]; version: number }
  | { ran: null; version: number; reason: 'another process holds the lease' };

export class SchemaTooNewError extends Error {
  readonly found: number;
  readonly known: number;
  constructor(found: number, known: number) {
    super(`the database is at schema version ${found}, written by a newer release; this release knows versions up to ${known}: run the newer release, or restore a backup taken before the upgrade`);
    this.name = 'SchemaTooNewError';
    this.found = found;
    this.known = known;
  }
}

export const SCHEMA_COLLECTION = 'schema_migrations';
export const MIGRATIONS_LEASE = 'schema-migrations';

export async function schemaVersion(db: Db): Promise<number> {
  const record = await db.collection<SchemaRecord>(SCHEMA_COLLECTION).findOne({ _id: 'schema' });
  return record?.version ?? 0;
}

/** Checks the list: versions 1..n, in order, each once. */
export function checkMigrations(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration "${m.name}" has version ${m.version}, expected ${i + 1}`);
  });
}

export async function migrate(db: Db, migrations: readonly Migration[], logger: Logger, options: { leaseTtlMs?: number } = {}): Promise<MigrationOutcome> {
  checkMigrations(migrations);
  const known = migrations.length;
  const before = await schemaVersion(db);
  if (before > known) throw new SchemaTooNewError(before, known);
  if (before === known) return { ran: [], version: before };

  const ttlMs = options.leaseTtlMs ?? 60_000;
  const lease = new Lease(db, MIGRATIONS_LEASE, ttlMs);
  if (!(await lease.acquire())) {
    logger.info({ version: before, target: known }, 'schema migrations: another process is applying them');
    return { ran: null, version: before, reason: 'another process holds the lease' };
  }
  // A long migration keeps the lease: renewed a few times per term while it runs.
  const renew = setInterval(() => void lease.acquire().catch((error: unknown) => logger.warn({ err: error }, 'schema migrations: lease renewal failed')), ttlMs / 4);
  renew.unref();
  const ran: number[] = [];
  try {
    // Read again under the lease: the previous holder may have finished between the first read and the lease.
    let version = await schemaVersion(db);
    if (version > known) throw new SchemaTooNewError(version, known);
    for (const migration of migrations.slice(version)) {
      const started = performance.now();
      logger.info({ version: migration.version, migration: migration.name }, 'schema migration: applying');
      await migration.up(db, logger);
      const ms = Math.round(performance.now() - started);
      await db.collection<SchemaRecord>(SCHEMA_COLLECTION).updateOne(
        { _id: 'schema' },
        { $max: { version: migration.version }, $push: { applied: { version: migration.version, name: migration.name, at: new Date(), ms } } },
        { upsert: true },
      );
      version = migration.version;
      ran.push(migration.version);
      logger.info({ version, migration: migration.name, ms }, 'schema migration: applied');
    }
    return { ran, version };
  } finally {
    clearInterval(renew);
    await lease.release().catch((error: unknown) => logger.warn({ err: error }, 'schema migrations: lease release failed'));
  }
}
