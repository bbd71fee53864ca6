import { newId } from '../platform/ids.ts';
import { NotFoundError, ValidationError } from '../platform/errors.ts';
import type { Principal } from '../keys/key.service.ts';
import { effectivePlan, planById, PLAN_IDS } from './plans.ts';
import type { WorkspaceDoc, WorkspaceStore } from './workspace.store.ts';
import { periodOf, type UsageStore } from './usage.store.ts';
import type { WorkspaceProfile } from './workspace.schemas.ts';
import type { PartnerStore } from '../partner/partner.store.ts';
import { ownerEmail } from '../platform/email.ts';

export class WorkspaceService {
  private readonly workspaces: WorkspaceStore;
  private readonly partners: PartnerStore;
  private readonly usage: UsageStore;
  private readonly defaultRatePerMinute: number;

  constructor(deps: { workspaces: WorkspaceStore; partners: PartnerStore; usage: UsageStore; defaultRatePerMinute: number }) {
    this.workspaces = deps.workspaces;
    this.partners = deps.partners;
    this.usage = deps.usage;
    this.defaultRatePerMinute = deps.defaultRatePerMinute;
  }

  async create(input: { name: string; planId?: string; partnerId?: string | null; ownerEmail?: string | null }): Promise<WorkspaceDoc> {
    const name = input.name.trim();
    if (name.length === 0 || name.length > 120) throw new ValidationError([{ path: 'name', message: 'must be 1 to 120 characters' }]);
    const planId = input.planId ?? 'free';
    if (!planById(planId)) {
      throw new ValidationError([{ path: 'plan', message: `must be one of ${PLAN_IDS.join(', ')}` }]);
    }
    const email = ownerEmail(input.ownerEmail);
    if (input.partnerId && !(await this.partners.findById(input.partnerId))) throw new NotFoundError('partner');
    const doc: WorkspaceDoc = {
      _id: newId('ws'),
      name,
      plan_id: planId,
      partner_id: input.partnerId ?? null,
      limits_override: null,
      owner_email: email,
      created_at: new Date(),
    };
    await this.workspaces.insert(doc);
    return doc;
  }

  async profile(principal: Extract<Principal, { kind: 'workspace' }>, now = new Date()): Promise<WorkspaceProfile> {
    const ws = principal.workspace;
    const plan = effectivePlan(ws.plan_id, ws.limits_override);
    const period = periodOf(now);
    const [links, domains, trackedClicks] = await Promise.all([
      this.usage.countOwned('links', ws._id),
      this.usage.countOwned('domains', ws._id),
      this.usage.trackedClicks(ws._id, period.key),
    ]);
    return {
      id: ws._id,
      name: ws.name,
      partner_id: ws.partner_id,
      owner_email: ws.owner_email ?? null,
      created_at: ws.created_at.toISOString(),
      plan: {
        id: plan.id,
        name: plan.name,
        limits: { ...plan.limits, rate_limit_per_minute: plan.limits.rate_limit_per_minute ?? this.defaultRatePerMinute },
        capabilities: [...plan.capabilities],
      },
      usage: {
        links,
        domains,
        tracked_clicks: trackedClicks,
        period_start: period.start.toISOString(),
        period_end: period.end.toISOString(),
      },
    };
  }
}
