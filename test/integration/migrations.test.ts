// Start-up migrations (issue 33): a database written by the previous release (chart 0.2.0, schema version 0, the
// documents of test/fixtures/schema-v0/) is taken forward by the migrations every process runs at start, under a
// lease, once; against devdb as the MongoDB server.
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { EJSON } from 'bson';
import { MongoClient, type Db, type Document } from 'mongodb';
import { pino } from 'pino';
import { decodeCells } from '../../src/analytics/cells.ts';
import { RollupStore, rollupId } from '../../src/analytics/rollup.store.ts';
import { MIGRATIONS } from '../../src/main/migrations.ts';
import { MIGRATIONS_LEASE, SCHEMA_COLLECTION, SchemaTooNewError, checkMigrations, migrate, schemaVersion, type Migration, type SchemaRecord } from '../../src/platform/migrations.ts';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/schema-v0');
const HOUR = Date.parse('2026-01-01T00:00:00.000Z');
const logger = pino({ level: 'silent' });

describe('start-up migrations', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let client: MongoClient;
  let db: Db;
  let n = 0;

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
  });
  after(async () => {
    await client?.close();
    await mongo?.stop();
  });
  beforeEach(async () => {
    db = client.db(`${mongo.dbName}_migrations_${++n}`);
    await new RollupStore(db).ensureIndexes();
  });

  /** Writes the previous release's documents, as it stored them. */
  async function loadSchemaV0(): Promise<void> {
    const rollups = EJSON.parse(await readFile(path.join(FIXTURES, 'analytics_rollups.json'), 'utf8')) as Document[];
    await db.collection('analytics_rollups').insertMany(rollups);
  }

  /** The cells of a workspace-level hour as this release stores them (settled parts, decoded). */
  async function read(group: string, dimension: string, from: number) {
    const parts = await db.collection<{ c?: Record<string, { buffer: Uint8Array }> }>('analytics_parts').find({ r: rollupId('ws_v0', '', 'h', from, group) }).toArray();
    return parts.flatMap((part) => (part.c?.[dimension] ? decodeCells(part.c[dimension].buffer) : []));
  }

  it("take the previous release's analytics rollups forward to parts, record version 1, and read back the same figures", async () => {
    await loadSchemaV0();
    expect(await schemaVersion(db)).to.equal(0);
    expect(await read('_', '_', HOUR)).to.deep.equal([]); // this release does not read the earlier layout

    const outcome = await migrate(db, MIGRATIONS, logger);
    expect(outcome).to.deep.equal({ ran: [1], version: 1 });
    expect(await db.collection('analytics_rollups').countDocuments()).to.equal(0);
    const total = await read('_', '_', HOUR);
    expect(total.map(({ key, c, b, cv, rev }) => ({ key, c, b, cv, rev }))).to.deep.equal([{ key: '_', c: 12, b: 2, cv: 1, rev: { EUR: 500 } }]);
    const countries = (await read('small', 'country', HOUR + 3_600_000)).map(({ key, c, b }) => ({ key, c, b }));
    expect(countries.sort((x, y) => x.key.localeCompare(y.key))).to.deep.equal([{ key: 'DE', c: 5, b: 0 }, { key: 'FR', c: 3, b: 1 }]);

    const record = await db.collection<SchemaRecord>(SCHEMA_COLLECTION).findOne({ _id: 'schema' });
    expect(record?.version).to.equal(1);
    expect(record?.applied.map((a) => [a.version, a.name])).to.deep.equal([[1, MIGRATIONS[0]!.name]]);
    // The lease is given back for the next start.
    expect(await db.collection('leases').countDocuments({ _id: MIGRATIONS_LEASE as never })).to.equal(0);
  });

  it('do nothing on the next start, and nothing twice when run again', async () => {
    await loadSchemaV0();
    await migrate(db, MIGRATIONS, logger);
    const parts = await db.collection('analytics_parts').countDocuments();
    expect(await migrate(db, MIGRATIONS, logger)).to.deep.equal({ ran: [], version: 1 });
    // The migration itself is idempotent: applied again from scratch, it finds nothing left to turn.
    await MIGRATIONS[0]!.up(db, logger);
    expect(await db.collection('analytics_parts').countDocuments()).to.equal(parts);
  });

  it('run in one process only: another start while a holder migrates leaves the data to it', async () => {
    await loadSchemaV0();
    await db.collection('leases').insertOne({ _id: MIGRATIONS_LEASE as never, holder: 'another-replica', expires_at: new Date(Date.now() + 60_000) });
    const outcome = await migrate(db, MIGRATIONS, logger);
    expect(outcome).to.deep.equal({ ran: null, version: 0, reason: 'another process holds the lease' });
    expect(await db.collection('analytics_rollups').countDocuments()).to.equal(2);
    // The holder died without finishing: its lease runs out, and the next start takes over.
    await db.collection('leases').updateOne({ _id: MIGRATIONS_LEASE as never }, { $set: { expires_at: new Date(Date.now() - 1) } });
    expect(await migrate(db, MIGRATIONS, logger)).to.deep.equal({ ran: [1], version: 1 });
  });

  it('resume at the first migration not recorded after a failure midway', async () => {
    const applied: string[] = [];
    let failing = true;
    const steps: Migration[] = [
      { version: 1, name: 'one', up: () => Promise.resolve(void applied.push('one')) },
      { version: 2, name: 'two', up: () => (failing ? Promise.reject(new Error('disk full')) : Promise.resolve(void applied.push('two'))) },
      { version: 3, name: 'three', up: () => Promise.resolve(void applied.push('three')) },
    ];
    let error: unknown;
    await migrate(db, steps, logger).catch((e: unknown) => (error = e));
    expect((error as Error).message).to.equal('disk full');
    expect(await schemaVersion(db)).to.equal(1);
    failing = false;
    expect(await migrate(db, steps, logger)).to.deep.equal({ ran: [2, 3], version: 3 });
    expect(applied).to.deep.equal(['one', 'two', 'three']);
  });

  it('refuse a database written by a newer release, and a list with a gap', async () => {
    await db.collection<SchemaRecord>(SCHEMA_COLLECTION).insertOne({ _id: 'schema', version: MIGRATIONS.length + 1, applied: [] });
    let error: unknown;
    await migrate(db, MIGRATIONS, logger).catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(SchemaTooNewError);
    expect((error as Error).message).to.match(/schema version 2, written by a newer release; this release knows versions up to 1/);
    expect(() => checkMigrations([{ version: 2, name: 'gap', up: () => Promise.resolve() }])).to.throw(/version 2, expected 1/);
  });
});
