import { newId } from '../platform/ids.ts';
import { displayName } from '../platform/schema.ts';
import { NotFoundError, ValidationError, type ErrorDetail } from '../platform/errors.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import { requireCapabilities, type Principal } from '../tenancy/principal.ts';
import { ruleIpDetails, withRuleIds } from '../rules/rule-checks.ts';
import type { Rule } from '../rules/rule.schemas.ts';
import type { IpListStore } from '../iplists/ip-list.store.ts';
import type { DomainDirectory } from '../links/domains.ts';
import { effectivePlan, planById, PLAN_IDS, type Capability } from '../tenancy/plans.ts';
import { DEFAULT_ATTRIBUTION_WINDOW_DAYS, type UtmTemplateDoc, type WorkspaceDoc, type WorkspaceSettingsChanges, type WorkspaceStore } from '../tenancy/workspace.store.ts';
import { periodOf, type UsageStore } from '../tenancy/usage.store.ts';
import type { UtmTemplate, WorkspaceProfile, WorkspaceUpdate } from './workspace.schemas.ts';
import type { PartnerStore } from '../tenancy/partner.store.ts';
import { ownerEmail } from '../platform/email.ts';
import { canonicalZone } from '../analytics/time.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

export interface WorkspaceServiceDeps {
  workspaces: WorkspaceStore;
  partners: PartnerStore;
  usage: UsageStore;
  defaultRatePerMinute: number;
  /** Checks `ip_list_ids` of workspace rules; tools that never change settings go without. */
  ipLists?: IpListStore;
  /** Refuses rule redirects to our own short domains (a loop for every link of the workspace). */
  domains?: DomainDirectory;
  /** Broadcasts settings changes to the redirect pods; null or absent in tools that run without NATS. */
  bus?: CacheBus | null;
}

export class WorkspaceService {
  private readonly workspaces: WorkspaceStore;
  private readonly partners: PartnerStore;
  private readonly usage: UsageStore;
  private readonly defaultRatePerMinute: number;
  private readonly ipLists: IpListStore | null;
  private readonly domains: DomainDirectory | null;
  private readonly bus: CacheBus | null;

  constructor(deps: WorkspaceServiceDeps) {
    this.workspaces = deps.workspaces;
    this.partners = deps.partners;
    this.usage = deps.usage;
    this.defaultRatePerMinute = deps.defaultRatePerMinute;
    this.ipLists = deps.ipLists ?? null;
    this.domains = deps.domains ?? null;
    this.bus = deps.bus ?? null;
  }

  async create(input: { name: string; planId?: string; partnerId?: string | null; ownerEmail?: string | null }): Promise<WorkspaceDoc> {
    const name = displayName(input.name, 120);
    if (name === null) throw new ValidationError([{ path: 'name', message: 'must be 1 to 120 characters, not all white space' }]);
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

  async profile(principal: WorkspacePrincipal, now = new Date()): Promise<WorkspaceProfile> {
    return this.profileOf(principal.workspace, now);
  }

  /**
   * Replaces the redirect settings given. Clearing rules (`[]`) or turning tracking off needs no capability, so a
   * workspace that lost one in a downgrade can still tidy up.
   */
  async update(principal: WorkspacePrincipal, patch: WorkspaceUpdate): Promise<WorkspaceProfile> {
    const workspaceId = principal.workspace._id;
    requireCapabilities(principal, settingsCapabilities(patch));
    const rules = patch.rules === undefined ? undefined : withRuleIds(patch.rules);
    if (rules) await this.checkRules(workspaceId, rules);
    const timezone = patch.timezone === undefined ? undefined : canonicalZone(patch.timezone);
    if (timezone === null) throw new ValidationError([{ path: 'timezone', message: `"${patch.timezone}" is not an IANA time zone name` }]);
    const name = patch.name === undefined ? undefined : displayName(patch.name, 120);
    if (name === null) throw new ValidationError([{ path: 'name', message: 'must be 1 to 120 characters, not all white space' }]);
    const email = patch.owner_email === undefined ? undefined : noticeEmail(patch.owner_email);
    const templates = patch.utm_templates === undefined ? undefined : utmTemplates(patch.utm_templates);
    const changes: WorkspaceSettingsChanges = {
      ...(name !== undefined ? { name } : {}),
      ...(email !== undefined ? { owner_email: email } : {}),
      ...(templates !== undefined ? { utm_templates: templates } : {}),
      ...(rules !== undefined ? { rules } : {}),
      ...(patch.conversion_tracking !== undefined ? { conversion_tracking: patch.conversion_tracking } : {}),
      ...(patch.attribution_window_days !== undefined ? { attribution_window_days: patch.attribution_window_days } : {}),
      ...(timezone !== undefined ? { timezone } : {}),
      settings_updated_at: new Date(),
    };
    const updated = await this.workspaces.updateSettings(workspaceId, changes);
    if (!updated) throw new NotFoundError('workspace');
    // Redirect pods cache the settings and api pods the key's workspace: both drop their copy.
    await this.bus?.publish({ kind: 'workspace', id: workspaceId });
    return this.profileOf(updated);
  }

  /** As for a link's rules: IP entries parse, named IP lists exist in the workspace, redirects do not loop. */
  private async checkRules(workspaceId: string, rules: readonly Rule[]): Promise<void> {
    const details: ErrorDetail[] = ruleIpDetails(rules);
    const named = [...new Set(rules.flatMap((r) => r.match.ip_list_ids ?? []))];
    if (this.ipLists && named.length > 0) {
      const found = await this.ipLists.existing(workspaceId, named);
      rules.forEach((rule, i) =>
        rule.match.ip_list_ids?.forEach((id, j) => {
          if (!found.has(id)) details.push({ path: `rules[${i}].match.ip_list_ids[${j}]`, message: 'no such IP list' });
        }),
      );
    }
    if (this.domains) {
      for (const [i, rule] of rules.entries()) {
        if (rule.action.type === 'redirect' && (await this.domains.isShortDomain(rule.action.url))) {
          details.push({ path: `rules[${i}].action.url`, message: 'points at a short-link domain (a redirect loop)' });
        }
      }
    }
    if (details.length > 0) throw new ValidationError(details);
  }

  private async profileOf(ws: WorkspaceDoc, now = new Date()): Promise<WorkspaceProfile> {
    const plan = effectivePlan(ws.plan_id, ws.limits_override, ws.capabilities_override);
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
      rules: ws.rules ?? [],
      conversion_tracking: ws.conversion_tracking ?? false,
      attribution_window_days: ws.attribution_window_days ?? DEFAULT_ATTRIBUTION_WINDOW_DAYS,
      timezone: ws.timezone ?? 'UTC',
      utm_templates: ws.utm_templates ?? [],
    };
  }
}

/** The notice address as ownerEmail reads it, with the error at this field's path. */
function noticeEmail(value: string | null): string | null {
  try {
    return ownerEmail(value);
  } catch {
    throw new ValidationError([{ path: 'owner_email', message: 'must be an e-mail address (name@example.com)' }]);
  }
}

/** Trimmed names, unique without case; a template must set at least one parameter. */
function utmTemplates(templates: readonly UtmTemplate[]): UtmTemplateDoc[] {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  const docs = templates.map((template, i) => {
    const name = displayName(template.name, 60);
    if (name === null) details.push({ path: `utm_templates[${i}].name`, message: 'must be 1 to 60 characters, not all white space' });
    else if (seen.has(name.toLowerCase())) details.push({ path: `utm_templates[${i}].name`, message: `"${name}" is already the name of another template` });
    else seen.add(name.toLowerCase());
    const utm = Object.fromEntries(Object.entries(template.utm).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    if (Object.keys(utm).length === 0) details.push({ path: `utm_templates[${i}].utm`, message: 'must set at least one UTM parameter' });
    return { name: name ?? template.name, utm };
  });
  if (details.length > 0) throw new ValidationError(details);
  return docs;
}

/** Which plan capabilities a settings patch uses. */
function settingsCapabilities(patch: WorkspaceUpdate): Capability[] {
  const used: Capability[] = [];
  if (patch.rules && patch.rules.length > 0) used.push('rules');
  if (patch.rules?.some((r) => r.match.ip_list_ids !== undefined)) used.push('ip_lists');
  if (patch.conversion_tracking === true) used.push('conversions');
  return used;
}
