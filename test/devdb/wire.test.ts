import { expect } from 'chai';
import { deserialize, Long, serialize } from 'bson';
import { encodeMsg, encodeReply, FrameReader, ProtocolError, RawDoc, ReplySlabs } from '../../src/devdb/wire.ts';

function message(length: number, fill: number): Buffer {
  const buf = Buffer.alloc(length, fill);
  buf.writeInt32LE(length, 0);
  return buf;
}

describe('devdb wire framing', () => {
  it('puts a message together from chunks of every size, the length itself cut in two', () => {
    const big = message(300_000, 7);
    const reader = new FrameReader();
    const frames: Buffer[] = [];
    frames.push(...reader.push(big.subarray(0, 2)));
    for (let at = 2; at < big.length; at += 997) frames.push(...reader.push(big.subarray(at, Math.min(big.length, at + 997))));
    expect(frames).to.have.length(1);
    expect(frames[0]!.equals(big)).to.equal(true);
  });

  it('splits several messages arriving in one chunk, and keeps the start of the next', () => {
    const a = message(20, 1);
    const b = message(40, 2);
    const c = message(64, 3);
    const reader = new FrameReader();
    const first = reader.push(Buffer.concat([a, b, c.subarray(0, 10)]));
    expect(first.map((f) => f.length)).to.deep.equal([20, 40]);
    expect(first[1]!.equals(b)).to.equal(true);
    const second = reader.push(c.subarray(10));
    expect(second).to.have.length(1);
    expect(second[0]!.equals(c)).to.equal(true);
  });

  it('refuses a length no message can have', () => {
    expect(() => new FrameReader().push(message(8, 0))).to.throw(ProtocolError, /invalid message length 8/);
  });

  describe('replies', () => {
    const stored = [
      { _id: 'lnk_1', title: 'é', n: 1, at: new Date(0) },
      { _id: 'lnk_2', nested: { deep: [1, 2, 3] }, big: 'x'.repeat(1000) },
    ];
    const reply = (docs: unknown[]) => ({ cursor: { firstBatch: docs, id: Long.fromNumber(7), ns: 'db.links' }, ok: 1 });

    it('sends stored documents as their bytes inside the same BSON bson would encode for them', () => {
      const raw = stored.map((d) => new RawDoc(serialize(d)));
      const msg = encodeMsg(42, reply(raw));
      expect(msg.readInt32LE(0)).to.equal(msg.length);
      expect(msg.readInt32LE(8)).to.equal(42);
      expect(msg.readInt32LE(12)).to.equal(2013);
      expect(msg.readUInt32LE(16)).to.equal(0);
      expect(msg[20]).to.equal(0);
      expect(msg.subarray(21).equals(serialize(reply(stored)))).to.equal(true);
      const legacy = encodeReply(5, reply(raw));
      expect(legacy.readInt32LE(0)).to.equal(legacy.length);
      expect(legacy.readInt32LE(12)).to.equal(1);
      expect(legacy.readInt32LE(32)).to.equal(1);
      expect(deserialize(legacy.subarray(36))).to.deep.equal(deserialize(serialize(reply(stored))));
    });

    it('writes a reply into a slab given back after an earlier one', () => {
      const slabs = new ReplySlabs();
      const first = encodeMsg(1, reply([new RawDoc(serialize(stored[0]!))]), slabs);
      slabs.give(first);
      expect(slabs.size).to.equal(1);
      const second = encodeMsg(2, reply([new RawDoc(serialize(stored[1]!))]), slabs);
      expect(second.buffer).to.equal(first.buffer);
      expect(slabs.size).to.equal(0);
      expect(deserialize(second.subarray(21))).to.deep.equal(deserialize(serialize(reply([stored[1]]))));
    });

    it('writes a reply larger than a slab into a power-of-two buffer used again once given back, up to a bound', () => {
      const slabs = new ReplySlabs();
      const big = (id: string, bytes: number) => reply([new RawDoc(serialize({ _id: id, text: 'y'.repeat(bytes) }))]);
      const first = encodeMsg(3, big('a', 200_000), slabs);
      expect(first.buffer.byteLength).to.equal(256 * 1024);
      slabs.give(first);
      expect(slabs.size).to.equal(1);
      // A smaller reply of the same size class takes the same memory, and reads back whole.
      const second = encodeMsg(4, big('b', 150_000), slabs);
      expect(second.buffer).to.equal(first.buffer);
      expect(slabs.size).to.equal(0);
      expect(deserialize(second.subarray(21))).to.deep.equal(deserialize(serialize(reply([{ _id: 'b', text: 'y'.repeat(150_000) }]))));
      // A reply of another class does not take it.
      slabs.give(second);
      const third = encodeMsg(5, big('c', 600_000), slabs);
      expect(third.buffer.byteLength).to.equal(1024 * 1024);
      expect(slabs.size).to.equal(1);
      // No more than 16 MB wait: the ninth 2 MB buffer given back is dropped.
      const many = Array.from({ length: 9 }, (_, i) => encodeMsg(6 + i, big(`d${i}`, 1_500_000), slabs));
      for (const m of many) slabs.give(m);
      expect(slabs.size).to.equal(1 + 7);
      // Past 16 MB, replies are allocated as they come and never kept.
      const huge = encodeMsg(20, big('e', 16_800_000), slabs);
      expect(huge.buffer.byteLength).to.not.equal(32 * 1024 * 1024);
      slabs.give(huge);
      expect(slabs.size).to.equal(8);
    });

    it('keeps a large buffer given back by dropping smaller ones that wait, never holding more than the bound', () => {
      const slabs = new ReplySlabs();
      const big = (id: string, bytes: number) => reply([new RawDoc(serialize({ _id: id, text: 'y'.repeat(bytes) }))]);
      // A cursor's first batch, then its next one of 11 MB (a 16 MB buffer), given back in that order.
      const first = encodeMsg(1, big('a', 1_500_000), slabs);
      const next = encodeMsg(2, big('b', 11_000_000), slabs);
      expect(next.buffer.byteLength).to.equal(16 * 1024 * 1024);
      slabs.give(first);
      slabs.give(next);
      expect(slabs.size).to.equal(1);
      // The same read again takes the 16 MB buffer kept.
      encodeMsg(3, big('c', 1_500_000), slabs);
      expect(encodeMsg(4, big('d', 11_000_000), slabs).buffer).to.equal(next.buffer);
    });
  });
});

