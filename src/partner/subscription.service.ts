import type { ClientSession } from 'mongodb';
import type { EventStore } from '../events/event.store.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { WorkspaceDoc, WorkspaceStore } from '../tenancy/workspace.store.ts';
import type { PartnerDoc } from '../tenancy/partner.store.ts';
import { eventFor, initialSubscription, isInactive, transition, type Subscription, type Transition, type Trigger } from '../tenancy/subscription.ts';

export interface ApplyOptions {
  now: Date;
  /** `created` of the processor event behind the trigger: an event older than the last one applied moves nothing. */
  processorEventAt?: number;
  externalSubscriptionId?: string | null;
}

export interface Applied {
  transition: Transition | null;
  client: WorkspaceDoc;
}

/** The payload of workspace.subscribed / past_due / suspended. */
export function subscriptionEventData(client: WorkspaceDoc, t: Transition, at: Date): Record<string, unknown> {
  return {
    client_id: client._id,
    name: client.name,
    plan_id: client.partner_plan_id ?? null,
    billing_customer_id: client.billing_customer_id ?? null,
    state: t.to,
    previous_state: t.from,
    reason: t.to === 'suspended' ? t.reason : null,
    changed_at: at.toISOString(),
  };
}

/**
 * Writes subscription transitions: the client's new state, its event in the outbox (same transaction), and, once
 * committed, the cache broadcast that makes keys refuse writes and the redirect apply the suspended-links setting.
 */
export class SubscriptionWriter {
  private readonly workspaces: WorkspaceStore;
  private readonly events: EventStore;
  private readonly bus: CacheBus | null;

  constructor(deps: { workspaces: WorkspaceStore; events: EventStore; bus: CacheBus | null }) {
    this.workspaces = deps.workspaces;
    this.events = deps.events;
    this.bus = deps.bus;
  }

  /** Inside the caller's transaction. Call `announce` with the result after it commits. */
  async apply(client: WorkspaceDoc, partner: PartnerDoc, trigger: Trigger, session: ClientSession, options: ApplyOptions): Promise<Applied> {
    const current: Subscription = client.subscription ?? initialSubscription(client.created_at);
    const at = options.processorEventAt;
    if (at !== undefined && at < current.processor_event_at) return { transition: null, client };
    const t = transition(current, trigger);
    const next: Subscription = {
      ...current,
      ...(at !== undefined ? { processor_event_at: at } : {}),
      ...(options.externalSubscriptionId ? { external_subscription_id: options.externalSubscriptionId } : {}),
    };
    if (t) {
      next.state = t.to;
      next.changed_at = options.now;
      next.suspended_reason = t.to === 'suspended' ? t.reason : null;
      next.past_due_since = t.to === 'past_due' ? options.now : t.to === 'suspended' ? current.past_due_since : null;
    }
    const unchanged = JSON.stringify(next) === JSON.stringify(current);
    if (unchanged) return { transition: null, client };
    const updated = await this.workspaces.collection.findOneAndUpdate(
      { _id: client._id, 'subscription.state': current.state },
      { $set: { subscription: next, redirect_suspended: isInactive(next.state) && partner.suspended_links === 'suspended_page' } },
      { session, returnDocument: 'after' },
    );
    if (!updated && client.subscription) return { transition: null, client };
    const after = updated ?? (await this.initialise(client, next, partner, session));
    if (t) {
      const type = eventFor(t.to);
      if (type) await this.events.append({ type, workspaceId: client._id, partnerId: partner._id, data: subscriptionEventData(after, t, options.now) }, session, options.now);
    }
    return { transition: t, client: after };
  }

  /** A client created before subscriptions existed has none stored: the first write creates it. */
  private async initialise(client: WorkspaceDoc, next: Subscription, partner: PartnerDoc, session: ClientSession): Promise<WorkspaceDoc> {
    const doc = await this.workspaces.collection.findOneAndUpdate(
      { _id: client._id, subscription: { $exists: false } },
      { $set: { subscription: next, redirect_suspended: isInactive(next.state) && partner.suspended_links === 'suspended_page' } },
      { session, returnDocument: 'after' },
    );
    return doc ?? client;
  }

  /** After the commit: every api pod's key cache and every redirect pod's settings cache drop the client. */
  async announce(applied: Applied | null): Promise<void> {
    if (applied?.transition) await this.bus?.publish({ kind: 'workspace', id: applied.client._id });
  }
}
