// The client subscription state machine (DESIGN: Partner billing). Pure: the billing service feeds it triggers
// (processor events, recorded payments, the dunning sweep, the partner's hand) and writes what it answers.
//
//   pending ──paid──▶ subscribed ──payment failed──▶ past_due ──paid──▶ subscribed
//                                                   past_due ──grace elapsed / processor "unpaid"──▶ suspended
//   pending | subscribed | past_due ──suspend by hand──▶ suspended
//   suspended ──paid (unless suspended by hand) / reactivate by hand──▶ subscribed
//   any ──subscription deleted / processor "canceled"──▶ canceled ──reactivate by hand──▶ subscribed

export const SUBSCRIPTION_STATES = ['pending', 'subscribed', 'past_due', 'suspended', 'canceled'] as const;
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number];
export const SUSPEND_REASONS = ['dunning', 'processor', 'manual'] as const;
export type SuspendReason = (typeof SUSPEND_REASONS)[number];

export interface Subscription {
  state: SubscriptionState;
  /** When the state last changed. */
  changed_at: Date;
  /** When the client entered past_due (the grace period runs from here); null otherwise. */
  past_due_since: Date | null;
  suspended_reason: SuspendReason | null;
  /** The processor's subscription id, when events have named one. */
  external_subscription_id: string | null;
  /**
   * `created` (Unix seconds) of the newest processor event applied to the state: an older event arriving late
   * never moves the state back (its money still reaches the ledger).
   */
  processor_event_at: number;
}

export type Trigger =
  | { kind: 'paid' }
  | { kind: 'payment_failed' }
  | { kind: 'grace_elapsed' }
  | { kind: 'suspend' }
  | { kind: 'reactivate' }
  | { kind: 'processor_status'; status: string }
  | { kind: 'canceled' };

export interface Transition {
  from: SubscriptionState;
  to: SubscriptionState;
  reason: SuspendReason | null;
}

export function initialSubscription(now: Date): Subscription {
  return { state: 'pending', changed_at: now, past_due_since: null, suspended_reason: null, external_subscription_id: null, processor_event_at: 0 };
}

/** Where a trigger leads from the current state; null when it changes nothing (or is not allowed there). */
export function transition(current: Pick<Subscription, 'state' | 'suspended_reason'>, trigger: Trigger): Transition | null {
  const from = current.state;
  const to = (state: SubscriptionState, reason: SuspendReason | null = null): Transition | null =>
    state === from && reason === current.suspended_reason ? null : { from, to: state, reason };
  switch (trigger.kind) {
    case 'paid':
      if (from === 'canceled' || (from === 'suspended' && current.suspended_reason === 'manual')) return null;
      return to('subscribed');
    case 'payment_failed':
      return from === 'pending' || from === 'subscribed' ? to('past_due') : null;
    case 'grace_elapsed':
      return from === 'past_due' ? to('suspended', 'dunning') : null;
    case 'suspend':
      return from === 'canceled' || from === 'suspended' ? null : to('suspended', 'manual');
    case 'reactivate':
      return from === 'suspended' || from === 'canceled' ? to('subscribed') : null;
    case 'canceled':
      return to('canceled');
    case 'processor_status':
      return processorStatus(current, trigger.status, to);
  }
}

/** A Stripe subscription `status` read as a trigger. */
function processorStatus(
  current: Pick<Subscription, 'state' | 'suspended_reason'>,
  status: string,
  to: (state: SubscriptionState, reason?: SuspendReason | null) => Transition | null,
): Transition | null {
  switch (status) {
    case 'active':
    case 'trialing':
      return transition(current, { kind: 'paid' });
    case 'past_due':
      return transition(current, { kind: 'payment_failed' });
    case 'unpaid':
      return current.state === 'past_due' || current.state === 'subscribed' ? to('suspended', 'processor') : null;
    case 'canceled':
    case 'incomplete_expired':
      return to('canceled');
    default:
      // incomplete, paused: nothing this machine models.
      return null;
  }
}

/** The partner-only events announcing a state (named in src/events/event-types.ts, whose type the outbox checks). */
export type SubscriptionEventType = 'workspace.subscribed' | 'workspace.past_due' | 'workspace.suspended';

/** The partner-only event announcing a new state, if it has one. */
export function eventFor(state: SubscriptionState): SubscriptionEventType | null {
  switch (state) {
    case 'subscribed':
      return 'workspace.subscribed';
    case 'past_due':
      return 'workspace.past_due';
    case 'suspended':
      return 'workspace.suspended';
    default:
      return null;
  }
}

/** States in which the client's keys may not write (and its links follow the partner's suspended-links setting). */
export function isInactive(state: SubscriptionState | undefined): boolean {
  return state === 'suspended' || state === 'canceled';
}
