// What travels on DELIVERIES (`deliveries.<endpoint_id>`): one message per (event, endpoint), written by the fan-out
// and by the test-delivery route, read by the delivery consumer.
import { createHash } from 'node:crypto';
import type { EventType } from '../events/event-types.ts';
import type { Nats } from '../platform/nats.ts';

/** The EVENTS message (outbox-relay `eventMessage`). */
export interface EventMessage {
  id: string;
  type: EventType;
  created_at: string;
  workspace_id: string | null;
  partner_id: string | null;
  data: Record<string, unknown>;
}

export interface DeliveryMessage {
  delivery_id: string;
  webhook_id: string;
  event: EventMessage;
  /** Set by POST /webhooks/{id}/test; such an event is not in the events log. */
  test?: true;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * `dlv_` and 20 base62 characters derived from SHA-256 of the event and endpoint ids: an event fanned out twice
 * (redelivered, or a second worker) yields the same delivery id, so receivers deduplicate by the body's `id`.
 */
export function deliveryIdFor(eventId: string, endpointId: string): string {
  let n = BigInt(`0x${createHash('sha256').update(`${eventId}\u0000${endpointId}`).digest('hex')}`);
  let out = '';
  for (let i = 0; i < 20; i++) {
    out += BASE62[Number(n % 62n)];
    n /= 62n;
  }
  return `dlv_${out}`;
}

/** Publishes one delivery; the message id makes a second publish of the same (event, endpoint) a no-op. */
export async function publishDelivery(nats: Nats, message: DeliveryMessage): Promise<void> {
  await nats.js.publish(nats.subjects.delivery(message.webhook_id), JSON.stringify(message), {
    msgID: `${message.event.id}:${message.webhook_id}`,
    timeout: 5000,
  });
}
