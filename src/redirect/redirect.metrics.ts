import { Counter, Gauge, type Registry } from 'prom-client';

export const REDIRECT_OUTCOMES = ['redirected', 'blocked', 'not_found', 'interstitial', 'gone', 'suspended', 'preview', 'error'] as const;
export type RedirectOutcomeLabel = (typeof REDIRECT_OUTCOMES)[number];
const CACHE_RESULTS = ['hit', 'miss', 'negative_hit'] as const;
type CacheResult = (typeof CACHE_RESULTS)[number];

/**
 * What SREs watch on the redirect: answers by outcome and the resolution cache's hit ratio
 * (`hit / (hit + miss + negative_hit)`). Counted in plain numbers on the hot path and added to the counters when
 * they are read (`collect`, before every scrape): prom-client's `inc`, even on a child bound with `labels()`,
 * hashes and validates its labels on every call, twice per redirect.
 */
export class RedirectMetrics {
  private readonly outcomes: Record<RedirectOutcomeLabel, number> = Object.fromEntries(REDIRECT_OUTCOMES.map((o) => [o, 0])) as Record<RedirectOutcomeLabel, number>;
  private readonly cache: Record<CacheResult, number> = { hit: 0, miss: 0, negative_hit: 0 };

  constructor(registry: Registry, cacheSize: () => number) {
    const outcomes = this.outcomes;
    const outcomeCounter = new Counter({
      name: 'linkplane_redirects_total',
      help: 'Short-link requests by outcome (redirected, blocked, not_found, interstitial, gone, suspended, preview: a social crawler shown the link card, error)',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        for (const outcome of REDIRECT_OUTCOMES) {
          const n = outcomes[outcome];
          if (n === 0) continue;
          outcomes[outcome] = 0;
          this.inc({ outcome }, n);
        }
      },
    });
    // Every series exists from the start at 0: a ratio or rate over an outcome never seen yet is 0, not "no data".
    for (const outcome of REDIRECT_OUTCOMES) outcomeCounter.inc({ outcome }, 0);
    const cache = this.cache;
    const cacheCounter = new Counter({
      name: 'linkplane_redirect_cache_lookups_total',
      help: 'Link resolution cache lookups by result; hit ratio = hit / sum',
      labelNames: ['result'],
      registers: [registry],
      collect() {
        for (const result of CACHE_RESULTS) {
          const n = cache[result];
          if (n === 0) continue;
          cache[result] = 0;
          this.inc({ result }, n);
        }
      },
    });
    for (const result of CACHE_RESULTS) cacheCounter.inc({ result }, 0);
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
    this.outcomes[label]++;
  }

  cacheLookup(result: CacheResult): void {
    this.cache[result]++;
  }
}
