import type { Collection, Db } from 'mongodb';
import type { Capability, PlanLimits } from './plans.ts';
import type { Rule } from '../rules/rule.schemas.ts';
import type { Subscription } from './subscription.ts';

export interface WorkspaceDoc {
  _id: string;
  name: string;
  plan_id: string;
  /** The partner that owns this workspace as a client, if any. */
  partner_id: string | null;
  limits_override: Partial<PlanLimits> | null;
  /** Where notices to the owner go (a webhook endpoint turning failing); absent or null: none on file. */
  owner_email?: string | null;
  created_at: Date;
  /** Redirect settings (PATCH /workspace): absent until first set, read with the defaults of workspace.schemas.ts. */
  rules?: Rule[];
  conversion_tracking?: boolean;
  attribution_window_days?: number;
  settings_updated_at?: Date;
  /** A partner plan's capabilities, replacing the catalogue plan's; absent or null: the catalogue's. */
  capabilities_override?: Capability[] | null;
  /** Partner clients: the partner plan they are on (absent or null: none yet) and their subscription. */
  partner_plan_id?: string | null;
  subscription?: Subscription;
  /** The client's customer id at the partner's payment processor (Stripe `cus_…`): how its events find the client. */
  billing_customer_id?: string | null;
  metadata?: Record<string, string>;
  /** True while the client is inactive and its partner answers its links with the suspended page. */
  redirect_suspended?: boolean;
  /** IANA time zone analytics answer in when a request names none; absent: UTC. */
  timezone?: string;
  /** Saved UTM parameter sets offered in the link editor (PATCH /workspace); absent: none. */
  utm_templates?: UtmTemplateDoc[];
}

/** A named set of `utm_*` parameters, stored as given (the names are the five of the links API). */
export interface UtmTemplateDoc {
  name: string;
  utm: Record<string, string>;
}

/** Days a click id stays attributable when the workspace has not set `attribution_window_days`. */
export const DEFAULT_ATTRIBUTION_WINDOW_DAYS = 30;

export type WorkspaceSettingsChanges = Partial<Pick<WorkspaceDoc, 'name' | 'owner_email' | 'utm_templates' | 'rules' | 'conversion_tracking' | 'attribution_window_days' | 'timezone' | 'settings_updated_at'>>;

export class WorkspaceStore {
  readonly collection: Collection<WorkspaceDoc>;
  constructor(db: Db) {
    this.collection = db.collection<WorkspaceDoc>('workspaces');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { partner_id: 1, _id: 1 }, name: 'partner_clients' },
      // Processor events find a client by its billing customer id, unique within its partner.
      {
        key: { partner_id: 1, billing_customer_id: 1 },
        name: 'partner_billing_customer',
        unique: true,
        partialFilterExpression: { billing_customer_id: { $type: 'string' } },
      },
      // The same lookup for stores whose planner does not use partial indexes.
      { key: { billing_customer_id: 1, partner_id: 1 }, name: 'billing_customer_lookup' },
      // The dunning sweep: past_due clients whose grace may have run out.
      { key: { 'subscription.state': 1, 'subscription.past_due_since': 1 }, name: 'dunning' },
    ]);
  }

  async insert(doc: WorkspaceDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  findById(id: string): Promise<WorkspaceDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  updateSettings(id: string, changes: WorkspaceSettingsChanges): Promise<WorkspaceDoc | null> {
    return this.collection.findOneAndUpdate({ _id: id }, { $set: changes }, { returnDocument: 'after' });
  }

  async isEmpty(): Promise<boolean> {
    return (await this.collection.findOne({}, { projection: { _id: 1 } })) === null;
  }
}

/** Client workspaces of a partner in `_id` order (the stable identifier order GET /partner/clients promises). */
export function clientPage(store: WorkspaceStore, partnerId: string, after: string | null, limit: number): Promise<WorkspaceDoc[]> {
  const filter = after === null ? { partner_id: partnerId } : { partner_id: partnerId, _id: { $gt: after } };
  return store.collection.find(filter).sort({ _id: 1 }).limit(limit).toArray();
}
