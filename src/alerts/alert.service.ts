import { newId } from '../platform/ids.ts';
import { NotFoundError, QuotaExceededError, ValidationError } from '../platform/errors.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { LinkStore } from '../links/link.store.ts';
import { decodeTimePosition, pageOf, timePosition, type Pagination } from '../http/cursor.ts';
import type { AlertFiringDoc, AlertRuleDoc, AlertStore } from './alert.store.ts';
import type { AlertFiring, AlertFiringListQuery, AlertRule, AlertRuleCreate, AlertRuleUpdate, AlertType } from './alert.schemas.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

export const MAX_RULES_PER_WORKSPACE = 50;
const CLICK_TYPES: ReadonlySet<AlertType> = new Set(['click_spike', 'click_drop', 'bot_share']);

export class AlertService {
  private readonly store: AlertStore;
  private readonly links: LinkStore;
  private readonly now: () => Date;
  constructor(deps: { alerts: AlertStore; links: LinkStore; now?: () => Date }) {
    this.store = deps.alerts;
    this.links = deps.links;
    this.now = deps.now ?? (() => new Date());
  }

  async create(principal: WorkspacePrincipal, input: AlertRuleCreate): Promise<AlertRule> {
    const workspaceId = principal.workspace._id;
    const now = this.now();
    const doc: AlertRuleDoc = {
      _id: newId('alr'),
      workspace_id: workspaceId,
      name: input.name,
      type: input.type,
      threshold: input.threshold,
      window_minutes: input.window_minutes ?? 60,
      baseline_windows: input.baseline_windows ?? 7,
      cooldown_minutes: input.cooldown_minutes ?? 60,
      link_id: input.link_id ?? null,
      channels: input.channels ?? { emails: [], webhook: false },
      enabled: input.enabled ?? true,
      created_at: now,
      updated_at: now,
    };
    await this.check(workspaceId, doc);
    if ((await this.store.rules.countDocuments({ workspace_id: workspaceId })) >= MAX_RULES_PER_WORKSPACE) {
      throw new QuotaExceededError('alert rules', MAX_RULES_PER_WORKSPACE);
    }
    await this.store.rules.insertOne(doc);
    return ruleView(doc);
  }

  async list(principal: WorkspacePrincipal, query: { cursor?: string; limit: number }): Promise<{ data: AlertRule[]; pagination: Pagination }> {
    const rows = await this.store.rulesPage(principal.workspace._id, decodeTimePosition(query.cursor), query.limit + 1);
    const { page, pagination } = pageOf(rows, query.limit, timePosition);
    return { data: page.map(ruleView), pagination };
  }

  async get(principal: WorkspacePrincipal, id: string): Promise<AlertRule> {
    return ruleView(await this.findRule(principal, id));
  }

  async update(principal: WorkspacePrincipal, id: string, patch: AlertRuleUpdate): Promise<AlertRule> {
    const existing = await this.findRule(principal, id);
    const merged: AlertRuleDoc = { ...existing, ...patch, updated_at: this.now() };
    await this.check(existing.workspace_id, merged);
    const updated = await this.store.rules.findOneAndReplace({ _id: id, workspace_id: existing.workspace_id }, merged, { returnDocument: 'after' });
    if (!updated) throw new NotFoundError('alert rule');
    return ruleView(updated);
  }

  /** The rule goes; its firings stay as the record of what happened (an open one is resolved). */
  async delete(principal: WorkspacePrincipal, id: string): Promise<void> {
    const result = await this.store.rules.deleteOne({ _id: id, workspace_id: principal.workspace._id });
    if (result.deletedCount !== 1) throw new NotFoundError('alert rule');
    await this.store.firings.updateMany({ rule_id: id, state: 'firing' }, { $set: { state: 'resolved', resolved_at: this.now() } });
  }

  async firings(principal: WorkspacePrincipal, query: AlertFiringListQuery): Promise<{ data: AlertFiring[]; pagination: Pagination }> {
    const rows = await this.store.firingsPage({
      workspaceId: principal.workspace._id,
      after: decodeTimePosition(query.cursor),
      limit: query.limit + 1,
      ...(query.state !== undefined ? { state: query.state } : {}),
      ...(query.rule_id !== undefined ? { ruleId: query.rule_id } : {}),
    });
    const { page, pagination } = pageOf(rows, query.limit, timePosition);
    return { data: page.map(firingView), pagination };
  }

  async firing(principal: WorkspacePrincipal, id: string): Promise<AlertFiring> {
    const doc = await this.store.findFiring(principal.workspace._id, id);
    if (!doc) throw new NotFoundError('alert firing');
    return firingView(doc);
  }

  /** Someone is on it: recorded once (acknowledging again keeps the first time); the state is unchanged. */
  async acknowledge(principal: WorkspacePrincipal, id: string): Promise<AlertFiring> {
    const workspaceId = principal.workspace._id;
    await this.store.firings.updateOne({ _id: id, workspace_id: workspaceId, acknowledged_at: null }, { $set: { acknowledged_at: this.now() } });
    return this.firing(principal, id);
  }

  private async findRule(principal: WorkspacePrincipal, id: string): Promise<AlertRuleDoc> {
    const doc = await this.store.findRule(principal.workspace._id, id);
    if (!doc) throw new NotFoundError('alert rule');
    return doc;
  }

  /** Rules the schema cannot state: each type's threshold range, and a link of this workspace. */
  private async check(workspaceId: string, rule: AlertRuleDoc): Promise<void> {
    const t = rule.threshold;
    const problem =
      rule.type === 'click_spike' && t <= 1
        ? 'must be above 1 (a multiple of the baseline)'
        : rule.type === 'click_drop' && t >= 1
          ? 'must be below 1 (a fraction of the baseline)'
          : rule.type === 'bot_share' && (t <= 0 || t > 1)
            ? 'must be a share above 0 and at most 1'
            : rule.type === 'tracked_clicks_share' && t <= 0
              ? 'must be a share above 0'
              : ['rotator_unhealthy', 'webhook_failing', 'domain_error'].includes(rule.type) && (!Number.isInteger(t) || t < 1)
                ? 'must be a whole count of at least 1'
                : null;
    if (problem) throw new ValidationError([{ path: 'threshold', message: `${problem} for ${rule.type}` }]);
    if (rule.link_id !== null) {
      if (!CLICK_TYPES.has(rule.type)) throw new ValidationError([{ path: 'link_id', message: `applies to click conditions only, not ${rule.type}` }]);
      if (!(await this.links.findById(workspaceId, rule.link_id))) throw new ValidationError([{ path: 'link_id', message: 'no such link' }]);
    }
  }
}

export function ruleView(doc: AlertRuleDoc): AlertRule {
  return {
    id: doc._id,
    name: doc.name,
    type: doc.type,
    threshold: doc.threshold,
    window_minutes: doc.window_minutes,
    baseline_windows: doc.baseline_windows,
    cooldown_minutes: doc.cooldown_minutes,
    link_id: doc.link_id,
    channels: doc.channels,
    enabled: doc.enabled,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

export function firingView(doc: AlertFiringDoc): AlertFiring {
  return {
    id: doc._id,
    rule_id: doc.rule_id,
    rule_name: doc.rule_name,
    type: doc.type,
    state: doc.state,
    value: doc.value,
    last_value: doc.last_value,
    threshold: doc.threshold,
    message: doc.message,
    started_at: doc.started_at.toISOString(),
    resolved_at: doc.resolved_at?.toISOString() ?? null,
    acknowledged_at: doc.acknowledged_at?.toISOString() ?? null,
  };
}
