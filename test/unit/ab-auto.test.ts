import { expect } from 'chai';
import { computeAutoWeights, probabilityBest } from '../../src/clicks/ab-auto.ts';
import type { AbTest } from '../../src/links/link.schemas.ts';

function anAbTest(variants: number, overrides: Partial<NonNullable<AbTest['auto']>> = {}): AbTest {
  return {
    enabled: true,
    variants: Array.from({ length: variants }, (_, i) => ({ url: `https://example.com/v${i}`, weight: 50 })),
    auto: { enabled: true, min_sample: 100, ...overrides },
  };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('automatic A/B weights (Bayesian, Beta posteriors)', () => {
  it('gives equal evidence equal weights and no winner', () => {
    const { weights, winnerIndex } = computeAutoWeights(anAbTest(2), { clicks: [1000, 1000], conversions: [50, 50] });
    expect(weights[0]).to.be.within(45, 55);
    expect(weights[1]).to.be.within(45, 55);
    expect(winnerIndex).to.equal(null);
  });

  it('names a clearly better variant the winner once every variant has min_sample clicks', () => {
    const { weights, winnerIndex } = computeAutoWeights(anAbTest(3), { clicks: [1000, 1000, 1000], conversions: [50, 120, 48] });
    expect(winnerIndex).to.equal(1);
    expect(weights[1]).to.be.greaterThanOrEqual(95);
  });

  it('names no winner while one variant is below min_sample, however strong the leader', () => {
    const { weights, winnerIndex } = computeAutoWeights(anAbTest(2, { min_sample: 500 }), { clicks: [1000, 499], conversions: [200, 10] });
    expect(winnerIndex).to.equal(null);
    expect(weights[0]).to.be.greaterThan(weights[1]!);
  });

  it('names no winner when the leader is likely but below 95 %', () => {
    const p = probabilityBest({ clicks: [1000, 1000], conversions: [55, 50] }, 2);
    expect(p[0]).to.be.within(0.55, 0.94);
    expect(computeAutoWeights(anAbTest(2), { clicks: [1000, 1000], conversions: [55, 50] }).winnerIndex).to.equal(null);
  });

  it('keeps every weight between 1 and 100, so a losing variant still gets a little traffic', () => {
    const { weights } = computeAutoWeights(anAbTest(4), { clicks: [5000, 5000, 5000, 5000], conversions: [1000, 10, 10, 10] });
    expect(weights).to.deep.equal([100, 1, 1, 1]);
  });

  it('gives weights roughly proportional to the probability of being best (summing to about 100)', () => {
    const { weights } = computeAutoWeights(anAbTest(3), { clicks: [200, 200, 200], conversions: [20, 22, 18] });
    expect(sum(weights)).to.be.within(98, 102);
    expect(weights[1]).to.be.greaterThan(weights[2]!);
  });

  it('is deterministic: the same samples always give the same weights', () => {
    const samples = { clicks: [300, 310, 290], conversions: [30, 33, 29] };
    expect(computeAutoWeights(anAbTest(3), samples)).to.deep.equal(computeAutoWeights(anAbTest(3), samples));
  });

  it('treats missing sample entries (a variant added later) as zero and conversions above clicks as clicks', () => {
    const p = probabilityBest({ clicks: [100], conversions: [500, 7] }, 2);
    expect(p).to.have.length(2);
    // Beta(101, 1) against a uniform Beta(1, 1): P = 101 / 102.
    expect(p[0]).to.be.closeTo(101 / 102, 0.01);
  });
});
