// The event types of spec 6.1 and who may receive them.

export const WORKSPACE_EVENTS = [
  'link.created',
  'link.updated',
  'link.deleted',
  'domain.pending_ssl',
  'domain.activated',
  'domain.error',
  'click.threshold',
  'conversion.created',
  // Not in spec 6.1: an alert rule with the webhook channel fired, or its firing resolved (data: the firing).
  'alert.fired',
  'alert.resolved',
] as const;

export const PARTNER_ONLY_EVENTS = [
  'workspace.subscribed',
  'workspace.past_due',
  'workspace.suspended',
  'payment.succeeded',
  'payment.refunded',
] as const;

/**
 * Not in spec 6.1: clicks streamed to webhook endpoints, a batch of clicks per delivery (src/clicks/click-webhooks.ts).
 * Opt-in: an endpoint receives them only when it lists the type itself (nothing selects "every event" for it, see
 * docs/webhooks.md); workspace endpoints only; never in the event log (GET /events), which they would flood.
 */
export const STREAMED_EVENTS = ['link.clicked'] as const;

export type WorkspaceEventType = (typeof WORKSPACE_EVENTS)[number];
export type PartnerEventType = (typeof PARTNER_ONLY_EVENTS)[number];
export type StreamedEventType = (typeof STREAMED_EVENTS)[number];
export type LoggedEventType = WorkspaceEventType | PartnerEventType;
export type EventType = LoggedEventType | StreamedEventType;

export const EVENT_TYPES: readonly EventType[] = [...WORKSPACE_EVENTS, ...STREAMED_EVENTS, ...PARTNER_ONLY_EVENTS];
/** What the outbox writes and GET /events lists. */
export const LOGGED_EVENT_TYPES: readonly LoggedEventType[] = [...WORKSPACE_EVENTS, ...PARTNER_ONLY_EVENTS];
