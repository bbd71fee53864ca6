// The event types an endpoint can subscribe to (spec 6.1), with what each means to a person choosing them. The
// list itself comes from the api's own declaration, so a new event type fails the typecheck here until it is described.
import { PARTNER_ONLY_EVENTS, STREAMED_EVENTS, WORKSPACE_EVENTS } from '../../../../src/events/event-types.ts';
import type { EventType } from '../../../../src/events/event-types.ts';

export type { EventType };

const DESCRIPTIONS: Record<EventType, string> = {
  'link.created': 'A link is created (dashboard, API or bulk import)',
  'link.updated': 'A link is updated',
  'link.deleted': 'A link is deleted',
  'link.clicked': 'Every click, with the visitor and the decision, up to 100 clicks per delivery (opt-in: never selected by "Select all")',
  'domain.pending_ssl': 'DNS is verified and the certificate is being issued',
  'domain.activated': 'A domain serves traffic',
  'domain.error': 'Domain provisioning failed',
  'click.threshold': '80 % and 100 % of the monthly tracked-clicks limit reached',
  'conversion.created': 'A conversion is recorded',
  'alert.fired': 'An alert rule with the webhook channel fired',
  'alert.resolved': 'A firing alert resolved',
  'workspace.subscribed': 'A client paid the first invoice of a subscription',
  'workspace.past_due': 'A client payment failed',
  'workspace.suspended': 'A client was suspended',
  'payment.succeeded': 'A client payment settled (with the fee breakdown)',
  'payment.refunded': 'A payment was refunded',
};

export interface EventChoice {
  type: EventType;
  description: string;
  partnerOnly: boolean;
  /** Chosen one by one only: "Select all" leaves it out (a click stream is a volume of its own). */
  optIn: boolean;
}

/**
 * The events a workspace endpoint may receive (with the streamed clicks); a partner's endpoints receive the workspace
 * events and the partner-only ones, not their clients' clicks.
 */
export function eventChoices(kind: 'workspace' | 'partner'): EventChoice[] {
  const types: EventType[] = kind === 'partner' ? [...WORKSPACE_EVENTS, ...PARTNER_ONLY_EVENTS] : [...WORKSPACE_EVENTS, ...STREAMED_EVENTS];
  return types.map((type) => ({
    type,
    description: DESCRIPTIONS[type],
    partnerOnly: (PARTNER_ONLY_EVENTS as readonly string[]).includes(type),
    optIn: (STREAMED_EVENTS as readonly string[]).includes(type),
  }));
}
