import type { Collection, Db, Filter } from 'mongodb';
import type { EventType } from '../events/event-types.ts';
import type { SignatureScheme } from './webhook.schemas.ts';

/** Who owns an endpoint: a workspace (workspace key) or a partner (partner key), never both. */
export type WebhookTenant = { kind: 'workspace'; id: string } | { kind: 'partner'; id: string };

export interface WebhookDoc {
  _id: string;
  tenant_kind: 'workspace' | 'partner';
  workspace_id: string | null;
  partner_id: string | null;
  url: string;
  events: EventType[];
  name: string | null;
  status: 'active' | 'failing';
  /** How deliveries are signed; absent on endpoints created before schemes existed, which sign with `linkplane`. */
  signature_scheme?: SignatureScheme;
  /** The signing secret sealed by SecretBox (AES-256-GCM), never the secret itself. */
  secret_enc: string;
  /** The secret before the last rotation, still signing until previous_secret_expires_at. */
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
  /** Consecutive deliveries that failed their whole retry schedule; the delivery slice maintains it. */
  failure_streak: number;
  created_at: Date;
  updated_at: Date;
  secret_rotated_at: Date | null;
}

export type WebhookChanges = Partial<Pick<WebhookDoc, 'url' | 'events' | 'name' | 'status' | 'signature_scheme' | 'failure_streak' | 'secret_enc' | 'previous_secret_enc' | 'previous_secret_expires_at' | 'secret_rotated_at' | 'updated_at'>>;

/** The tenant condition every query carries: another tenant's endpoint is indistinguishable from a missing one. */
/** The scheme an endpoint signs with. */
export function schemeOf(doc: Pick<WebhookDoc, 'signature_scheme'>): SignatureScheme {
  return doc.signature_scheme ?? 'linkplane';
}

export function tenantFilter(tenant: WebhookTenant): { tenant_kind: 'workspace'; workspace_id: string } | { tenant_kind: 'partner'; partner_id: string } {
  return tenant.kind === 'workspace' ? { tenant_kind: 'workspace', workspace_id: tenant.id } : { tenant_kind: 'partner', partner_id: tenant.id };
}

export class WebhookStore {
  readonly collection: Collection<WebhookDoc>;
  constructor(db: Db) {
    this.collection = db.collection<WebhookDoc>('webhooks');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { workspace_id: 1, created_at: 1, _id: 1 }, name: 'workspace_list' },
      { key: { partner_id: 1, created_at: 1, _id: 1 }, name: 'partner_list' },
      // Fan-out: the active endpoints of a tenant subscribed to one event type (multikey on `events`).
      { key: { workspace_id: 1, status: 1, events: 1 }, name: 'workspace_fanout' },
      { key: { partner_id: 1, status: 1, events: 1 }, name: 'partner_fanout' },
    ]);
  }

  async insert(doc: WebhookDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  /** Oldest first: the list is a single page of at most the quota, so creation order is the natural one. */
  list(tenant: WebhookTenant): Promise<WebhookDoc[]> {
    return this.collection.find(this.filter(tenant)).sort({ created_at: 1, _id: 1 }).toArray();
  }

  count(tenant: WebhookTenant): Promise<number> {
    return this.collection.countDocuments(this.filter(tenant));
  }

  findById(tenant: WebhookTenant, id: string): Promise<WebhookDoc | null> {
    return this.collection.findOne({ ...this.filter(tenant), _id: id });
  }

  update(tenant: WebhookTenant, id: string, changes: WebhookChanges): Promise<WebhookDoc | null> {
    return this.collection.findOneAndUpdate({ ...this.filter(tenant), _id: id }, { $set: changes }, { returnDocument: 'after' });
  }

  async delete(tenant: WebhookTenant, id: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ ...this.filter(tenant), _id: id });
    return result.deletedCount === 1;
  }

  private filter(tenant: WebhookTenant): Filter<WebhookDoc> {
    return tenantFilter(tenant);
  }
}
