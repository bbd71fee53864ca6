// Each test file starts its own devdb on an ephemeral port and talks to it with the real driver.
import { expect } from 'chai';
import { MongoClient, MongoServerError, type Db, type MongoClientOptions } from 'mongodb';
import { startDevDb, type DevDb, type DevDbOptions } from '../../src/devdb/index.ts';

export interface Harness {
  devdb: DevDb;
  client: MongoClient;
  db: Db;
  stop(): Promise<void>;
}

export async function startHarness(options: DevDbOptions = {}, clientOptions: MongoClientOptions = {}): Promise<Harness> {
  const devdb = await startDevDb({ port: 0, ...options });
  const client = new MongoClient(devdb.uri, { serverSelectionTimeoutMS: 5000, ...clientOptions });
  await client.connect();
  return {
    devdb,
    client,
    db: client.db('devdb_test'),
    async stop() {
      await client.close();
      await devdb.stop();
    },
  };
}

/** The server's refusal of a command, to check its code and name; fails the test when the command is accepted. */
export async function refusal(p: Promise<unknown>): Promise<MongoServerError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof MongoServerError) return err;
    throw err;
  }
  expect.fail('the command was accepted');
}
