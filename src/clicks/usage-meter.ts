// Monthly tracked clicks per workspace (the `usage` collection) and the `click.threshold` events at 80 % and 100 %
// of the plan's `tracked_clicks_per_month` (spec 8). Each threshold is claimed in the usage row itself, inside the
// transaction that writes the event row, so it fires exactly once per workspace and month however many replicas
// ingest, and whatever is redelivered.
import { Type, type Static } from '@sinclair/typebox';
import type { Collection, Db, MongoClient } from 'mongodb';
import type { EventStore } from '../events/event.store.ts';
import { inTransaction } from '../platform/mongo.ts';
import { periodOf } from '../tenancy/usage.store.ts';
import { effectivePlan } from '../tenancy/plans.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import type { ClickRecord } from '../visitor/click-record.ts';

/** The `data` of a `click.threshold` delivery: a workspace's tracked clicks crossed a share of its plan's limit. */
export const ClickThresholdEventDataSchema = Type.Object(
  {
    workspace_id: Type.String(),
    period: Type.String({ description: 'The billing period, as `YYYY-MM`' }),
    threshold: Type.Integer({ description: 'The percentage of the limit crossed (80, 100)' }),
    limit: Type.Integer({ description: 'Tracked clicks the plan allows in the period' }),
    tracked_clicks: Type.Integer({ description: 'Tracked clicks counted so far in the period' }),
  },
  { additionalProperties: false, $id: 'ClickThresholdEventData' },
);
export type ClickThresholdEventData = Static<typeof ClickThresholdEventDataSchema>;

/** Percentages of the monthly limit that raise `click.threshold`. */
export const CLICK_THRESHOLDS = [80, 100] as const;

interface UsageRow {
  _id: string;
  workspace_id: string;
  period: string;
  tracked_clicks: number;
  /** Thresholds already announced this month. */
  thresholds_notified?: number[];
}

export interface ClickUsageOptions {
  db: Db;
  client: MongoClient;
  workspaces: WorkspaceStore;
  events: EventStore;
  /** Wakes the outbox relay after an event row is written. */
  onEvent?: () => void;
}

export class ClickUsage {
  private readonly o: ClickUsageOptions;
  private readonly usage: Collection<UsageRow>;

  constructor(options: ClickUsageOptions) {
    this.o = options;
    this.usage = options.db.collection<UsageRow>('usage');
  }

  /** A counting BatchHook: adds the batch to each workspace's month, then announces any threshold crossed. */
  readonly afterCount = async (counted: readonly ClickRecord[]): Promise<void> => {
    const increments = new Map<string, { workspaceId: string; period: string; n: number }>();
    for (const click of counted) {
      const period = periodOf(new Date(click.ts)).key;
      const key = `${click.workspace_id}:${period}`;
      const entry = increments.get(key);
      if (entry) entry.n++;
      else increments.set(key, { workspaceId: click.workspace_id, period, n: 1 });
    }
    for (const [key, { workspaceId, period, n }] of increments) {
      const row = await this.usage.findOneAndUpdate(
        { _id: key },
        { $inc: { tracked_clicks: n }, $set: { workspace_id: workspaceId, period } },
        { upsert: true, returnDocument: 'after' },
      );
      if (row) await this.announce(row);
    }
  };

  private async announce(row: UsageRow): Promise<void> {
    const notified = row.thresholds_notified ?? [];
    if (CLICK_THRESHOLDS.every((t) => notified.includes(t))) return;
    const workspace = await this.o.workspaces.findById(row.workspace_id);
    if (!workspace) return;
    const limit = effectivePlan(workspace.plan_id, workspace.limits_override, workspace.capabilities_override).limits.tracked_clicks_per_month;
    for (const threshold of CLICK_THRESHOLDS) {
      if (notified.includes(threshold) || row.tracked_clicks < Math.ceil((limit * threshold) / 100)) continue;
      const written = await inTransaction(this.o.client, async (session) => {
        const claim = await this.usage.updateOne(
          { _id: row._id, thresholds_notified: { $ne: threshold } },
          { $push: { thresholds_notified: threshold } },
          { session },
        );
        if (claim.modifiedCount === 0) return false;
        await this.o.events.append(
          {
            type: 'click.threshold',
            workspaceId: workspace._id,
            partnerId: workspace.partner_id,
            data: { workspace_id: workspace._id, period: row.period, threshold, limit, tracked_clicks: row.tracked_clicks } satisfies ClickThresholdEventData,
          },
          session,
        );
        return true;
      });
      if (written) this.o.onEvent?.();
    }
  }
}
