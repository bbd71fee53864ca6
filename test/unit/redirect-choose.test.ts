import { expect } from 'chai';
import type { AbTest, Rotator, RotatorDestination } from '../../src/links/link.schemas.ts';
import type { DecisionState } from '../../src/redirect/decide.ts';
import { LINK_URL, NOW, aLink, decideFor, seededRandom } from '../helpers/redirect-builders.ts';

const A = 'https://a.example/';
const B = 'https://b.example/';
const C = 'https://c.example/';
const minutes = (n: number): string => new Date(NOW.getTime() + n * 60_000).toISOString();

function anAbTest(overrides: Partial<AbTest> = {}): AbTest {
  return { enabled: true, variants: [{ url: A, weight: 50 }, { url: B, weight: 50 }], ...overrides };
}

/** Which url each of `draws` decisions sends to, with a seeded random. */
function tally(ab: AbTest, draws: number, state: Partial<DecisionState> = {}): Record<string, number> {
  const link = aLink({ ab_test: ab });
  const random = seededRandom('ab');
  const counts: Record<string, number> = {};
  for (let i = 0; i < draws; i++) {
    const outcome = decideFor(link, { random, ...state }).outcome;
    const url = outcome.kind === 'redirect' ? outcome.url : outcome.kind;
    counts[url] = (counts[url] ?? 0) + 1;
  }
  return counts;
}

function aDestination(id: string, url: string, overrides: Partial<RotatorDestination> = {}): RotatorDestination {
  return { id, url, weight: 1, active: true, ...overrides };
}

function aRotator(overrides: Partial<Rotator> = {}): Rotator {
  return {
    enabled: true,
    mode: 'weighted',
    sticky_ttl_seconds: 0,
    fallback_url: null,
    auto_disable_unhealthy: false,
    destinations: [aDestination('d1', A), aDestination('d2', B)],
    ...overrides,
  };
}

function urlOf(rotator: Rotator, state: Partial<DecisionState> = {}): string {
  const outcome = decideFor(aLink({ rotator }), state).outcome;
  if (outcome.kind !== 'redirect') throw new Error(`expected a redirect, got ${outcome.kind}`);
  return outcome.url;
}

describe('redirect choices', () => {
  describe('A/B test', () => {
    it('splits visitors by the variant weights (seeded random, 20 000 draws)', () => {
      const counts = tally(anAbTest({ variants: [{ url: A, weight: 20 }, { url: B, weight: 80 }] }), 20_000);
      expect(counts[A]! / 20_000).to.be.closeTo(0.2, 0.015);
      expect(counts[B]! / 20_000).to.be.closeTo(0.8, 0.015);
    });

    it('picks by weight: low draws the first variant, high draws the last', () => {
      const ab = anAbTest({ variants: [{ url: A, weight: 1 }, { url: B, weight: 2 }, { url: C, weight: 1 }] });
      const pick = (random: number) => decideFor(aLink({ ab_test: ab }), { random: () => random }).outcome;
      expect(pick(0)).to.deep.include({ url: A });
      expect(pick(0.26)).to.deep.include({ url: B });
      expect(pick(0.74)).to.deep.include({ url: B });
      expect(pick(0.76)).to.deep.include({ url: C });
      expect(pick(0.999999)).to.deep.include({ url: C });
    });

    it('returns the variant as sticky and in the trace', () => {
      const decision = decideFor(aLink({ ab_test: anAbTest() }), { random: () => 0.9 });
      expect(decision.sticky).to.deep.equal({ variant: 1 });
      expect(decision.outcome).to.deep.include({ kind: 'redirect', url: B, status: 302 });
      expect(decision.outcome.trace).to.include({ step: 'ab_test', variantIndex: 1 });
    });

    it('keeps a valid sticky variant, ignores one out of range', () => {
      const link = aLink({ ab_test: anAbTest() });
      expect(decideFor(link, { stickyVariant: 0, random: () => 0.9 }).outcome).to.deep.include({ url: A });
      expect(decideFor(link, { stickyVariant: 5, random: () => 0.9 }).outcome).to.deep.include({ url: B });
      expect(decideFor(link, { stickyVariant: -1, random: () => 0.1 }).outcome).to.deep.include({ url: A });
    });

    it('a winner serves every visitor, even one stuck to another variant', () => {
      const ab = anAbTest({ auto: { enabled: true, min_sample: 1000, winner_index: 1 } });
      const counts = tally(ab, 200, { stickyVariant: 0 });
      expect(counts).to.deep.equal({ [B]: 200 });
      expect(decideFor(aLink({ ab_test: ab }), { stickyVariant: 0 }).sticky).to.deep.equal({ variant: 1 });
    });

    it('ignores a winner index past the variants', () => {
      const ab = anAbTest({ auto: { enabled: true, min_sample: 1000, winner_index: 7 } });
      expect(decideFor(aLink({ ab_test: ab }), { random: () => 0.1 }).outcome).to.deep.include({ url: A });
    });

    describe('auto weights', () => {
      // Variant weights favour A; auto weights favour B: a draw of 0.5 tells which set applied.
      const variants = [{ url: A, weight: 99 }, { url: B, weight: 1 }];
      const pick = (auto: NonNullable<AbTest['auto']>) => decideFor(aLink({ ab_test: anAbTest({ variants, auto }) }), { random: () => 0.5 }).outcome;
      const base = { enabled: true, min_sample: 1000, weights: [1, 99] };

      it('apply when auto is enabled and they fit the variants', () => expect(pick(base)).to.deep.include({ url: B }));
      it('do not apply when auto is disabled', () => expect(pick({ ...base, enabled: false })).to.deep.include({ url: A }));
      it('do not apply when their count differs from the variants', () => expect(pick({ ...base, weights: [1, 99, 5] })).to.deep.include({ url: A }));
      it('do not apply during the warm-up', () => expect(pick({ ...base, warmup_until: minutes(5) })).to.deep.include({ url: A }));
      it('apply once the warm-up is over', () => expect(pick({ ...base, warmup_until: minutes(-5) })).to.deep.include({ url: B }));
      it('do not apply once the test is stopped', () => expect(pick({ ...base, stopped_at: minutes(-5) })).to.deep.include({ url: A }));
      it('apply until a scheduled stop', () => expect(pick({ ...base, stopped_at: minutes(5) })).to.deep.include({ url: B }));
    });

    it('does nothing when disabled', () => {
      const decision = decideFor(aLink({ ab_test: anAbTest({ enabled: false }) }));
      expect(decision.outcome).to.deep.include({ url: LINK_URL });
      expect(decision.sticky).to.deep.equal({});
    });

    it('takes precedence over the rotator', () => {
      const link = aLink({ ab_test: anAbTest({ variants: [{ url: C, weight: 1 }] }), rotator: aRotator() });
      expect(decideFor(link).outcome).to.deep.include({ url: C });
    });
  });

  describe('rotator', () => {
    it('weighted: draws by weight', () => {
      const rotator = aRotator({ destinations: [aDestination('d1', A, { weight: 1 }), aDestination('d2', B, { weight: 3 })] });
      expect(urlOf(rotator, { random: () => 0.2 })).to.equal(A);
      expect(urlOf(rotator, { random: () => 0.3 })).to.equal(B);
    });

    it('weighted: splits a seeded stream by weight', () => {
      const rotator = aRotator({ destinations: [aDestination('d1', A, { weight: 3 }), aDestination('d2', B, { weight: 1 })] });
      const random = seededRandom('rotator');
      let toA = 0;
      for (let i = 0; i < 10_000; i++) if (urlOf(rotator, { random }) === A) toA++;
      expect(toA / 10_000).to.be.closeTo(0.75, 0.02);
    });

    it('uniform: ignores the weights', () => {
      const rotator = aRotator({ mode: 'uniform', destinations: [aDestination('d1', A, { weight: 100 }), aDestination('d2', B, { weight: 1 }), aDestination('d3', C)] });
      expect(urlOf(rotator, { random: () => 0.1 })).to.equal(A);
      expect(urlOf(rotator, { random: () => 0.5 })).to.equal(B);
      expect(urlOf(rotator, { random: () => 0.9 })).to.equal(C);
    });

    it('round_robin: takes the index of the process counter among the eligible destinations', () => {
      const rotator = aRotator({ mode: 'round_robin', destinations: [aDestination('d1', A), aDestination('d2', B, { active: false }), aDestination('d3', C)] });
      const calls: [string, number][] = [];
      let counter = 0;
      const nextRoundRobin = (linkId: string, eligible: number) => {
        calls.push([linkId, eligible]);
        return counter++ % eligible;
      };
      expect([0, 1, 2].map(() => urlOf(rotator, { nextRoundRobin }))).to.deep.equal([A, C, A]);
      expect(calls[0]).to.deep.equal(['lnk_test0001', 2]);
    });

    it('keeps a sticky destination that is still eligible, and returns it with its TTL', () => {
      const rotator = aRotator({ sticky_ttl_seconds: 3600 });
      const decision = decideFor(aLink({ rotator }), { stickyDestination: 'd2', random: () => 0 });
      expect(decision.outcome).to.deep.include({ url: B });
      expect(decision.outcome.trace).to.include({ step: 'rotator', destinationId: 'd2', rotatorFallback: false });
      expect(decision.sticky).to.deep.equal({ destination: { id: 'd2', ttlSeconds: 3600 } });
    });

    it('chooses afresh when the sticky destination is no longer eligible', () => {
      const rotator = aRotator({ destinations: [aDestination('d1', A), aDestination('d2', B, { active: false })] });
      expect(urlOf(rotator, { stickyDestination: 'd2', random: () => 0.99 })).to.equal(A);
      expect(urlOf(rotator, { stickyDestination: 'gone', random: () => 0.99 })).to.equal(A);
    });

    it('returns no sticky destination without a TTL', () => {
      expect(decideFor(aLink({ rotator: aRotator({ sticky_ttl_seconds: 0 }) })).sticky).to.deep.equal({});
    });

    describe('eligibility (d2 would be drawn; when it is not eligible, d1 is)', () => {
      const draw = { random: () => 0.99 };
      const rows: { title: string; d2: Partial<RotatorDestination>; rotator?: Partial<Rotator>; state: Partial<DecisionState>; eligible: boolean }[] = [
        { title: 'an inactive destination is skipped', d2: { active: false }, state: {}, eligible: false },
        { title: 'max_total_clicks reached', d2: { limits: { max_total_clicks: 100 } }, state: { counts: () => ({ total: 100, today: 0 }) }, eligible: false },
        { title: 'max_total_clicks not reached', d2: { limits: { max_total_clicks: 100 } }, state: { counts: () => ({ total: 99, today: 0 }) }, eligible: true },
        { title: 'max_daily_clicks reached', d2: { limits: { max_daily_clicks: 10 } }, state: { counts: () => ({ total: 500, today: 10 }) }, eligible: false },
        { title: 'max_daily_clicks not reached', d2: { limits: { max_daily_clicks: 10 } }, state: { counts: () => ({ total: 500, today: 9 }) }, eligible: true },
        { title: 'starts_at in the future', d2: { limits: { starts_at: minutes(1) } }, state: {}, eligible: false },
        { title: 'starts_at now', d2: { limits: { starts_at: NOW.toISOString() } }, state: {}, eligible: true },
        { title: 'null limits', d2: { limits: null }, state: {}, eligible: true },
        { title: 'unhealthy with auto_disable_unhealthy', d2: {}, rotator: { auto_disable_unhealthy: true }, state: { unhealthy: new Set(['d2']) }, eligible: false },
        { title: 'unhealthy without auto_disable_unhealthy', d2: {}, rotator: { auto_disable_unhealthy: false }, state: { unhealthy: new Set(['d2']) }, eligible: true },
        { title: 'another destination unhealthy', d2: {}, rotator: { auto_disable_unhealthy: true }, state: { unhealthy: new Set(['d9']) }, eligible: true },
      ];
      for (const row of rows) {
        it(`${row.title}: ${row.eligible ? 'eligible' : 'skipped'}`, () => {
          const rotator = aRotator({ ...row.rotator, destinations: [aDestination('d1', A), aDestination('d2', B, row.d2)] });
          expect(urlOf(rotator, { ...draw, ...row.state })).to.equal(row.eligible ? B : A);
        });
      }

      it('counts are asked per destination id', () => {
        const asked: string[] = [];
        const rotator = aRotator({ destinations: [aDestination('d1', A, { limits: { max_daily_clicks: 5 } }), aDestination('d2', B, { limits: { max_total_clicks: 5 } })] });
        const counts = (id: string) => {
          asked.push(id);
          return id === 'd2' ? { total: 5, today: 0 } : { total: 0, today: 0 };
        };
        expect(urlOf(rotator, { ...draw, counts })).to.equal(A);
        expect(asked).to.have.members(['d1', 'd2']);
      });
    });

    it('with no eligible destination: goes to fallback_url', () => {
      const rotator = aRotator({ fallback_url: 'https://fallback.example/', destinations: [aDestination('d1', A, { active: false })] });
      const decision = decideFor(aLink({ rotator }));
      expect(decision.outcome).to.deep.include({ url: 'https://fallback.example/' });
      expect(decision.outcome.trace).to.include({ step: 'rotator', destinationId: null, rotatorFallback: true });
      expect(decision.sticky).to.deep.equal({});
    });

    it('with no eligible destination and no fallback_url: goes to the link url', () => {
      const rotator = aRotator({ sticky_ttl_seconds: 60, destinations: [aDestination('d1', A, { limits: { max_total_clicks: 1 } })] });
      const decision = decideFor(aLink({ rotator }), { counts: () => ({ total: 1, today: 1 }) });
      expect(decision.outcome).to.deep.include({ url: LINK_URL });
      expect(decision.outcome.trace).to.include({ rotatorFallback: true });
      expect(decision.sticky).to.deep.equal({});
    });

    it('a rotator with an eligible destination does not fall back', () => {
      const rotator = aRotator({ fallback_url: 'https://fallback.example/', destinations: [aDestination('d1', A)] });
      expect(decideFor(aLink({ rotator })).outcome.trace).to.include({ destinationId: 'd1', rotatorFallback: false });
    });

    it('does nothing when disabled', () => {
      expect(urlOf(aRotator({ enabled: false }))).to.equal(LINK_URL);
    });
  });
});
