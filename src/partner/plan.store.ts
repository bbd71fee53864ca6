import type { Collection, Db } from 'mongodb';
import type { Capability, PlanLimits } from '../tenancy/plans.ts';

export interface PartnerPlanDoc {
  _id: string;
  partner_id: string;
  name: string;
  status: 'active' | 'archived';
  price: { amount: number; currency: string; interval: 'month' | 'year' };
  limits: PlanLimits & { rate_limit_per_minute: number };
  capabilities: Capability[];
  external_price_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The `plans` collection: plans partners sell. Every query carries the partner id. */
export class PartnerPlanStore {
  readonly collection: Collection<PartnerPlanDoc>;
  constructor(db: Db) {
    this.collection = db.collection<PartnerPlanDoc>('plans');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { partner_id: 1, created_at: 1, _id: 1 }, name: 'partner_plans' }]);
  }

  async insert(doc: PartnerPlanDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  list(partnerId: string): Promise<PartnerPlanDoc[]> {
    return this.collection.find({ partner_id: partnerId }).sort({ created_at: 1, _id: 1 }).toArray();
  }

  count(partnerId: string): Promise<number> {
    return this.collection.countDocuments({ partner_id: partnerId });
  }

  findById(partnerId: string, id: string): Promise<PartnerPlanDoc | null> {
    return this.collection.findOne({ _id: id, partner_id: partnerId });
  }

  update(partnerId: string, id: string, changes: Partial<PartnerPlanDoc>): Promise<PartnerPlanDoc | null> {
    return this.collection.findOneAndUpdate({ _id: id, partner_id: partnerId }, { $set: changes }, { returnDocument: 'after' });
  }

  async delete(partnerId: string, id: string): Promise<boolean> {
    return (await this.collection.deleteOne({ _id: id, partner_id: partnerId })).deletedCount === 1;
  }
}
