import type { ClientSession, Collection, Db, Filter } from 'mongodb';
import { newestFirst } from '../platform/paging.ts';
import { DuplicateKeyError, isDuplicateKey } from '../platform/errors.ts';
import type { VariantConversions } from '../clicks/ab-feedback.ts';
import type { ConversionType } from './conversion.schemas.ts';

export interface ConversionDoc {
  _id: string;
  workspace_id: string;
  click_id: string;
  clicked_at: Date;
  link_id: string;
  domain: string;
  slug: string;
  type: ConversionType;
  goal: string | null;
  amount: number | null;
  currency: string | null;
  external_id: string | null;
  customer_external_id: string | null;
  metadata: Record<string, string | number | boolean | null>;
  variant_index: number | null;
  destination_id: string | null;
  country: string | null;
  device: string;
  occurred_at: Date;
  created_at: Date;
}

export interface ConversionPage {
  workspaceId: string;
  after: { created_at: Date; id: string } | null;
  limit: number;
  linkId?: string;
  type?: ConversionType;
  from?: Date;
  to?: Date;
}

/** The `conversions` collection: tenant-scoped like every store, one row per recorded conversion. */
export class ConversionStore implements VariantConversions {
  readonly collection: Collection<ConversionDoc>;
  constructor(db: Db) {
    this.collection = db.collection<ConversionDoc>('conversions');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { workspace_id: 1, created_at: -1, _id: -1 }, name: 'workspace_list' },
      { key: { workspace_id: 1, link_id: 1, created_at: -1, _id: -1 }, name: 'link_list' },
      // The de-duplication of spec-less retries: one conversion per external id and workspace.
      { key: { workspace_id: 1, external_id: 1 }, name: 'external_id_unique', unique: true, partialFilterExpression: { external_id: { $type: 'string' } } },
      // The lookup of a retried external_id: a query planner uses a partial index only when the query implies its
      // filter, which an equality does not always show, so the lookup has a plain index of its own.
      { key: { external_id: 1, workspace_id: 1 }, name: 'external_id_lookup' },
      { key: { link_id: 1, variant_index: 1 }, name: 'link_variant' },
    ]);
  }

  /** Throws DuplicateKeyError when the external id was already recorded in the workspace. */
  async insert(doc: ConversionDoc, session: ClientSession): Promise<void> {
    try {
      await this.collection.insertOne(doc, { session });
    } catch (error) {
      if (isDuplicateKey(error)) throw new DuplicateKeyError('conversion external_id already recorded', error.keyValue, error);
      throw error;
    }
  }

  findByExternalId(workspaceId: string, externalId: string): Promise<ConversionDoc | null> {
    return this.collection.findOne({ workspace_id: workspaceId, external_id: externalId });
  }

  findById(workspaceId: string, id: string): Promise<ConversionDoc | null> {
    return this.collection.findOne({ workspace_id: workspaceId, _id: id });
  }

  page(query: ConversionPage): Promise<ConversionDoc[]> {
    const and: Filter<ConversionDoc>[] = [{ workspace_id: query.workspaceId }];
    if (query.linkId !== undefined) and.push({ link_id: query.linkId });
    if (query.type !== undefined) and.push({ type: query.type });
    if (query.from !== undefined) and.push({ occurred_at: { $gte: query.from } });
    if (query.to !== undefined) and.push({ occurred_at: { $lt: query.to } });
    return newestFirst(this.collection, and, query.after, query.limit);
  }

  /** Converted clicks per variant: a click that converted more than once (a signup, then an order) counts once. */
  async perVariant(linkId: string, variants: number): Promise<number[]> {
    const rows = await this.collection
      .aggregate<{ _id: number; n: number }>([
        { $match: { link_id: linkId, variant_index: { $ne: null } } },
        { $group: { _id: { v: '$variant_index', c: '$click_id' } } },
        { $group: { _id: '$_id.v', n: { $sum: 1 } } },
      ])
      .toArray();
    const out = Array.from({ length: variants }, () => 0);
    for (const row of rows) if (Number.isInteger(row._id) && row._id >= 0 && row._id < variants) out[row._id] = row.n;
    return out;
  }
}
