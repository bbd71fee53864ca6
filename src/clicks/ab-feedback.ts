// Feeds A/B counts back into links with `ab_test.auto`: the clicks per variant come from the counters (so several
// worker replicas converge on the same figures), the weights and winner from computeAutoWeights. A change of weights
// or winner is broadcast, so every redirect pod drops its cached copy of the link.
import type { Collection } from 'mongodb';
import type { LinkDoc } from '../links/link.store.ts';
import type { Invalidation } from '../platform/cache-bus.ts';
import type { ClickRecord } from './click-record.ts';
import type { ClickStore } from './click.store.ts';
import { computeAutoWeights } from './ab-auto.ts';

export interface AbFeedbackOptions {
  links: Collection<LinkDoc>;
  clicks: ClickStore;
  /** The cache bus's publish. */
  invalidate: (message: Invalidation) => Promise<void>;
  now?: () => Date;
}

export class AbFeedback {
  private readonly o: AbFeedbackOptions;

  constructor(options: AbFeedbackOptions) {
    this.o = options;
  }

  /** A BatchHook: once per link of the batch whose clicks chose a variant. */
  readonly afterBatch = async (counted: readonly ClickRecord[]): Promise<void> => {
    const linkIds = new Set<string>();
    for (const click of counted) if (click.decision.variantIndex !== null) linkIds.add(click.link_id);
    for (const linkId of linkIds) await this.updateLink(linkId);
  };

  async updateLink(linkId: string): Promise<void> {
    const link = await this.o.links.findOne({ _id: linkId }, { projection: { _id: 1, domain: 1, slug: 1, ab_test: 1, updated_at: 1 } });
    const ab = link?.ab_test;
    const auto = ab?.auto;
    if (!link || !ab || !auto || auto.stopped_at !== undefined) return;
    const clicks = await this.o.clicks.variantClicks(linkId, ab.variants.length);
    const conversions = ab.variants.map((_, i) => auto.samples?.conversions[i] ?? 0);
    const set: Record<string, unknown> = {};
    if (!sameNumbers(auto.samples?.clicks, clicks)) set['ab_test.auto.samples'] = { clicks, conversions };
    const now = (this.o.now ?? (() => new Date()))();
    const warm = auto.warmup_until === undefined || Date.parse(auto.warmup_until) <= now.getTime();
    let routingChanged = false;
    if (auto.enabled && warm && auto.winner_index === undefined) {
      const { weights, winnerIndex } = computeAutoWeights(ab, { clicks, conversions });
      if (!sameNumbers(auto.weights, weights)) {
        set['ab_test.auto.weights'] = weights;
        routingChanged = true;
      }
      if (winnerIndex !== null) {
        set['ab_test.auto.winner_index'] = winnerIndex;
        routingChanged = true;
      }
    }
    if (Object.keys(set).length === 0) return;
    // Only if the link was not edited meanwhile: the edit wins, and the next batch recomputes.
    const result = await this.o.links.updateOne({ _id: linkId, updated_at: link.updated_at }, { $set: set });
    if (routingChanged && result.modifiedCount > 0) {
      await this.o.invalidate({ kind: 'link', id: linkId, keys: [`${link.domain}/${link.slug}`] });
    }
  }
}

function sameNumbers(a: readonly number[] | undefined, b: readonly number[]): boolean {
  return a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}
