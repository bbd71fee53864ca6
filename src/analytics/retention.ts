// Raw click retention: a click expires (TTL on `expire_at`) after its workspace plan's raw click retention, or
// CLICK_RETENTION_DAYS when that is shorter. The plan is looked up once per workspace per minute, not per click.
import type { ClickRecord } from '../visitor/click-record.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import { effectivePlan } from '../tenancy/plans.ts';
import { DAY_MS } from './time.ts';

const CACHE_MS = 60_000;

export class ClickRetention {
  private readonly workspaces: WorkspaceStore;
  private readonly maxDays: number;
  private readonly cache = new Map<string, { days: number; until: number }>();

  constructor(workspaces: WorkspaceStore, maxDays: number) {
    this.workspaces = workspaces;
    this.maxDays = maxDays;
  }

  /** The expiry of each click of the batch, by its workspace's retention. */
  async forBatch(records: readonly ClickRecord[]): Promise<(record: ClickRecord) => Date> {
    const now = Date.now();
    const missing = [...new Set(records.map((r) => r.workspace_id))].filter((w) => (this.cache.get(w)?.until ?? 0) <= now);
    if (missing.length > 0) {
      const docs = await this.workspaces.collection.find({ _id: { $in: missing } }, { projection: { plan_id: 1, limits_override: 1 } }).toArray();
      const found = new Map(docs.map((d) => [d._id, effectivePlan(d.plan_id, d.limits_override).retention.raw_click_days]));
      for (const w of missing) this.cache.set(w, { days: Math.min(this.maxDays, found.get(w) ?? this.maxDays), until: now + CACHE_MS });
    }
    return (record) => new Date(Date.parse(record.ts) + (this.cache.get(record.workspace_id)?.days ?? this.maxDays) * DAY_MS);
  }
}
