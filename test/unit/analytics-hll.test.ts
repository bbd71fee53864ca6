import { expect } from 'chai';
import { CELL_PRECISION, Hll, TOTAL_PRECISION, countVisitors, exactLimit, hashVisitor, registerOf, registerOfKey, registersToBytes, standardError, unionBytes, visitorKey } from '../../src/analytics/hll.ts';

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

  it('derives from a visitor key the register its hash has at any precision', () => {
    for (let i = 0; i < 1_000; i++) {
      const hash = i === 0 ? { hi: 0, lo: 0 } : i === 1 ? { hi: 1, lo: 0 } : hashVisitor(`visitor-${i}`);
      for (let p = 4; p <= 16; p++) expect(registerOfKey(visitorKey(hash), p), `${i} at p=${p}`).to.deep.equal(registerOf(hash, p));
    }
  });

  it('serialises visitor keys as the exact set of those visitors while they are few, as registers beyond, keeping the largest rank', () => {
    // Few keys (sorted by insertion) and many (sorted as a typed array), exact and not.
    for (const [p, n] of [[CELL_PRECISION, 3], [CELL_PRECISION, 15], [TOTAL_PRECISION, 6], [CELL_PRECISION, 40], [CELL_PRECISION, 2_000], [CELL_PRECISION, 2_100], [TOTAL_PRECISION, 500], [TOTAL_PRECISION, 8_000]] as const) {
      const direct = new Hll(p);
      const keys: number[] = [];
      const distinct = Math.ceil(n / 2);
      for (let i = 0; i < n; i++) {
        const hash = hashVisitor(`visitor-${i % distinct}`);
        direct.add(hash);
        keys.push(visitorKey(hash));
      }
      const bytes = registersToBytes(keys, p);
      const exact = distinct <= exactLimit(p);
      expect(bytes[0], `${n} visitors at p=${p}`).to.equal(exact ? 2 : direct.toBytes()[0]);
      expect(Hll.fromBytes(bytes).registers).to.deep.equal(direct.registers);
      if (exact) expect(countVisitors([bytes], [], p, n), `${n} visitors at p=${p}`).to.equal(distinct);
      else expect(Buffer.from(bytes), `${n} visitors at p=${p}`).to.deep.equal(Buffer.from(direct.toBytes()));
    }
  });

  it('counts visitors exactly up to the limit of the exact set, at both precisions', () => {
    expect(exactLimit(CELL_PRECISION)).to.equal(1024);
    expect(exactLimit(TOTAL_PRECISION)).to.equal(3276);
    for (const p of [CELL_PRECISION, TOTAL_PRECISION]) {
      for (const n of [1, 2, 100, 101, 199, 200, 1000, exactLimit(p)]) {
        const keys = Array.from({ length: n }, (_, i) => visitorKey(hashVisitor(`v-${p}-${i}`)));
        const halves = [registersToBytes(keys.slice(0, n >> 1), p), registersToBytes(keys.slice(n >> 1), p)].filter((b) => b.length > 2);
        expect(countVisitors([unionBytes(halves, p)], [], p, n), `${n} at p=${p}`).to.equal(n);
        expect(countVisitors(halves, keys.slice(0, 3), p, n + 3), `${n} at p=${p}, with raw visitors`).to.equal(n);
      }
    }
  });

  it('counts exactly the visitors of many overlapping exact sets and raw visitors, each once', () => {
    // 400 cells, each an exact set of visitors drawn from 20,000: most visitors are in several sets.
    const visitors = new Set<number>();
    const parts: Uint8Array[] = [];
    let seed = 1;
    const next = () => (seed = (seed * 48271) % 2_147_483_647);
    for (let i = 0; i < 400; i++) {
      const keys = Array.from({ length: 1 + (next() % 600) }, () => visitorKey(hashVisitor(`v${next() % 20_000}`)));
      for (const key of keys) visitors.add(Math.floor(key / 64));
      parts.push(registersToBytes(keys, CELL_PRECISION));
    }
    const raw = [visitorKey(hashVisitor('v1')), visitorKey(hashVisitor('raw-only'))];
    for (const key of raw) visitors.add(Math.floor(key / 64));
    expect(countVisitors(parts, raw, CELL_PRECISION, Infinity)).to.equal(visitors.size);
    expect(countVisitors(parts, raw, CELL_PRECISION, 100)).to.equal(100);
    expect(countVisitors(parts.slice(0, 1), [], CELL_PRECISION, Infinity)).to.equal((parts[0]!.length - 2) / 5);
  });

  it('merges an exact set into registers as adding its visitors one by one does', () => {
    for (const p of [CELL_PRECISION, TOTAL_PRECISION]) {
      const keys = Array.from({ length: 700 }, (_, i) => visitorKey(hashVisitor(`m-${i}`)));
      const exact = registersToBytes(keys, p);
      expect(exact[0]).to.equal(2);
      const byKeys = sketchOf(p, 0, 40);
      for (const key of keys) byKeys.addKey(key);
      expect(sketchOf(p, 0, 40).mergeBytes(exact).registers).to.deep.equal(byKeys.registers);
      // A visitor whose hash has no 1 bit past the index bits of its first word: its rank comes from the second.
      const deep = (0x12345678 >>> (32 - p)) << (32 - p);
      const far = registersToBytes([(deep >>> 0) * 64 + 7], p);
      expect(new Hll(p).mergeBytes(far).registers[deep >>> (32 - p)]).to.equal(32 - p + 7);
    }
  });

  it('never counts more visitors than the clicks, nor fewer than the registers set, once it is an estimate', () => {
    let exceeded = 0;
    for (let seed = 0; seed < 40; seed++) {
      // A sketch that is registers already (an earlier version's, or one past the limit), of 100 visitors.
      const sketch = new Hll(CELL_PRECISION);
      for (let i = 0; i < 100; i++) sketch.add(hashVisitor(`visitor-${seed}-${i}`));
      if (sketch.estimate() > 100) exceeded++;
      const counted = countVisitors([sketch.toBytes()], [], CELL_PRECISION, 100);
      expect(counted).to.be.at.most(100).and.at.least(sketch.occupied());
    }
    // The raw estimate does exceed the clicks for some of these sets: the bound is what holds it.
    expect(exceeded).to.be.greaterThan(0);
  });

  it('merges dense sketches register by register, at any offset in a reply and whatever their registers hold', () => {
    let seed = 7;
    const rand = () => ((seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
    const m = 2 ** TOTAL_PRECISION;
    const sketch = new Hll(TOTAL_PRECISION);
    const expected = new Uint8Array(m);
    for (let k = 0; k < 12; k++) {
      // Registers as ranks are (mostly below 128), and a few of 128 or more: a malformed sketch is merged bytewise.
      const registers = Uint8Array.from({ length: m }, () => (rand() < 0.001 ? 128 + Math.floor(rand() * 128) : rand() < 0.3 ? 0 : 1 + Math.floor(rand() * 20)));
      // Where a reply puts it: at any offset of a larger buffer, so the registers may be off a 4-byte boundary.
      const offset = k % 4;
      const reply = new Uint8Array(offset + 2 + m + 3);
      reply[offset] = 0;
      reply[offset + 1] = TOTAL_PRECISION;
      reply.set(registers, offset + 2);
      sketch.mergeBytes(reply.subarray(offset, offset + 2 + m));
      for (let i = 0; i < m; i++) expected[i] = Math.max(expected[i]!, registers[i]!);
    }
    expect(Buffer.from(sketch.registers).equals(Buffer.from(expected))).to.equal(true);
    expect(expected.some((r) => r >= 128)).to.equal(true);
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
