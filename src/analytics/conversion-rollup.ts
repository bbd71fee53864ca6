// Conversions in the analytics figures: each new conversion adds 1 to the `conversions` of every cell of the click it
// is attributed to (the click's own buckets, link and dimension values), through RollupStore.addConversions.
// Wired as a ConversionService `counted` hook: called once per new conversion (a duplicate external_id is not new).
import type { Collection } from 'mongodb';
import type { ClickDoc } from '../clicks/click.store.ts';
import type { ConversionDoc } from '../conversions/conversion.store.ts';
import type { RollupStore } from './rollup.store.ts';
import { fromClickDoc } from './raw-click.ts';

export class ConversionRollup {
  private readonly rollups: RollupStore;
  private readonly clicks: Collection<ClickDoc>;

  constructor(rollups: RollupStore, clicks: Collection<ClickDoc>) {
    this.rollups = rollups;
    this.clicks = clicks;
  }

  /** Revenue stays 0 in the rollups: amounts come in several currencies, which do not add up. */
  readonly counted = async (conversion: ConversionDoc): Promise<void> => {
    const click = await this.clicks.findOne({ _id: conversion.click_id, workspace_id: conversion.workspace_id });
    if (!click) return; // past its raw retention: the conversion is kept, its click's cells cannot be found
    await this.rollups.addConversions(fromClickDoc(click), 1, 0);
  };
}
