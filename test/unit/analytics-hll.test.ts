import { expect } from 'chai';
import { CELL_PRECISION, Hll, TOTAL_PRECISION, hashVisitor, registerOf, registersToBytes, standardError, unionBytes } from '../../src/analytics/hll.ts';

function sketchOf(p: number, from: number, to: number): Hll {
  const s = new Hll(p);
  for (let i = from; i < to; i++) s.add(hashVisitor(`visitor-${i}`));
  return s;
}

describe('HyperLogLog sketch of unique visitors', () => {
  it('publishes the error bound 1.04 / sqrt(2^p)', () => {
    expect(standardError(TOTAL_PRECISION)).to.be.closeTo(0.008125, 1e-6);
    expect(standardError(CELL_PRECISION)).to.be.closeTo(0.0325, 1e-6);
  });

  it('counts small sets nearly exactly (linear counting) and ignores repeats', () => {
    const s = new Hll(TOTAL_PRECISION);
    for (let round = 0; round < 3; round++) for (let i = 0; i < 50; i++) s.add(hashVisitor(`v${i}`));
    expect(s.estimate()).to.equal(50);
    expect(new Hll(CELL_PRECISION).estimate()).to.equal(0);
  });

  for (const p of [CELL_PRECISION, TOTAL_PRECISION]) {
    it(`stays within 3 standard errors at 10k and 150k visitors (p=${p})`, () => {
      for (const n of [10_000, 150_000]) {
        const estimate = sketchOf(p, 0, n).estimate();
        expect(Math.abs(estimate - n) / n, `${n} visitors estimated ${estimate}`).to.be.below(3 * standardError(p));
      }
    });
  }

  it('merges as the union of the visitor sets, and merging is idempotent', () => {
    const a = sketchOf(TOTAL_PRECISION, 0, 60_000);
    const b = sketchOf(TOTAL_PRECISION, 40_000, 100_000);
    const union = new Hll(TOTAL_PRECISION).merge(a).merge(b);
    expect(Math.abs(union.estimate() - 100_000) / 100_000).to.be.below(3 * standardError(TOTAL_PRECISION));
    expect(new Hll(TOTAL_PRECISION).merge(union).merge(union).merge(a).estimate()).to.equal(union.estimate());
    expect(() => new Hll(CELL_PRECISION).merge(a)).to.throw(RangeError);
  });

  it('serialises sparse while small and dense beyond, both reading back the same registers', () => {
    const small = sketchOf(CELL_PRECISION, 0, 20);
    const sparse = small.toBytes();
    expect(sparse[0]).to.equal(1);
    expect(sparse.length).to.be.at.most(2 + 20 * 3);
    expect(Hll.fromBytes(sparse).registers).to.deep.equal(small.registers);
    const big = sketchOf(CELL_PRECISION, 0, 5_000);
    const dense = big.toBytes();
    expect(dense[0]).to.equal(0);
    expect(dense.length).to.equal(2 + 1024);
    expect(Hll.fromBytes(dense).registers).to.deep.equal(big.registers);
    expect(new Hll(CELL_PRECISION).mergeBytes(sparse).mergeBytes(dense).estimate()).to.equal(new Hll(CELL_PRECISION).merge(small).merge(big).estimate());
  });

  it('refuses malformed bytes', () => {
    expect(() => Hll.fromBytes(new Uint8Array([7]))).to.throw(RangeError);
    expect(() => new Hll(CELL_PRECISION).mergeBytes(new Uint8Array([0, CELL_PRECISION, 1, 2]))).to.throw(RangeError);
    expect(() => new Hll(CELL_PRECISION).mergeBytes(new Uint8Array([1, CELL_PRECISION, 0xff, 0xff, 1]))).to.throw(RangeError);
    expect(() => new Hll(CELL_PRECISION).mergeBytes(new Uint8Array([1, TOTAL_PRECISION]))).to.throw(RangeError);
  });

  it('serialises packed register updates as the sketch of those visitors, sparse while small, keeping the largest rank', () => {
    // Few updates (sorted by insertion) and many (sorted as a typed array), sparse and dense.
    for (const [p, n] of [[CELL_PRECISION, 3], [CELL_PRECISION, 15], [TOTAL_PRECISION, 6], [CELL_PRECISION, 40], [CELL_PRECISION, 2_000], [TOTAL_PRECISION, 500]] as const) {
      const direct = new Hll(p);
      const packed: number[] = [];
      for (let i = 0; i < n; i++) {
        const hash = hashVisitor(`visitor-${i % Math.ceil(n / 2)}`);
        direct.add(hash);
        const { index, rank } = registerOf(hash, p);
        packed.push((index << 8) | rank);
      }
      // An update with a smaller rank for a register already set must not lower it.
      packed.push(packed[0]! & ~0xff);
      const bytes = registersToBytes(packed, p);
      expect(bytes[0], `${n} visitors at p=${p}`).to.equal(n <= 500 ? 1 : 0);
      expect(Hll.fromBytes(bytes).registers).to.deep.equal(direct.registers);
      // The same bytes as the sketch's own: one entry per register, in index order.
      expect(Buffer.from(bytes), `${n} visitors at p=${p}`).to.deep.equal(Buffer.from(direct.toBytes()));
    }
  });

  it('unites serialised sketches, sparse and dense, as merging them does', () => {
    for (const p of [CELL_PRECISION, TOTAL_PRECISION]) {
      const parts = [sketchOf(p, 0, 30), sketchOf(p, 20, 60), sketchOf(p, 50, 3_000), sketchOf(p, 0, 1)];
      const expected = new Hll(p);
      for (const part of parts) expected.merge(part);
      for (const subset of [parts.slice(0, 2), parts.slice(1, 3), parts]) {
        const union = unionBytes(subset.map((s) => s.toBytes()), p);
        const merged = new Hll(p);
        for (const s of subset) merged.merge(s);
        expect(Hll.fromBytes(union).registers).to.deep.equal(merged.registers);
      }
      expect(() => unionBytes([sketchOf(CELL_PRECISION, 0, 3).toBytes()], TOTAL_PRECISION)).to.throw(RangeError);
    }
  });
});
