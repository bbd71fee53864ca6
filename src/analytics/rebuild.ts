// `linkplane analytics rebuild`: rolls up raw clicks that are not in the rollups yet (clicks stored before the
// rollups existed, or by a deployment that ran with ANALYTICS_ROLLUPS off), through the ingester's own exactly-once
// path, so running it twice, or while the workers ingest, adds nothing twice. `full` first empties the workspace's
// rollups and marks its raw clicks as not rolled up: run that with the workers stopped, and know that clicks past
// their raw retention can no longer be counted. The conversions and revenue a raw click carries (ConversionRollup
// adds them to the click and to its cells together) go back into the emptied cells with the click itself.
import type { Collection, Db, Filter } from 'mongodb';
import type { ClickDoc } from '../clicks/click.store.ts';
import { SETTLE_AFTER_MS, type RollupStore, type RollupWriter } from './rollup.store.ts';
import { migrateLegacyRollups } from './legacy-rollups.ts';
import { fromClickDoc } from './raw-click.ts';

export interface RebuildResult {
  workspace_id: string | null;
  full: boolean;
  rollups_deleted: number;
  clicks_scanned: number;
  clicks_rolled_up: number;
}

export async function rebuildRollups(options: {
  db: Db;
  clicks: Collection<ClickDoc>;
  store: RollupStore;
  writer: RollupWriter;
  workspaceId: string | null;
  full: boolean;
  batchSize?: number;
  onProgress?: (rolledUp: number) => void;
}): Promise<RebuildResult> {
  const { clicks, store, writer, workspaceId, full } = options;
  const scope: Filter<ClickDoc> = workspaceId === null ? {} : { workspace_id: workspaceId };
  let rollupsDeleted = 0;
  // Rollups of the earlier layout first, so that a full rebuild deletes them too and a partial one adds to them.
  await migrateLegacyRollups(options.db, store);
  if (full) {
    if (workspaceId === null) rollupsDeleted = await store.deleteAll();
    else rollupsDeleted = await store.deleteWorkspace(workspaceId);
    await clicks.updateMany(scope, { $set: { rolled_up: false } });
  }
  const batchSize = options.batchSize ?? 1000;
  let scanned = 0;
  let rolledUp = 0;
  // One pass over the clicks not rolled up, a batch at a time (no index is kept on `rolled_up`: flipping it for every
  // ingested click re-keyed one, which cost the ingestion more than this scan costs a rebuild).
  const cursor = clicks.find({ rolled_up: { $in: [false, null] }, ...scope }, { batchSize });
  try {
    let page: ClickDoc[] = [];
    const roll = async (): Promise<void> => {
      scanned += page.length;
      const fresh = await writer.rollUp(page.map(fromClickDoc));
      rolledUp += fresh.length;
      // Without `full` the cells still hold every conversion (they were added whether or not the click was rolled up).
      if (full) {
        const rolled = new Set(fresh.map((click) => click.id));
        for (const doc of page) {
          if (!doc.conversions || !rolled.has(doc._id)) continue;
          await store.addConversions(fromClickDoc(doc), doc.conversions, doc.revenue ?? {});
        }
      }
      options.onProgress?.(rolledUp);
      page = [];
    };
    for await (const doc of cursor) {
      page.push(doc);
      if (page.length >= batchSize) await roll();
    }
    if (page.length > 0) await roll();
  } finally {
    await cursor.close();
  }
  // The buckets rebuilt are over: one part each, as the worker's settling job would leave them.
  await store.settle(new Date(Date.now() - SETTLE_AFTER_MS));
  return { workspace_id: workspaceId, full, rollups_deleted: rollupsDeleted, clicks_scanned: scanned, clicks_rolled_up: rolledUp };
}
