// The clean-up the tests' root hook and the benchmark runner run on the shared nats-server: everything of their own
// prefixes goes, with its consumers; a stream of any other prefix stays.
import { expect } from 'chai';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { natsPrefix, NATS_URL, usedPrefixes } from '../helpers/env.ts';
import { deletePrefixedStreams, ownedStream } from '../helpers/nats-cleanup.ts';

describe('deleting the JetStream streams of a run (shared nats-server)', function () {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let mine: string;
  let theirs: string;

  before(async () => {
    nc = await connect({ servers: NATS_URL });
    jsm = await jetstreamManager(nc);
    mine = natsPrefix();
    // Another run's prefix: not handed out here, so nothing of this process may delete it.
    theirs = natsPrefix();
    usedPrefixes.delete(theirs);
  });

  after(async () => {
    await jsm.streams.delete(`${theirs}EVENTS`).catch(() => false);
    await nc.close();
  });

  const names = async (prefix: string): Promise<string[]> => {
    const found: string[] = [];
    for await (const name of jsm.streams.names()) if (name.includes(prefix)) found.push(name);
    return found.sort();
  };

  it('deletes the streams, consumers, KV buckets and object stores of its prefixes and nothing else', async () => {
    await jsm.streams.add({ name: `${mine}EVENTS`, subjects: [`${mine}events.>`] });
    await jsm.streams.add({ name: `${mine}CLICKS`, subjects: [`${mine}clicks.>`] });
    await jsm.consumers.add(`${mine}CLICKS`, { durable_name: 'ingest', ack_policy: 'explicit' });
    // What a KV bucket and an object store named with the prefix are on the server.
    await jsm.streams.add({ name: `KV_${mine}cache`, subjects: [`$KV.${mine}cache.>`] });
    await jsm.streams.add({ name: `OBJ_${mine}files`, subjects: [`$O.${mine}files.C.>`, `$O.${mine}files.M.>`] });
    await jsm.streams.add({ name: `${theirs}EVENTS`, subjects: [`${theirs}events.>`] });
    expect(await names(mine)).to.have.length(4);

    expect(await deletePrefixedStreams(NATS_URL, [mine])).to.equal(4);

    expect(await names(mine)).to.deep.equal([]);
    expect(await names(theirs)).to.deep.equal([`${theirs}EVENTS`]);
  });

  it('answers 0 and leaves everything when it has no prefix, or the server cannot be reached', async () => {
    await jsm.streams.add({ name: `${mine}DOMAINS`, subjects: [`${mine}domains.>`] });
    expect(await deletePrefixedStreams(NATS_URL, [])).to.equal(0);
    expect(await deletePrefixedStreams('nats://127.0.0.1:1', [mine])).to.equal(0);
    expect(await names(mine)).to.deep.equal([`${mine}DOMAINS`]);
  });

  it('tells a stream of the prefix from one whose name only contains it', () => {
    expect(ownedStream('tAbc_EVENTS', ['tAbc_'])).to.equal(true);
    expect(ownedStream('KV_tAbc_cache', ['tAbc_'])).to.equal(true);
    expect(ownedStream('OBJ_tAbc_files', ['tAbc_'])).to.equal(true);
    expect(ownedStream('xtAbc_EVENTS', ['tAbc_'])).to.equal(false);
    expect(ownedStream('KV_other', ['tAbc_'])).to.equal(false);
  });
});
