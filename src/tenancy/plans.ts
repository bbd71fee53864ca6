// The platform's plans: quotas and capabilities of a workspace. Kept in code (versioned with the features they
// gate); a workspace may carry overrides for a negotiated deal.

export const CAPABILITIES = [
  'targeting',
  'ab_test',
  'rules',
  'mobile',
  'rotator',
  'password',
  'custom_domains',
  'webhooks',
  'conversions',
  'analytics_export',
  'ip_lists',
] as const;

export type Capability = (typeof CAPABILITIES)[number];

export interface PlanLimits {
  /** Links that may exist at once. */
  links: number;
  /** Custom domains (the default short domain does not count). */
  domains: number;
  /** Clicks recorded per calendar month (UTC); `click.threshold` fires at 80 % and 100 %. */
  tracked_clicks_per_month: number;
  /** Requests per sliding minute for each key of the workspace; null keeps the platform default. */
  rate_limit_per_minute: number | null;
}

/** How far back a plan's analytics reach: queries (rollups) and raw clicks (CSV export). */
export interface PlanRetention {
  /** A query range may start at most this many days ago (else 403 plan_restricted). */
  analytics_days: number;
  /** Raw clicks expire after this many days (or CLICK_RETENTION_DAYS when shorter). */
  raw_click_days: number;
}

export interface Plan {
  id: string;
  name: string;
  limits: PlanLimits;
  capabilities: readonly Capability[];
  retention: PlanRetention;
}

export const PLANS: Readonly<Record<string, Plan>> = {
  free: {
    id: 'free',
    name: 'Free',
    limits: { links: 1_000, domains: 1, tracked_clicks_per_month: 10_000, rate_limit_per_minute: null },
    capabilities: ['password', 'webhooks'],
    retention: { analytics_days: 30, raw_click_days: 30 },
  },
  pro: {
    id: 'pro',
    name: 'Pro',
    limits: { links: 50_000, domains: 10, tracked_clicks_per_month: 1_000_000, rate_limit_per_minute: null },
    capabilities: ['targeting', 'ab_test', 'mobile', 'password', 'custom_domains', 'webhooks', 'conversions', 'analytics_export'],
    retention: { analytics_days: 400, raw_click_days: 90 },
  },
  business: {
    id: 'business',
    name: 'Business',
    limits: { links: 1_000_000, domains: 100, tracked_clicks_per_month: 20_000_000, rate_limit_per_minute: 3_000 },
    capabilities: [...CAPABILITIES],
    retention: { analytics_days: 1_100, raw_click_days: 400 },
  },
  enterprise: {
    id: 'enterprise',
    name: 'Enterprise',
    limits: { links: 100_000_000, domains: 10_000, tracked_clicks_per_month: 1_000_000_000, rate_limit_per_minute: 12_000 },
    capabilities: [...CAPABILITIES],
    retention: { analytics_days: 3_700, raw_click_days: 400 },
  },
};

export const PLAN_IDS = Object.keys(PLANS);

export function planById(id: string): Plan | undefined {
  return Object.hasOwn(PLANS, id) ? PLANS[id] : undefined;
}

/** The plan in force for a workspace: its catalogue plan with any per-workspace limit overrides applied. */
export function effectivePlan(planId: string, overrides?: Partial<PlanLimits> | null, capabilities?: readonly Capability[] | null): Plan {
  const plan = planById(planId) ?? PLANS.free!;
  if (!overrides && !capabilities) return plan;
  return { ...plan, limits: { ...plan.limits, ...overrides }, capabilities: capabilities ?? plan.capabilities };
}
