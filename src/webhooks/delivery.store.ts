import type { Collection, Db, Filter } from 'mongodb';
import type { EventType } from '../events/event-types.ts';
import { newestFirst } from '../platform/paging.ts';
import { InsertBatcher } from '../platform/insert-batcher.ts';
import { RESPONSE_BODY_CAP_BYTES } from './webhook.schemas.ts';
import { tenantFilter, type WebhookTenant } from './webhook.store.ts';

/** One delivery attempt in the log (spec 2.8); the tenant fields are copied from the endpoint so reads filter on them. */
export interface WebhookDeliveryDoc {
  /** One row per attempt: `<delivery_id>.<attempt>`. */
  _id: string;
  /** The delivery's id, the body's `id`: the same on every attempt, so receivers can de-duplicate. */
  delivery_id: string;
  webhook_id: string;
  tenant_kind: 'workspace' | 'partner';
  workspace_id: string | null;
  partner_id: string | null;
  event_id: string;
  event_type: EventType;
  attempt: number;
  created_at: Date;
  request: { headers: Record<string, string>; body: string };
  response: { status: number | null; headers: Record<string, string>; body: string } | null;
  duration_ms: number;
  outcome: 'succeeded' | 'failed' | 'pending';
  next_retry_at: Date | null;
}

/** The `webhook_deliveries` collection: the delivery log GET /webhooks/{id}/deliveries reads. */
export class WebhookDeliveryStore {
  readonly collection: Collection<WebhookDeliveryDoc>;
  /** A fan-out of one event to many endpoints logs many attempts at once: one write for those of one turn. */
  private readonly inserts: InsertBatcher<WebhookDeliveryDoc>;
  constructor(db: Db) {
    this.collection = db.collection<WebhookDeliveryDoc>('webhook_deliveries');
    this.inserts = new InsertBatcher(this.collection);
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { webhook_id: 1, created_at: -1, _id: -1 }, name: 'endpoint_log' }]);
  }

  /** Writes one attempt; the receiver's answer body is cut to the cap, whoever the writer is. */
  async record(doc: WebhookDeliveryDoc): Promise<void> {
    const response = doc.response ? { ...doc.response, body: capBody(doc.response.body) } : null;
    await this.inserts.insert({ ...doc, response });
  }

  /**
   * How many attempts of one delivery are logged: its rows are `<delivery_id>.<n>`, one id range of the primary
   * index. This, not JetStream's delivery count, numbers the next attempt: a message handed out again because the
   * platform failed (MongoDB or NATS away, a worker killed) made no attempt the receiver should be charged for.
   */
  attemptsLogged(deliveryId: string): Promise<number> {
    return this.collection.countDocuments(attemptRange(deliveryId));
  }

  /** The attempts logged, and whether one of them succeeded: read when a message is handed out again. */
  async logged(deliveryId: string): Promise<{ attempts: number; succeeded: boolean }> {
    const rows = await this.collection.find(attemptRange(deliveryId), { projection: { outcome: 1 } }).toArray();
    return { attempts: rows.length, succeeded: rows.some((row) => row.outcome === 'succeeded') };
  }

  /** The log of one endpoint, newest first, under the tenant condition as every read. */
  page(query: { tenant: WebhookTenant; webhookId: string; after: { created_at: Date; id: string } | null; limit: number }): Promise<WebhookDeliveryDoc[]> {
    const filters: Filter<WebhookDeliveryDoc>[] = [{ webhook_id: query.webhookId }, tenantFilter(query.tenant)];
    return newestFirst(this.collection, filters, query.after, query.limit);
  }

  /** A deleted endpoint's log can no longer be read by anyone, so it goes with it. */
  async deleteForEndpoint(tenant: WebhookTenant, webhookId: string): Promise<void> {
    await this.collection.deleteMany({ ...(tenantFilter(tenant) as Filter<WebhookDeliveryDoc>), webhook_id: webhookId });
  }
}

/** The rows of one delivery's attempts, `<delivery_id>.<n>`: one id range of the primary index. */
function attemptRange(deliveryId: string): Filter<WebhookDeliveryDoc> {
  return { _id: { $gt: `${deliveryId}.`, $lt: `${deliveryId}/` } };
}

/** The first RESPONSE_BODY_CAP_BYTES bytes, without splitting a UTF-8 character. */
export function capBody(body: string): string {
  const bytes = Buffer.from(body, 'utf8');
  if (bytes.length <= RESPONSE_BODY_CAP_BYTES) return body;
  let end = RESPONSE_BODY_CAP_BYTES;
  // Step back over continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
