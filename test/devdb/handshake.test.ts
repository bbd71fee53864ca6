import net from 'node:net';
import { expect } from 'chai';
import { deserialize, serialize } from 'bson';
import { MongoClient, MongoServerError } from 'mongodb';
import { startDevDb } from '../../src/devdb/index.ts';
import { startHarness, type Harness } from './harness.ts';

function opQuery(requestId: number, ns: string, query: object): Buffer {
  const body = serialize(query);
  const name = Buffer.from(ns + '\0');
  const head = Buffer.alloc(20);
  const tail = Buffer.alloc(8);
  tail.writeInt32LE(0, 0);
  tail.writeInt32LE(-1, 4);
  const length = 20 + name.length + 8 + body.length;
  head.writeInt32LE(length, 0);
  head.writeInt32LE(requestId, 4);
  head.writeInt32LE(0, 8);
  head.writeInt32LE(2004, 12);
  head.writeInt32LE(0, 16);
  return Buffer.concat([head, name, tail, body]);
}

function opMsg(requestId: number, command: object, flags = 0): Buffer {
  const body = serialize(command);
  const head = Buffer.alloc(21);
  head.writeInt32LE(21 + body.length, 0);
  head.writeInt32LE(requestId, 4);
  head.writeInt32LE(2013, 12);
  head.writeUInt32LE(flags, 16);
  head.writeUInt8(0, 20);
  return Buffer.concat([head, body]);
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

function readMessage(socket: net.Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length >= 4 && buf.length >= buf.readInt32LE(0)) {
        socket.off('data', onData);
        resolve(buf);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error('closed')));
  });
}

describe('devdb handshake and admin commands', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.stop();
  });

  it('answers a legacy OP_QUERY isMaster with an OP_REPLY announcing a replica-set primary', async () => {
    const socket = await connect(h.devdb.port);
    socket.write(opQuery(7, 'admin.$cmd', { isMaster: 1 }));
    const reply = await readMessage(socket);
    socket.destroy();
    expect(reply.readInt32LE(8)).to.equal(7);
    expect(reply.readInt32LE(12)).to.equal(1);
    const doc = deserialize(reply.subarray(36));
    expect(doc.ismaster).to.equal(true);
    expect(doc.setName).to.equal('devdb');
    expect(doc.logicalSessionTimeoutMinutes).to.be.a('number');
    expect(doc).to.not.have.property('compression');
  });

  it('answers OP_MSG hello with OP_MSG', async () => {
    const socket = await connect(h.devdb.port);
    socket.write(opMsg(9, { hello: 1, $db: 'admin' }));
    const reply = await readMessage(socket);
    socket.destroy();
    expect(reply.readInt32LE(12)).to.equal(2013);
    expect(reply.readInt32LE(8)).to.equal(9);
    const doc = deserialize(reply.subarray(21));
    expect(doc.isWritablePrimary).to.equal(true);
    expect(doc.secondary).to.equal(false);
  });

  it('sends no reply to a moreToCome message but still applies the write', async () => {
    const socket = await connect(h.devdb.port);
    socket.write(opMsg(11, { insert: 'unacked', documents: [{ _id: 1 }], $db: 'devdb_test' }, 2));
    socket.write(opMsg(12, { ping: 1, $db: 'admin' }));
    const reply = await readMessage(socket);
    socket.destroy();
    expect(reply.readInt32LE(8)).to.equal(12);
    expect(await h.db.collection('unacked').countDocuments()).to.equal(1);
  });

  it('closes only the connection that sent a malformed message', async () => {
    const socket = await connect(h.devdb.port);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const bad = Buffer.alloc(40, 0xff);
    bad.writeInt32LE(40, 0);
    bad.writeInt32LE(2013, 12);
    socket.write(bad);
    await closed;
    expect((await h.db.command({ ping: 1 })).ok).to.equal(1);
  });

  it('answers ping, buildInfo, getParameter and serverStatus', async () => {
    const admin = h.client.db('admin');
    expect((await admin.command({ ping: 1 })).ok).to.equal(1);
    expect((await admin.command({ buildInfo: 1 })).version).to.match(/^\d+\.\d+/);
    expect((await admin.command({ getParameter: 1, featureCompatibilityVersion: 1 })).featureCompatibilityVersion.version).to.be.a('string');
    const status = await admin.command({ serverStatus: 1 });
    expect(status.connections.current).to.be.greaterThan(0);
  });

  it('rejects unknown commands with CommandNotFound (59)', async () => {
    const err = await h.db.command({ frobnicate: 1 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(MongoServerError);
    expect((err as MongoServerError).code).to.equal(59);
    expect((err as MongoServerError).codeName).to.equal('CommandNotFound');
  });

  it('creates, lists (filtered by name) and drops collections and databases', async () => {
    const db = h.client.db('listing_db');
    await db.createCollection('alpha');
    await db.collection('beta').insertOne({ x: 1 });
    const names = (await db.listCollections().toArray()).map((c) => c.name).sort();
    expect(names).to.deep.equal(['alpha', 'beta']);
    const filtered = await db.listCollections({ name: 'beta' }).toArray();
    expect(filtered.map((c) => c.name)).to.deep.equal(['beta']);
    const dbs = await h.client.db('admin').admin().listDatabases();
    expect(dbs.databases.map((d) => d.name)).to.include('listing_db');
    expect(await db.collection('alpha').drop()).to.equal(true);
    expect((await db.listCollections().toArray()).map((c) => c.name)).to.deep.equal(['beta']);
    await db.dropDatabase();
    expect((await h.client.db('admin').admin().listDatabases()).databases.map((d) => d.name)).to.not.include('listing_db');
  });

  it('kills cursors and ends sessions on request', async () => {
    const coll = h.db.collection('cursors');
    await coll.insertMany(Array.from({ length: 10 }, (_, i) => ({ i })));
    const cursor = coll.find({}, { batchSize: 2 });
    await cursor.next();
    await cursor.close();
    const session = h.client.startSession();
    await coll.findOne({}, { session });
    await session.endSession();
    expect((await h.db.command({ killCursors: 'cursors', cursors: [] })).ok).to.equal(1);
  });

  it('serves several clients at once', async () => {
    const other = new MongoClient(h.devdb.uri);
    await other.connect();
    try {
      await Promise.all(Array.from({ length: 20 }, (_, i) => other.db('devdb_test').collection('multi').insertOne({ i })));
      expect(await h.db.collection('multi').countDocuments()).to.equal(20);
    } finally {
      await other.close();
    }
  });

  it('refuses to bind a non-loopback address', async () => {
    const err = await startDevDb({ host: '0.0.0.0', port: 0 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.match(/loopback/);
  });
});
