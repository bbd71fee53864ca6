// Automatic A/B weights (spec 2.3 `auto`): each variant's conversion rate has a Beta(1 + conversions,
// 1 + clicks - conversions) posterior; the probability that a variant is the best one is estimated by drawing from
// every posterior many times with a fixed seed, so the same samples always give the same weights (no flapping
// between batches, and tests can state exact expectations).
//
// The winner. The weights move with every batch, but a winner ends the test, so that decision is taken at a few
// fixed looks only: when every variant first has min_sample clicks, then 2x, 4x, ... (MAX_LOOKS looks). At look k a
// variant wins when its probability of being best is at least 1 - FALSE_WINNER_RATE / 2^(k+1) / variants. Across
// all looks that spends at most FALSE_WINNER_RATE: among variants that convert equally, a winner is declared in at
// most 5 % of tests (test/unit/ab-statistics.test.ts simulates it). Declaring at 95 % after every batch instead would
// name a false winner in a third of such tests: each look is another chance for noise to cross a fixed line.
import type { AbTest } from '../links/link.schemas.ts';

export interface AbSamples {
  clicks: readonly number[];
  conversions: readonly number[];
}

export interface AutoWeights {
  /** One per variant, 1 to 100, proportional to the probability of being best (never 0: every variant keeps traffic). */
  weights: number[];
  winnerIndex: number | null;
  /** The look these samples are at (see lookAt) when it is later than the one already taken, else null. */
  look: number | null;
}

/** The share of tests between equally converting variants that may end with a (false) winner. */
export const FALSE_WINNER_RATE = 0.05;
/** Looks at min_sample x 1, 2, 4, ... 128 clicks per variant; after the last one the weights keep adapting alone. */
export const MAX_LOOKS = 8;

/** The look a test is at: -1 until every variant has min_sample clicks, k once each has min_sample x 2^k. */
export function lookAt(clicks: readonly number[], variants: number, minSample: number): number {
  let least = Infinity;
  for (let i = 0; i < variants; i++) least = Math.min(least, clicks[i] ?? 0);
  if (variants < 2 || least < minSample) return -1;
  return Math.min(MAX_LOOKS - 1, Math.floor(Math.log2(least / minSample)));
}

/** P(best) a variant needs at look `look` to be declared the winner (alpha spending, Bonferroni over variants). */
export function winProbability(look: number, variants: number): number {
  return 1 - FALSE_WINNER_RATE / 2 ** (look + 1) / variants;
}
const DRAWS = 4000;
const SEED = 0x5eed_ab01;

/** sfc32: small, fast, and good enough for Monte-Carlo integration. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  let b = 0x9e3779b9;
  let c = 0x243f6a88;
  let d = 1;
  return () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

function normal(rand: () => number): number {
  // Box-Muller; 1 - u keeps the logarithm finite.
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

/** Marsaglia-Tsang, for shape ≥ 1 (every posterior parameter here is at least 1). */
function gamma(shape: number, rand: () => number): number {
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal(rand);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = 1 - rand();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

/** The probability of each variant having the highest conversion rate. */
export function probabilityBest(samples: AbSamples, variants: number): number[] {
  const alpha: number[] = [];
  const beta: number[] = [];
  for (let i = 0; i < variants; i++) {
    const clicks = Math.max(0, samples.clicks[i] ?? 0);
    const conversions = Math.min(clicks, Math.max(0, samples.conversions[i] ?? 0));
    alpha.push(1 + conversions);
    beta.push(1 + clicks - conversions);
  }
  const wins = new Array<number>(variants).fill(0);
  const rand = random(SEED);
  for (let draw = 0; draw < DRAWS; draw++) {
    let best = -1;
    let bestValue = -1;
    for (let i = 0; i < variants; i++) {
      const x = gamma(alpha[i]!, rand);
      const value = x / (x + gamma(beta[i]!, rand));
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    }
    wins[best]! += 1;
  }
  return wins.map((w) => w / DRAWS);
}

/**
 * Weights for the redirect and, at a look not taken yet (`lastLook` is the latest one taken, -1 for none), the
 * winning variant when the evidence clears that look's bar.
 */
export function computeAutoWeights(ab: AbTest, samples: AbSamples, lastLook = -1): AutoWeights {
  const variants = ab.variants.length;
  const p = probabilityBest(samples, variants);
  const weights = p.map((x) => Math.min(100, Math.max(1, Math.round(x * 100))));
  const look = lookAt(samples.clicks, variants, ab.auto?.min_sample ?? 1000);
  if (look <= lastLook) return { weights, winnerIndex: null, look: null };
  const leader = p.indexOf(Math.max(...p));
  return { weights, winnerIndex: p[leader]! >= winProbability(look, variants) ? leader : null, look };
}
