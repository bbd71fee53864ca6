// Feeds A/B counts back into links with `ab_test.auto`: the clicks per variant come from the counters and the
// converted clicks per variant from the conversions (so several worker and api replicas converge on the same
// figures), the weights and winner from computeAutoWeights. A change of weights or winner is broadcast, so every
// redirect pod drops its cached copy of the link; a declared winner is a link change: `stopped_at` is set, and
// `link.updated` is written with it through the outbox, once.
import type { Collection, MongoClient } from 'mongodb';
import type { LinkDoc } from '../links/link.store.ts';
import type { LinkEventData } from '../links/link.schemas.ts';
import type { Invalidation } from '../platform/cache-bus.ts';
import { inTransaction } from '../platform/mongo.ts';
import type { EventStore } from '../events/event.store.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import type { ClickRecord } from '../visitor/click-record.ts';
import type { ClickStore } from './click.store.ts';
import { computeAutoWeights } from './ab-auto.ts';

/** Converted clicks per variant index of a link (a click that converted several times counts once). */
export interface VariantConversions {
  perVariant(linkId: string, variants: number): Promise<number[]>;
}

export interface AbFeedbackOptions {
  client: MongoClient;
  links: Collection<LinkDoc>;
  clicks: ClickStore;
  conversions: VariantConversions;
  events: EventStore;
  workspaces: WorkspaceStore;
  /** The cache bus's publish. */
  invalidate: (message: Invalidation) => Promise<void>;
  /** Wakes the outbox relay when it runs in this process. */
  onEvent?: () => void;
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
    const link = await this.o.links.findOne(
      { _id: linkId },
      { projection: { _id: 1, workspace_id: 1, domain: 1, slug: 1, url: 1, ab_test: 1, ab_last_look: 1, updated_at: 1 } },
    );
    const ab = link?.ab_test;
    const auto = ab?.auto;
    if (!link || !ab || !auto || auto.stopped_at !== undefined) return;
    const [clicks, conversions] = await Promise.all([
      this.o.clicks.variantClicks(linkId, ab.variants.length),
      this.o.conversions.perVariant(linkId, ab.variants.length),
    ]);
    const set: Record<string, unknown> = {};
    if (!sameNumbers(auto.samples?.clicks, clicks) || !sameNumbers(auto.samples?.conversions, conversions)) {
      set['ab_test.auto.samples'] = { clicks, conversions };
    }
    const now = (this.o.now ?? (() => new Date()))();
    const warm = auto.warmup_until === undefined || Date.parse(auto.warmup_until) <= now.getTime();
    let routingChanged = false;
    let winner: number | null = null;
    if (auto.enabled && warm && auto.winner_index === undefined) {
      const decided = computeAutoWeights(ab, { clicks, conversions }, link.ab_last_look ?? -1);
      if (!sameNumbers(auto.weights, decided.weights)) {
        set['ab_test.auto.weights'] = decided.weights;
        routingChanged = true;
      }
      if (decided.look !== null) set.ab_last_look = decided.look;
      if (decided.winnerIndex !== null) {
        winner = decided.winnerIndex;
        set['ab_test.auto.winner_index'] = winner;
        set['ab_test.auto.stopped_at'] = now.toISOString();
        set.updated_at = now;
        routingChanged = true;
      }
    }
    if (Object.keys(set).length === 0) return;
    // Only if the link was not edited meanwhile: the edit wins, and the next batch recomputes. Two replicas
    // deciding the same winner race on updated_at, which the winner moves: one of them writes it and its event.
    const filter = { _id: linkId, updated_at: link.updated_at };
    let modified: boolean;
    if (winner === null) {
      modified = (await this.o.links.updateOne(filter, { $set: set })).modifiedCount > 0;
    } else {
      const partnerId = (await this.o.workspaces.findById(link.workspace_id))?.partner_id ?? null;
      const winnerIndex = winner;
      modified = await inTransaction(this.o.client, async (session) => {
        if ((await this.o.links.updateOne(filter, { $set: set }, { session })).modifiedCount === 0) return false;
        await this.o.events.append(
          {
            type: 'link.updated',
            workspaceId: link.workspace_id,
            partnerId,
            data: {
              id: link._id,
              domain: link.domain,
              slug: link.slug,
              url: link.url,
              changed: ['ab_test'],
              ab_test: { winner_index: winnerIndex, stopped_at: now.toISOString(), samples: { clicks, conversions } },
            } satisfies LinkEventData,
          },
          session,
          now,
        );
        return true;
      });
      if (modified) this.o.onEvent?.();
    }
    if (routingChanged && modified) {
      await this.o.invalidate({ kind: 'link', id: linkId, keys: [`${link.domain}/${link.slug}`] });
    }
  }
}

function sameNumbers(a: readonly number[] | undefined, b: readonly number[]): boolean {
  return a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}
