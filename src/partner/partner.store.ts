import type { Collection, Db } from 'mongodb';

export interface PartnerDoc {
  _id: string;
  name: string;
  /** Requests per sliding minute for each key of the partner; null keeps the platform default. */
  rate_limit_per_minute: number | null;
  /** Where notices to the owner go (a webhook endpoint turning failing); absent or null: none on file. */
  owner_email?: string | null;
  created_at: Date;
}

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
}
