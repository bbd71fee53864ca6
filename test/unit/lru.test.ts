import { expect } from 'chai';
import { Lru } from '../../src/platform/lru.ts';

describe('Lru (a map bounded by the weight of its entries, least recently used out first)', () => {
  it('bounds a count with weights of 1, evicting the least recently used, a hit counting as a use', () => {
    const lru = new Lru<string>(2);
    lru.set('a', 'A');
    lru.set('b', 'B');
    expect(lru.get('a')).to.equal('A');
    lru.set('c', 'C');
    expect(lru.get('b')).to.equal(undefined);
    expect([lru.get('a'), lru.get('c'), lru.size, lru.weight]).to.deep.equal(['A', 'C', 2, 2]);
  });

  it('bounds by weight, replaces a key with its new weight, and keeps nothing heavier than the bound', () => {
    const lru = new Lru<number>(10);
    lru.set('a', 1, 4);
    lru.set('b', 2, 4);
    lru.set('a', 3, 6);
    expect([lru.get('a'), lru.get('b'), lru.weight]).to.deep.equal([3, 2, 10]);
    lru.set('c', 4, 3);
    expect(lru.get('a'), 'the least recently used goes first').to.equal(undefined);
    expect([lru.get('b'), lru.get('c'), lru.weight]).to.deep.equal([2, 4, 7]);
    lru.set('b', 5, 11);
    expect([lru.get('b'), lru.size, lru.weight], 'too heavy: not kept, and the old value is gone').to.deep.equal([undefined, 1, 3]);
  });

  it('evicts in least-recently-used order when hits land on the newest and the oldest keys', () => {
    const lru = new Lru<string>(4);
    for (const key of ['a', 'b', 'c', 'd']) lru.set(key, key.toUpperCase());
    expect([lru.get('d'), lru.get('a')]).to.deep.equal(['D', 'A']);
    // Each insertion drops one: b, then c, then d (hit before a). A miss changes nothing.
    lru.set('e', 'E');
    expect([lru.get('b'), lru.size]).to.deep.equal([undefined, 4]);
    lru.set('f', 'F');
    expect([lru.get('c'), lru.size]).to.deep.equal([undefined, 4]);
    lru.set('g', 'G');
    expect([lru.get('d'), lru.size]).to.deep.equal([undefined, 4]);
    expect([lru.get('a'), lru.get('e'), lru.get('f'), lru.get('g')]).to.deep.equal(['A', 'E', 'F', 'G']);
  });

  it('deletes a key and gives its weight back', () => {
    const lru = new Lru<string>(3);
    lru.set('a', 'A', 2);
    lru.set('b', 'B', 1);
    lru.delete('a');
    lru.delete('missing');
    expect([lru.get('a'), lru.get('b'), lru.size, lru.weight]).to.deep.equal([undefined, 'B', 1, 1]);
  });

  it('keeps nothing with a bound of 0', () => {
    const lru = new Lru<string>(0);
    lru.set('a', 'A');
    expect([lru.get('a'), lru.size]).to.deep.equal([undefined, 0]);
  });
});
