import { MongoClient } from 'mongodb';
import { randomBase62 } from '../../src/platform/ids.ts';
import { startDevDb } from '../../src/devdb/index.ts';

export interface TestMongo {
  uri: string;
  /** A database of its own per test file, so files never see each other's rows. */
  dbName: string;
  stop(): Promise<void>;
}

/** The real MongoDB at MONGODB_URI when set (CI can point at one), else a devdb on an ephemeral port. */
export async function startTestMongo(): Promise<TestMongo> {
  const dbName = `lp_test_${randomBase62(10)}`;
  const external = process.env.MONGODB_URI;
  if (external) {
    return {
      uri: external,
      dbName,
      async stop() {
        const client = new MongoClient(external);
        await client.connect();
        await client.db(dbName).dropDatabase();
        await client.close();
      },
    };
  }
  const devdb = await startDevDb({ port: 0 });
  return { uri: devdb.uri, dbName, stop: () => devdb.stop() };
}
