import { Counter, Gauge, type Registry } from 'prom-client';

export const REDIRECT_OUTCOMES = ['redirected', 'blocked', 'not_found', 'interstitial', 'gone', 'suspended', 'preview', 'error'] as const;
export type RedirectOutcomeLabel = (typeof REDIRECT_OUTCOMES)[number];

/**
 * What SREs watch on the redirect: answers by outcome and the resolution cache's hit ratio
 * (`hit / (hit + miss + negative_hit)`). Label children are bound once: an `inc` on the hot path is then a field
 * update, not a label lookup.
 */
export class RedirectMetrics {
  private readonly outcomes: Record<RedirectOutcomeLabel, { inc(): void }>;
  private readonly cache: Record<'hit' | 'miss' | 'negative_hit', { inc(): void }>;

  constructor(registry: Registry, cacheSize: () => number) {
    const outcomes = new Counter({
      name: 'linkplane_redirects_total',
      help: 'Short-link requests by outcome (redirected, blocked, not_found, interstitial, gone, suspended, preview: a social crawler shown the link card, error)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.outcomes = Object.fromEntries(REDIRECT_OUTCOMES.map((o) => [o, outcomes.labels(o)])) as RedirectMetrics['outcomes'];
    // Every series exists from the start at 0: a ratio or rate over an outcome never seen yet is 0, not "no data".
    for (const outcome of REDIRECT_OUTCOMES) outcomes.inc({ outcome }, 0);
    const cache = new Counter({
      name: 'linkplane_redirect_cache_lookups_total',
      help: 'Link resolution cache lookups by result; hit ratio = hit / sum',
      labelNames: ['result'],
      registers: [registry],
    });
    this.cache = { hit: cache.labels('hit'), miss: cache.labels('miss'), negative_hit: cache.labels('negative_hit') };
    for (const result of ['hit', 'miss', 'negative_hit']) cache.inc({ result }, 0);
    new Gauge({
      name: 'linkplane_redirect_cache_entries',
      help: 'Links (and remembered misses) held in the resolution cache',
      registers: [registry],
      collect() {
        this.set(cacheSize());
      },
    });
  }

  outcome(label: RedirectOutcomeLabel): void {
    this.outcomes[label].inc();
  }

  cacheLookup(result: 'hit' | 'miss' | 'negative_hit'): void {
    this.cache[result].inc();
  }
}
