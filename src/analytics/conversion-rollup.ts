// Conversions in the analytics figures: each new conversion adds 1 to the `conversions` of every cell of the click it
// is attributed to (the click's own buckets, link and dimension values), through RollupStore.addConversions, and its
// amount to the cells' revenue in its currency (integer minor units per ISO currency: currencies never add up).
// The raw click gets the same increments (`conversions`, `revenue.<currency>`) for the CSV export, in the same
// transaction: the two never disagree.
// Wired as a ConversionService `counted` hook: called once per new conversion (a duplicate external_id is not new),
// inside the conversion's own transaction.
import type { ClientSession, Collection, MongoClient } from 'mongodb';
import type { ClickDoc } from '../clicks/click.store.ts';
import type { ConversionDoc } from '../conversions/conversion.store.ts';
import { inTransaction } from '../platform/mongo.ts';
import type { Revenue, RollupStore } from './rollup.store.ts';
import { fromClickDoc } from './raw-click.ts';

export class ConversionRollup {
  private readonly client: MongoClient;
  private readonly rollups: RollupStore;
  private readonly clicks: Collection<ClickDoc>;

  constructor(client: MongoClient, rollups: RollupStore, clicks: Collection<ClickDoc>) {
    this.client = client;
    this.rollups = rollups;
    this.clicks = clicks;
  }

  /** Inside the caller's transaction when it gives its session (the conversion's own), else in one of its own. */
  readonly counted = async (conversion: Pick<ConversionDoc, 'click_id' | 'workspace_id' | 'amount' | 'currency'>, session?: ClientSession): Promise<void> => {
    if (session) return this.add(conversion, session);
    await inTransaction(this.client, (own) => this.add(conversion, own));
  };

  private async add(conversion: Pick<ConversionDoc, 'click_id' | 'workspace_id' | 'amount' | 'currency'>, session: ClientSession): Promise<void> {
    const revenue: Revenue = conversion.amount !== null && conversion.currency !== null && conversion.amount > 0 ? { [conversion.currency]: conversion.amount } : {};
    const $inc: Record<string, number> = { conversions: 1 };
    for (const [currency, minor] of Object.entries(revenue)) $inc[`revenue.${currency}`] = minor;
    const click = await this.clicks.findOneAndUpdate({ _id: conversion.click_id, workspace_id: conversion.workspace_id }, { $inc }, { session, returnDocument: 'before' });
    if (!click) return; // past its raw retention: the conversion is kept, its click's cells cannot be found
    await this.rollups.addConversions(fromClickDoc(click), 1, revenue, session);
  }
}
