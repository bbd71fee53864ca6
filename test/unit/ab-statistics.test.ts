// The A/B winner rule as a statistical procedure (src/clicks/ab-auto.ts): simulated tests, each run from clicks
// and conversions drawn at known conversion rates, decided exactly as the feedback loop decides them (a winner is
// looked for at each new look only). Seeded, so every run of this file sees the same simulated tests.
import { expect } from 'chai';
import { FALSE_WINNER_RATE, MAX_LOOKS, computeAutoWeights, lookAt, winProbability } from '../../src/clicks/ab-auto.ts';
import type { AbTest } from '../../src/links/link.schemas.ts';

/** xorshift32: the simulation's own seeded generator. */
function generator(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

function binomial(n: number, p: number, rand: () => number): number {
  let k = 0;
  for (let i = 0; i < n; i++) if (rand() < p) k++;
  return k;
}

function anAbTest(variants: number, minSample: number): AbTest {
  return {
    enabled: true,
    variants: Array.from({ length: variants }, (_, i) => ({ url: `https://example.com/v${i}`, weight: 50 })),
    auto: { enabled: true, min_sample: minSample },
  };
}

/**
 * One test: clicks arrive in batches of `batch` per variant, each converting at its rate; after every batch the
 * rule is asked (as AbFeedback asks it), remembering the last look taken. Ends at a winner or after the last look.
 */
function simulate(rates: readonly number[], minSample: number, batch: number, rand: () => number): number | null {
  const ab = anAbTest(rates.length, minSample);
  const clicks = rates.map(() => 0);
  const conversions = rates.map(() => 0);
  let lastLook = -1;
  const lastClicks = minSample * 2 ** (MAX_LOOKS - 1);
  while (clicks[0]! < lastClicks) {
    rates.forEach((rate, i) => {
      clicks[i]! += batch;
      conversions[i]! += binomial(batch, rate, rand);
    });
    // The weights are recomputed after every batch; only a new look can name a winner, so only those are asked.
    if (lookAt(clicks, rates.length, minSample) <= lastLook) continue;
    const decided = computeAutoWeights(ab, { clicks, conversions }, lastLook);
    if (decided.look !== null) lastLook = decided.look;
    if (decided.winnerIndex !== null) return decided.winnerIndex;
  }
  return null;
}

describe('A/B winner statistics (simulated tests)', function () {
  this.timeout(120_000);

  it('states its looks and thresholds: min_sample x 2^k, P(best) >= 1 - 5 % / 2^(k+1) / variants', () => {
    expect(lookAt([99, 500], 2, 100)).to.equal(-1);
    expect(lookAt([100, 399], 2, 100)).to.equal(0);
    expect(lookAt([400, 450], 2, 100)).to.equal(2);
    expect(lookAt([1e9, 1e9], 2, 100)).to.equal(MAX_LOOKS - 1);
    expect(winProbability(0, 2)).to.be.closeTo(1 - 0.05 / 4, 1e-12);
    expect(winProbability(3, 3)).to.be.closeTo(1 - 0.05 / 16 / 3, 1e-12);
    // The sum of what every look may spend is the stated rate.
    let spent = 0;
    for (let k = 0; k < MAX_LOOKS; k++) spent += (1 - winProbability(k, 2)) * 2;
    expect(spent).to.be.lessThan(FALSE_WINNER_RATE);
  });

  it('takes each look once: the same look asked again names no winner', () => {
    const ab = anAbTest(2, 100);
    const samples = { clicks: [150, 150], conversions: [5, 60] };
    expect(computeAutoWeights(ab, samples, -1)).to.include({ winnerIndex: 1, look: 0 });
    expect(computeAutoWeights(ab, samples, 0)).to.include({ winnerIndex: null, look: null });
  });

  it('declares no winner between two equal variants in more than 5 % of 400 tests (looking at every batch)', () => {
    const rand = generator(0x0ab0_0001);
    const runs = 400;
    let falseWinners = 0;
    for (let run = 0; run < runs; run++) if (simulate([0.05, 0.05], 200, 100, rand) !== null) falseWinners++;
    expect(falseWinners / runs).to.be.at.most(FALSE_WINNER_RATE);
  });

  it('declares no winner among three equal variants in more than 5 % of 200 tests', () => {
    const rand = generator(0x0ab0_0002);
    const runs = 200;
    let falseWinners = 0;
    for (let run = 0; run < runs; run++) if (simulate([0.1, 0.1, 0.1], 200, 100, rand) !== null) falseWinners++;
    expect(falseWinners / runs).to.be.at.most(FALSE_WINNER_RATE);
  });

  it('finds a clear winner (8 % against 5 %, min_sample 1000) in at least 95 % of 100 tests, never the worse one', () => {
    const rand = generator(0x0ab0_0003);
    const outcomes = Array.from({ length: 100 }, () => simulate([0.05, 0.08], 1000, 250, rand));
    expect(outcomes.filter((w) => w === 1).length).to.be.at.least(95);
    expect(outcomes.filter((w) => w === 0)).to.have.length(0);
  });
});
