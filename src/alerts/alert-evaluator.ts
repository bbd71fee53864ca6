// The worker's alert evaluation: one replica at a time (a lease) walks the enabled rules every interval, measures
// each condition, and moves the rule's incident: none → firing (when breached, and the cooldown since the last one
// has passed) → resolved (when no longer breached). A firing is one document per incident, opened and closed with
// its event in one transaction, and a unique index allows one open firing per rule, so repeated evaluations, two
// replicas or a crash between steps can never raise the same incident twice.
import type { Db, MongoClient } from 'mongodb';
import type { Logger } from '../platform/logger.ts';
import { inTransaction } from '../platform/mongo.ts';
import { newId } from '../platform/ids.ts';
import type { Lease } from '../platform/lease.ts';
import type { EventStore } from '../events/event.store.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import { periodOf, type UsageStore } from '../tenancy/usage.store.ts';
import { effectivePlan } from '../tenancy/plans.ts';
import type { Mailer } from '../webhooks/mailer.ts';
import type { AlertFiringDoc, AlertRuleDoc, AlertStore } from './alert.store.ts';
import { firingView } from './alert.service.ts';
import type { AnalyticsService } from '../analytics/analytics.service.ts';
import type { AnalyticsQuery } from '../analytics/analytics.schemas.ts';
import { QUARTER_MS } from '../analytics/time.ts';

/** Clicks of a workspace (or one of its links) in [from, to), and how many were not by human visitors. */
export interface ClickFigures {
  clicks(workspaceId: string, linkId: string | null, from: Date, to: Date): Promise<{ total: number; bots: number }>;
}

/**
 * The figures from the analytics rollups (the analytics query service, not a count of raw clicks). Rollups are per
 * UTC quarter-hour, so the evaluator asks for whole quarter-hours only (see windowEnd).
 */
export class AnalyticsClickFigures implements ClickFigures {
  private readonly analytics: AnalyticsService;
  private readonly workspaces: WorkspaceStore;
  constructor(analytics: AnalyticsService, workspaces: WorkspaceStore) {
    this.analytics = analytics;
    this.workspaces = workspaces;
  }

  async clicks(workspaceId: string, linkId: string | null, from: Date, to: Date): Promise<{ total: number; bots: number }> {
    const workspace = await this.workspaces.findById(workspaceId);
    if (!workspace) return { total: 0, bots: 0 };
    const plan = effectivePlan(workspace.plan_id, workspace.limits_override, workspace.capabilities_override);
    const query = { start: from.toISOString(), end: to.toISOString(), timezone: 'UTC', bots: 'include', ...(linkId === null ? {} : { link_id: linkId }) } as AnalyticsQuery;
    const summary = await this.analytics.summary({ workspaceId, plan }, query);
    return { total: summary.clicks, bots: summary.bot_clicks };
  }
}

/** Click windows end at the last whole quarter-hour (the rollups' finest bucket): an incomplete one is not compared. */
export function windowEnd(now: Date): Date {
  return new Date(Math.floor(now.getTime() / QUARTER_MS) * QUARTER_MS);
}

export interface AlertEvaluatorOptions {
  db: Db;
  client: MongoClient;
  alerts: AlertStore;
  events: EventStore;
  workspaces: WorkspaceStore;
  usage: UsageStore;
  figures: ClickFigures;
  mailer: Mailer;
  lease: Lease;
  logger: Logger;
  intervalMs: number;
  onEvent?: () => void;
  now?: () => Date;
}

interface Measure {
  value: number;
  breached: boolean;
  message: string;
}

export class AlertEvaluator {
  private readonly o: AlertEvaluatorOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  /** Set by stop(): a pass in progress ends after the rule in hand. */
  private stopping = false;

  constructor(options: AlertEvaluatorOptions) {
    this.o = options;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await this.o.lease.release().catch(() => undefined);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => {
        this.running = null;
        this.schedule(this.o.intervalMs);
      });
    }, ms);
  }

  private async tick(): Promise<void> {
    try {
      if (await this.o.lease.acquire()) await this.evaluateAll();
    } catch (error) {
      this.o.logger.error({ err: error }, 'alert evaluation failed');
    }
  }

  /** One pass over every enabled rule; a rule that fails is logged and the others go on. */
  async evaluateAll(at?: Date): Promise<void> {
    const rules = this.o.alerts.rules.find({ enabled: true }).sort({ _id: 1 });
    for await (const rule of rules) {
      if (this.stopping) break;
      try {
        await this.evaluate(rule, at);
      } catch (error) {
        this.o.logger.error({ err: error, rule: rule._id }, 'alert rule evaluation failed');
      }
    }
  }

  async evaluate(rule: AlertRuleDoc, at?: Date): Promise<void> {
    const now = at ?? this.now();
    const measure = await this.measure(rule, now);
    const open = await this.o.alerts.openFiring(rule._id);
    if (open) {
      if (measure.breached) await this.o.alerts.firings.updateOne({ _id: open._id }, { $set: { last_value: measure.value } });
      else await this.resolve(rule, open, measure, now);
      return;
    }
    if (!measure.breached) return;
    const last = await this.o.alerts.lastFiring(rule._id);
    if (last && now.getTime() - last.started_at.getTime() < rule.cooldown_minutes * 60_000) return;
    await this.fire(rule, measure, now);
  }

  private async fire(rule: AlertRuleDoc, measure: Measure, now: Date): Promise<void> {
    const firing: AlertFiringDoc = {
      _id: newId('alf'),
      workspace_id: rule.workspace_id,
      rule_id: rule._id,
      rule_name: rule.name,
      type: rule.type,
      state: 'firing',
      value: measure.value,
      last_value: measure.value,
      threshold: rule.threshold,
      message: measure.message,
      started_at: now,
      resolved_at: null,
      acknowledged_at: null,
      created_at: now,
    };
    const partnerId = (await this.o.workspaces.findById(rule.workspace_id))?.partner_id ?? null;
    await inTransaction(this.o.client, async (session) => {
      await this.o.alerts.insertFiring(firing, session);
      if (rule.channels.webhook) {
        await this.o.events.append({ type: 'alert.fired', workspaceId: rule.workspace_id, partnerId, data: firingView(firing) }, session, now);
      }
    });
    if (rule.channels.webhook) this.o.onEvent?.();
    await this.mail(rule, `[Linkplane] Alert firing: ${rule.name}`, `${measure.message}\n\nFiring ${firing._id} since ${now.toISOString()}.`);
  }

  private async resolve(rule: AlertRuleDoc, open: AlertFiringDoc, measure: Measure, now: Date): Promise<void> {
    const partnerId = (await this.o.workspaces.findById(rule.workspace_id))?.partner_id ?? null;
    const resolved = await inTransaction(this.o.client, async (session) => {
      const doc = await this.o.alerts.firings.findOneAndUpdate(
        { _id: open._id, state: 'firing' },
        { $set: { state: 'resolved', resolved_at: now, last_value: measure.value } },
        { returnDocument: 'after', session },
      );
      if (doc && rule.channels.webhook) {
        await this.o.events.append({ type: 'alert.resolved', workspaceId: rule.workspace_id, partnerId, data: firingView(doc) }, session, now);
      }
      return doc;
    });
    if (!resolved) return;
    if (rule.channels.webhook) this.o.onEvent?.();
    await this.mail(rule, `[Linkplane] Alert resolved: ${rule.name}`, `${measure.message}\n\nFiring ${open._id} resolved at ${now.toISOString()}.`);
  }

  /** E-mail is best effort: the firing is recorded whatever the mail server says. */
  private async mail(rule: AlertRuleDoc, subject: string, text: string): Promise<void> {
    if (rule.channels.emails.length === 0) return;
    if (!this.o.mailer.configured) {
      this.o.logger.warn({ rule: rule._id }, 'alert e-mail not sent: no SMTP_URL configured');
      return;
    }
    try {
      await this.o.mailer.send(rule.channels.emails, subject, text);
    } catch (error) {
      this.o.logger.error({ err: error, rule: rule._id }, 'alert e-mail failed');
    }
  }

  private async measure(rule: AlertRuleDoc, now: Date): Promise<Measure> {
    const ws = rule.workspace_id;
    const windowMs = rule.window_minutes * 60_000;
    const t = rule.threshold;
    switch (rule.type) {
      case 'click_spike':
      case 'click_drop': {
        const end = windowEnd(now);
        const from = new Date(end.getTime() - windowMs);
        const current = (await this.o.figures.clicks(ws, rule.link_id, from, end)).total;
        const before = (await this.o.figures.clicks(ws, rule.link_id, new Date(from.getTime() - windowMs * rule.baseline_windows), from)).total;
        const baseline = before / rule.baseline_windows;
        const counts = `${current} clicks in the ${rule.window_minutes} min to ${end.toISOString()} against a baseline of ${round(baseline)}`;
        if (rule.type === 'click_spike') {
          const value = round(current / Math.max(baseline, 1));
          return { value, breached: value >= t, message: `Click spike: ${counts} (${value}x, threshold ${t}x).` };
        }
        const value = baseline === 0 ? 1 : round(current / baseline);
        return { value, breached: value <= t, message: `Click drop: ${counts} (${value}x, threshold ${t}x).` };
      }
      case 'bot_share': {
        const end = windowEnd(now);
        const { total, bots } = await this.o.figures.clicks(ws, rule.link_id, new Date(end.getTime() - windowMs), end);
        const value = total === 0 ? 0 : round(bots / total);
        return { value, breached: value >= t, message: `Bot share: ${bots} of ${total} clicks in the ${rule.window_minutes} min to ${end.toISOString()} were not human (${value}, threshold ${t}).` };
      }
      case 'rotator_unhealthy': {
        const links = await this.o.db.collection('links').find({ workspace_id: ws, rotator: { $ne: null } }, { projection: { _id: 1 } }).toArray();
        const value = links.length === 0 ? 0 : await this.o.db.collection('rotator_health').countDocuments({ link_id: { $in: links.map((l) => l._id) }, healthy: false });
        return { value, breached: value >= t, message: `${value} rotator destination(s) unhealthy (threshold ${t}).` };
      }
      case 'webhook_failing': {
        const value = await this.o.db.collection('webhooks').countDocuments({ workspace_id: ws, status: 'failing' });
        return { value, breached: value >= t, message: `${value} webhook endpoint(s) failing (threshold ${t}).` };
      }
      case 'domain_error': {
        const value = await this.o.db.collection('domains').countDocuments({ workspace_id: ws, status: 'error' });
        return { value, breached: value >= t, message: `${value} custom domain(s) in error (threshold ${t}).` };
      }
      case 'tracked_clicks_share': {
        const workspace = await this.o.workspaces.findById(ws);
        const limit = workspace ? effectivePlan(workspace.plan_id, workspace.limits_override, workspace.capabilities_override).limits.tracked_clicks_per_month : 0;
        const used = await this.o.usage.trackedClicks(ws, periodOf(now).key);
        const value = limit === 0 ? 0 : round(used / limit);
        return { value, breached: value >= t, message: `${used} of ${limit} tracked clicks this month (${value}, threshold ${t}).` };
      }
    }
  }

  private now(): Date {
    return (this.o.now ?? (() => new Date()))();
  }
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
