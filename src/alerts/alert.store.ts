import type { ClientSession, Collection, Db, Filter } from 'mongodb';
import { newestFirst } from '../platform/paging.ts';
import type { AlertType } from './alert.schemas.ts';

export interface AlertRuleDoc {
  _id: string;
  workspace_id: string;
  name: string;
  type: AlertType;
  threshold: number;
  window_minutes: number;
  baseline_windows: number;
  cooldown_minutes: number;
  link_id: string | null;
  channels: { emails: string[]; webhook: boolean };
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface AlertFiringDoc {
  _id: string;
  workspace_id: string;
  rule_id: string;
  rule_name: string;
  type: AlertType;
  state: 'firing' | 'resolved';
  value: number;
  last_value: number;
  threshold: number;
  message: string;
  started_at: Date;
  resolved_at: Date | null;
  acknowledged_at: Date | null;
  /** Ordering of the list: when the firing started. */
  created_at: Date;
}

export class AlertStore {
  readonly rules: Collection<AlertRuleDoc>;
  readonly firings: Collection<AlertFiringDoc>;
  constructor(db: Db) {
    this.rules = db.collection<AlertRuleDoc>('alert_rules');
    this.firings = db.collection<AlertFiringDoc>('alert_firings');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.rules.createIndexes([
        { key: { workspace_id: 1, created_at: -1, _id: -1 }, name: 'workspace_list' },
        { key: { enabled: 1, _id: 1 }, name: 'evaluation' },
      ]),
      this.firings.createIndexes([
        { key: { workspace_id: 1, created_at: -1, _id: -1 }, name: 'workspace_list' },
        // One incident at a time per rule: a second open firing cannot be written, whatever two evaluators race.
        { key: { rule_id: 1 }, name: 'one_open_firing', unique: true, partialFilterExpression: { state: 'firing' } },
        { key: { rule_id: 1, started_at: -1 }, name: 'rule_history' },
      ]),
    ]);
  }

  rulesPage(workspaceId: string, after: { created_at: Date; id: string } | null, limit: number): Promise<AlertRuleDoc[]> {
    return newestFirst(this.rules, [{ workspace_id: workspaceId }], after, limit);
  }

  findRule(workspaceId: string, id: string): Promise<AlertRuleDoc | null> {
    return this.rules.findOne({ workspace_id: workspaceId, _id: id });
  }

  firingsPage(query: { workspaceId: string; state?: 'firing' | 'resolved'; ruleId?: string; after: { created_at: Date; id: string } | null; limit: number }): Promise<AlertFiringDoc[]> {
    const and: Filter<AlertFiringDoc>[] = [{ workspace_id: query.workspaceId }];
    if (query.state !== undefined) and.push({ state: query.state });
    if (query.ruleId !== undefined) and.push({ rule_id: query.ruleId });
    return newestFirst(this.firings, and, query.after, query.limit);
  }

  findFiring(workspaceId: string, id: string): Promise<AlertFiringDoc | null> {
    return this.firings.findOne({ workspace_id: workspaceId, _id: id });
  }

  openFiring(ruleId: string): Promise<AlertFiringDoc | null> {
    return this.firings.findOne({ rule_id: ruleId, state: 'firing' });
  }

  lastFiring(ruleId: string): Promise<AlertFiringDoc | null> {
    return this.firings.find({ rule_id: ruleId }).sort({ started_at: -1 }).limit(1).next();
  }

  /** The unique index refuses a second open firing of a rule (the caller's transaction then fails as a whole). */
  async insertFiring(doc: AlertFiringDoc, session: ClientSession): Promise<void> {
    await this.firings.insertOne(doc, { session });
  }
}
