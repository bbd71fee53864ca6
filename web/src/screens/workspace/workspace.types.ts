// The shapes GET/PATCH /v1/workspace and /v1/ip-lists answer (src/workspace/workspace.schemas.ts, src/iplists).
import type { Rule } from '../links/link-types.ts';

export interface PlanLimits {
  links: number;
  domains: number;
  tracked_clicks_per_month: number;
  rate_limit_per_minute: number;
}

export interface WorkspaceProfile {
  id: string;
  name: string;
  partner_id: string | null;
  owner_email: string | null;
  created_at: string;
  plan: { id: string; name: string; limits: PlanLimits; capabilities: string[] };
  usage: { links: number; domains: number; tracked_clicks: number; period_start: string; period_end: string };
  rules: Rule[];
  conversion_tracking: boolean;
  attribution_window_days: number;
  utm_templates: UtmTemplate[];
}

/** A saved set of UTM parameters (PATCH /workspace `utm_templates`). */
export interface UtmTemplate {
  name: string;
  utm: Partial<Record<'utm_source' | 'utm_medium' | 'utm_campaign' | 'utm_term' | 'utm_content', string>>;
}

export interface IpList {
  id: string;
  name: string;
  entries: string[];
  note: string | null;
  created_at: string;
  updated_at: string;
}
