// Inserts of one event-loop turn go to the server as one unordered insertMany, and each caller still gets its own
// document's outcome.
import { expect } from 'chai';
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { InsertBatcher } from '../../src/platform/insert-batcher.ts';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';

describe('InsertBatcher', () => {
  let mongo: TestMongo;
  let client: MongoClient;
  const inserts: CommandStartedEvent[] = [];

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri, { monitorCommands: true });
    client.on('commandStarted', (e) => {
      if (e.commandName === 'insert') inserts.push(e);
    });
    await client.connect();
  });
  after(async () => {
    await client.close();
    await mongo.stop();
  });
  beforeEach(() => {
    inserts.length = 0;
  });

  it('writes the inserts of one turn with one command', async () => {
    const batcher = new InsertBatcher<{ _id: string; n: number }>(client.db(mongo.dbName).collection('one_turn'));
    await Promise.all(Array.from({ length: 20 }, (_, n) => batcher.insert({ _id: `d${n}`, n })));
    expect(inserts).to.have.length(1);
    expect((inserts[0]!.command.documents as unknown[]).length).to.equal(20);
    expect(await client.db(mongo.dbName).collection('one_turn').countDocuments()).to.equal(20);
  });

  it('rejects only the caller whose document is a duplicate, with code 11000, and stores the others', async () => {
    const coll = client.db(mongo.dbName).collection<{ _id: string }>('duplicates');
    await coll.insertOne({ _id: 'taken' });
    const batcher = new InsertBatcher(coll);
    const results = await Promise.allSettled([batcher.insert({ _id: 'a' }), batcher.insert({ _id: 'taken' }), batcher.insert({ _id: 'b' })]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(((results[1] as PromiseRejectedResult).reason as { code?: number }).code).to.equal(11000);
    expect((await coll.find().toArray()).map((d) => d._id).sort()).to.deep.equal(['a', 'b', 'taken']);
  });

  it('splits at the batch bound', async () => {
    const batcher = new InsertBatcher<{ _id: string }>(client.db(mongo.dbName).collection('bounded'), 4);
    await Promise.all(Array.from({ length: 10 }, (_, n) => batcher.insert({ _id: `d${n}` })));
    expect(inserts.map((e) => (e.command.documents as unknown[]).length)).to.deep.equal([4, 4, 2]);
  });
});
