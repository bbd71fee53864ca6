// The random and counted choices of the decision: the A/B variant (step 8) and the rotator destination (step 9).
import type { CompiledAbTest, CompiledDestination, CompiledRotator } from './compile.ts';

/** What the choices read from the request and the process; a subset of DecisionState. */
export interface ChoiceState {
  now: Date;
  stickyVariant: number | null;
  stickyDestination: string | null;
  counts(destinationId: string): { total: number; today: number };
  unhealthy: ReadonlySet<string>;
  nextRoundRobin(linkId: string, eligible: number): number;
  random(): number;
}

/** An index drawn with probability weight / sum(weights); weights are ≥ 1 (spec), so every index can come out. */
export function weightedIndex(weights: readonly number[], random: number): number {
  let total = 0;
  for (const weight of weights) total += weight;
  let point = random * total;
  for (let i = 0; i < weights.length; i++) {
    point -= weights[i] ?? 0;
    if (point < 0) return i;
  }
  return weights.length - 1;
}

/**
 * The auto weights apply once the warm-up is over and until the test is stopped (a `stopped_at` in the future is a
 * scheduled stop: the weights hold until then). Before the warm-up ends every variant gets its configured share,
 * so the optimiser starts from an even sample.
 */
function activeWeights(ab: CompiledAbTest, now: number): readonly number[] {
  if (!ab.autoWeights) return ab.weights;
  if (ab.warmupUntil !== null && now < ab.warmupUntil) return ab.weights;
  if (ab.stoppedAt !== null && now >= ab.stoppedAt) return ab.weights;
  return ab.autoWeights;
}

/** A declared winner serves everyone (even visitors stuck to another variant); otherwise a valid sticky variant stays. */
export function chooseVariant(ab: CompiledAbTest, state: ChoiceState): number {
  if (ab.winnerIndex !== null) return ab.winnerIndex;
  const sticky = state.stickyVariant;
  if (sticky !== null && Number.isInteger(sticky) && sticky >= 0 && sticky < ab.urls.length) return sticky;
  return weightedIndex(activeWeights(ab, state.now.getTime()), state.random());
}

function isEligible(destination: CompiledDestination, rotator: CompiledRotator, state: ChoiceState, now: number): boolean {
  if (destination.startsAt !== null && destination.startsAt > now) return false;
  if (rotator.autoDisableUnhealthy && state.unhealthy.has(destination.id)) return false;
  // Counts are only asked for when a limit needs them.
  if (destination.maxTotal !== null || destination.maxDaily !== null) {
    const counts = state.counts(destination.id);
    if (destination.maxTotal !== null && counts.total >= destination.maxTotal) return false;
    if (destination.maxDaily !== null && counts.today >= destination.maxDaily) return false;
  }
  return true;
}

/** The destination for this visitor, or null when none is eligible (the caller falls back). */
export function chooseDestination(rotator: CompiledRotator, linkId: string, state: ChoiceState): CompiledDestination | null {
  const now = state.now.getTime();
  const eligible = rotator.destinations.filter((destination) => isEligible(destination, rotator, state, now));
  if (eligible.length === 0) return null;
  if (state.stickyDestination !== null) {
    const sticky = eligible.find((destination) => destination.id === state.stickyDestination);
    if (sticky) return sticky;
  }
  switch (rotator.mode) {
    case 'weighted':
      return eligible[weightedIndex(eligible.map((destination) => destination.weight), state.random())] ?? null;
    case 'uniform':
      return eligible[Math.min(eligible.length - 1, Math.floor(state.random() * eligible.length))] ?? null;
    case 'round_robin': {
      // The counter turns over the destinations eligible now; when one drops out the rotation skips it.
      const index = state.nextRoundRobin(linkId, eligible.length);
      return eligible[((index % eligible.length) + eligible.length) % eligible.length] ?? null;
    }
  }
}
