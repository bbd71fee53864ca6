import { MongoClient, type Db, type ClientSession } from 'mongodb';

export interface Mongo {
  client: MongoClient;
  db: Db;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export async function connectMongo(uri: string, dbName: string, appName: string): Promise<Mongo> {
  const client = new MongoClient(uri, { appName, serverSelectionTimeoutMS: 10_000, maxPoolSize: 50 });
  await client.connect();
  const db = client.db(dbName);
  return {
    client,
    db,
    async ping() {
      try {
        await db.command({ ping: 1 }, { timeoutMS: 2000 });
        return true;
      } catch {
        return false;
      }
    },
    close: () => client.close(),
  };
}

/**
 * Runs `work` in a transaction so a mutation and its outbox row commit together (DESIGN: outbox). The driver
 * retries transient transaction errors; `work` must therefore be safe to run more than once.
 */
export async function inTransaction<T>(client: MongoClient, work: (session: ClientSession) => Promise<T>): Promise<T> {
  const session = client.startSession();
  try {
    let result: T | undefined;
    await session.withTransaction(async () => {
      result = await work(session);
    });
    return result as T;
  } finally {
    await session.endSession();
  }
}
