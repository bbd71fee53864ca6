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

export type WorkspaceEventType = (typeof WORKSPACE_EVENTS)[number];
export type PartnerEventType = (typeof PARTNER_ONLY_EVENTS)[number];
export type EventType = WorkspaceEventType | PartnerEventType;

export const EVENT_TYPES: readonly EventType[] = [...WORKSPACE_EVENTS, ...PARTNER_ONLY_EVENTS];
