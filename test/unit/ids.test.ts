import { expect } from 'chai';
import { newId, randomBase62 } from '../../src/platform/ids.ts';

describe('random ids and slugs', () => {
  it('draws base62 text of the asked length, never repeating across many draws (the byte pool refilled many times)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const slug = randomBase62(7);
      expect(slug).to.match(/^[0-9A-Za-z]{7}$/);
      seen.add(slug);
    }
    expect(seen.size).to.equal(20_000);
    expect(newId('lnk')).to.match(/^lnk_[0-9A-Za-z]{20}$/);
  });

  it('uses every character about equally often', () => {
    const counts = new Map<string, number>();
    const text = Array.from({ length: 2000 }, () => randomBase62(62)).join('');
    for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).to.equal(62);
    // 124,000 draws, 2,000 expected per character; a standard deviation is about 44.
    for (const n of counts.values()) expect(n).to.be.within(1700, 2300);
  });
});
