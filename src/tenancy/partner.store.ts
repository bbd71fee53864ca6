import type { ClientSession, Collection, Db } from 'mongodb';

/** A processor's fees: `percent_bps` of the gross plus `fixed` (minor units); src/partner/fees.ts applies it. */
export interface FeeSchedule {
  percent_bps: number;
  fixed: number;
}

export const SUSPENDED_LINKS = ['redirect', 'suspended_page'] as const;
export type SuspendedLinks = (typeof SUSPENDED_LINKS)[number];

export interface PartnerDoc {
  _id: string;
  name: string;
  /** Requests per sliding minute for each key of the partner; null keeps the platform default. */
  rate_limit_per_minute: number | null;
  /** Where notices to the owner go (a webhook endpoint turning failing); absent or null: none on file. */
  owner_email?: string | null;
  created_at: Date;
  /** The platform plan the partner resells: the ceiling of every plan it sells. Absent: `business`. */
  platform_plan_id?: string;
  /** Client workspaces it may hold; absent or null: the platform default (PARTNER_CLIENT_QUOTA). */
  client_quota?: number | null;
  /** Client workspaces it holds: reserved before a client is created, so the quota holds under concurrency. */
  clients_count?: number;
  /** The platform's fee in basis points; absent or null: the platform default (PARTNER_PLATFORM_FEE_BPS). */
  platform_fee_bps?: number | null;
  /** What suspended clients' short links do; absent: `redirect`. */
  suspended_links?: SuspendedLinks;
  /** Days a client stays past_due before it is suspended; absent: 7. */
  grace_period_days?: number;
  /** The processor's fees when its events do not state them; absent: Stripe's 290 bps + 30. */
  processor_fee?: FeeSchedule;
  /** The Stripe endpoint secret (`whsec_…`), sealed with the SecretBox; absent: ingestion not configured. */
  stripe_secret_sealed?: string | null;
  updated_at?: Date;
}

export type PartnerSettingsChanges = Partial<Pick<PartnerDoc, 'suspended_links' | 'grace_period_days' | 'processor_fee' | 'stripe_secret_sealed' | 'updated_at'>>;

export const DEFAULT_GRACE_PERIOD_DAYS = 7;
export const DEFAULT_PROCESSOR_FEE: FeeSchedule = { percent_bps: 290, fixed: 30 };
export const DEFAULT_PLATFORM_PLAN = 'business';

export class PartnerStore {
  readonly collection: Collection<PartnerDoc>;
  constructor(db: Db) {
    this.collection = db.collection<PartnerDoc>('partners');
  }

  async insert(doc: PartnerDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  findById(id: string): Promise<PartnerDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  updateSettings(id: string, changes: PartnerSettingsChanges): Promise<PartnerDoc | null> {
    return this.collection.findOneAndUpdate({ _id: id }, { $set: changes }, { returnDocument: 'after' });
  }

  /** Takes one client slot when the partner is under `quota`; false when it is full. */
  async reserveClient(id: string, quota: number): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: id, $or: [{ clients_count: { $lt: quota } }, { clients_count: { $exists: false } }] },
      { $inc: { clients_count: 1 } },
    );
    return result.modifiedCount === 1;
  }

  async releaseClient(id: string, session?: ClientSession): Promise<void> {
    await this.collection.updateOne({ _id: id, clients_count: { $gt: 0 } }, { $inc: { clients_count: -1 } }, session ? { session } : {});
  }
}
