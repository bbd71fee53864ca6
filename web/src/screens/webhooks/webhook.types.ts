// The shapes GET/POST /v1/webhooks answer (src/webhooks/webhook.schemas.ts).
import type { EventType } from './event-catalogue.ts';

export interface Webhook {
  id: string;
  url: string;
  events: EventType[];
  name: string | null;
  status: 'active' | 'failing';
  created_at: string;
  updated_at: string;
  secret_rotated_at: string | null;
  previous_secret_expires_at: string | null;
}

export interface WebhookWithSecret extends Webhook {
  secret: string;
}

export interface WebhookDelivery {
  id: string;
  event_id: string;
  event_type: EventType;
  attempt: number;
  created_at: string;
  request: { headers: Record<string, string>; body: string };
  response: { status: number | null; headers: Record<string, string>; body: string } | null;
  duration_ms: number;
  outcome: 'succeeded' | 'failed' | 'pending';
  next_retry_at: string | null;
}
