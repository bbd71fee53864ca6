import { expect } from 'chai';
import { FrameReader, ProtocolError } from '../../src/devdb/wire.ts';

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
});
