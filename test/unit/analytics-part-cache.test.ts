import { expect } from 'chai';
import { PartCache } from '../../src/analytics/part-cache.ts';

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

describe('analytics part cache (bytes of rollup parts kept by an api process)', () => {
  it('answers what was kept, a copy of it, and undefined for what was not', () => {
    const cache = new PartCache(1 << 20);
    const source = bytes(100, 7);
    cache.set(PartCache.key('p1', 'country'), source);
    cache.set(PartCache.key('p2', 'country'), null);
    source.fill(0);
    expect(cache.get(PartCache.key('p1', 'country'))).to.deep.equal(bytes(100, 7));
    expect(cache.get(PartCache.key('p2', 'country'))).to.equal(null);
    expect(cache.get(PartCache.key('p1', 'os'))).to.equal(undefined);
  });

  it('drops the least recently used beyond its budget, never holding more', () => {
    const one = PartCache.key('a', 'd').length * 2 + 128 + 1000;
    const cache = new PartCache(3 * one);
    cache.set(PartCache.key('a', 'd'), bytes(1000, 1));
    cache.set(PartCache.key('b', 'd'), bytes(1000, 2));
    cache.set(PartCache.key('c', 'd'), bytes(1000, 3));
    expect(cache.bytes).to.equal(3 * one);
    // Reading `a` makes `b` the least recently used: a fourth entry pushes it out.
    expect(cache.get(PartCache.key('a', 'd'))).to.not.equal(undefined);
    cache.set(PartCache.key('e', 'd'), bytes(1000, 4));
    expect(cache.get(PartCache.key('b', 'd'))).to.equal(undefined);
    expect(cache.get(PartCache.key('a', 'd'))).to.deep.equal(bytes(1000, 1));
    expect(cache.size).to.equal(3);
    expect(cache.bytes).to.be.at.most(cache.maxBytes);
    // Kept again under the same key: counted once.
    cache.set(PartCache.key('a', 'd'), bytes(1000, 5));
    expect(cache.bytes).to.equal(3 * one);
    // Larger than the whole budget: handed back, not kept.
    expect(cache.set(PartCache.key('huge', 'd'), bytes(4 * one, 9))).to.have.length(4 * one);
    expect(cache.get(PartCache.key('huge', 'd'))).to.equal(undefined);
    expect(cache.size).to.equal(3);
  });

  it('keeps nothing with a budget of 0', () => {
    const cache = new PartCache(0);
    cache.set(PartCache.key('a', 'd'), bytes(10, 1));
    expect(cache.size).to.equal(0);
    expect(cache.get(PartCache.key('a', 'd'))).to.equal(undefined);
  });
});
