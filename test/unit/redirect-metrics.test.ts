import { expect } from 'chai';
import { Registry } from 'prom-client';
import { RedirectMetrics } from '../../src/redirect/redirect.metrics.ts';

/** The value of one series in the registry's exposition text; undefined when the series is absent. */
async function series(registry: Registry, name: string, label: string, value: string): Promise<number | undefined> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{${label}="${value}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('redirect metrics', () => {
  it('exposes every outcome and cache result at 0 before any redirect', async () => {
    const registry = new Registry();
    new RedirectMetrics(registry, () => 0);
    expect(await series(registry, 'linkplane_redirects_total', 'outcome', 'redirected')).to.equal(0);
    expect(await series(registry, 'linkplane_redirects_total', 'outcome', 'error')).to.equal(0);
    expect(await series(registry, 'linkplane_redirect_cache_lookups_total', 'result', 'negative_hit')).to.equal(0);
  });

  it('counts outcomes and cache lookups by label, each once, across scrapes', async () => {
    const registry = new Registry();
    const metrics = new RedirectMetrics(registry, () => 7);
    for (let i = 0; i < 5; i++) metrics.outcome('redirected');
    metrics.outcome('not_found');
    for (let i = 0; i < 4; i++) metrics.cacheLookup('hit');
    metrics.cacheLookup('miss');
    expect(await series(registry, 'linkplane_redirects_total', 'outcome', 'redirected')).to.equal(5);
    expect(await series(registry, 'linkplane_redirects_total', 'outcome', 'not_found')).to.equal(1);
    expect(await series(registry, 'linkplane_redirects_total', 'outcome', 'blocked')).to.equal(0);
    expect(await series(registry, 'linkplane_redirect_cache_lookups_total', 'result', 'hit')).to.equal(4);
    // A second scrape with nothing new reads the same totals; what came since is added to them.
    expect(await series(registry, 'linkplane_redirects_total', 'outcome', 'redirected')).to.equal(5);
    metrics.outcome('redirected');
    metrics.cacheLookup('hit');
    metrics.cacheLookup('negative_hit');
    expect(await series(registry, 'linkplane_redirects_total', 'outcome', 'redirected')).to.equal(6);
    expect(await series(registry, 'linkplane_redirect_cache_lookups_total', 'result', 'hit')).to.equal(5);
    expect(await series(registry, 'linkplane_redirect_cache_lookups_total', 'result', 'negative_hit')).to.equal(1);
    expect(await series(registry, 'linkplane_redirect_cache_lookups_total', 'result', 'miss')).to.equal(1);
    expect((await registry.metrics()).split('\n')).to.include('linkplane_redirect_cache_entries 7');
  });
});
