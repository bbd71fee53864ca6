// The Links API's shapes as the dashboard reads them (spec 2.1–2.6; src/links/link.schemas.ts is the source).
import type { LinkImported } from '../../../../src/links/link.schemas.ts';

export type Device = 'desktop' | 'mobile' | 'tablet';
export type Os = 'ios' | 'android' | 'windows' | 'macos' | 'linux' | 'other';

export const DEVICES: readonly Device[] = ['desktop', 'mobile', 'tablet'];
export const OPERATING_SYSTEMS: readonly Os[] = ['ios', 'android', 'windows', 'macos', 'linux', 'other'];
export const OS_LABELS: Record<Os, string> = { ios: 'iOS', android: 'Android', windows: 'Windows', macos: 'macOS', linux: 'Linux', other: 'Other' };
export const REDIRECT_TYPES = [301, 302, 307, 308] as const;

export interface TargetingEntry {
  match: { country?: string[]; device?: Device[]; os?: Os[]; language?: string[] };
  url: string;
}

export interface AbTest {
  enabled: boolean;
  variants: { url: string; weight: number; label?: string }[];
  auto?: { enabled: boolean; min_sample: number; winner_index?: number; stopped_at?: string; [other: string]: unknown };
}

export interface RuleMatch {
  visitor_type?: string[];
  verified_bot?: boolean;
  proxy_type?: string[];
  quality_below?: number;
  country?: string[];
  region?: string[];
  city?: string[];
  asn?: number[];
  ip?: string[];
  user_agent?: string;
  referer?: string;
  has_utm?: boolean;
  device?: Device[];
  language?: string[];
  local_time?: { from: number; to: number };
  weekday?: number[];
  visit?: 'first' | 'repeat';
  ip_list_ids?: string[];
}

export type RuleAction =
  | { type: 'pass' }
  | { type: 'block'; status: 404 | 410 }
  | { type: 'redirect'; url: string }
  | { type: 'page'; title?: string; text?: string; button_label?: string; button_url?: string }
  | { type: 'warn' };

export interface Rule {
  id?: string;
  enabled: boolean;
  label?: string;
  invert: boolean;
  match: RuleMatch;
  action: RuleAction;
}

export interface MobileApp {
  app_url?: string;
  store_url?: string;
  web_url?: string;
}

export interface Mobile {
  enabled: boolean;
  ios?: MobileApp;
  android?: MobileApp;
  desktop_url?: string;
  tablet: 'mobile' | 'desktop';
  in_app: 'attempt' | 'store' | 'web';
  delay_ms: number;
  deferred: boolean;
}

export interface RotatorDestination {
  id: string;
  url: string;
  weight: number;
  active: boolean;
  limits?: { max_total_clicks?: number; max_daily_clicks?: number; starts_at?: string } | null;
}

export interface Rotator {
  enabled: boolean;
  mode: 'weighted' | 'round_robin' | 'uniform';
  sticky_ttl_seconds: number;
  fallback_url: string | null;
  auto_disable_unhealthy: boolean;
  destinations: RotatorDestination[];
}

export interface TagRef {
  id: string;
  name: string;
  color: string | null;
}

export interface Link {
  id: string;
  short_url: string;
  domain_id: string;
  domain: string;
  slug: string;
  url: string;
  title: string | null;
  note: string | null;
  folder_id: string | null;
  tags: TagRef[];
  redirect_type: number;
  expires_at: string | null;
  expired_url: string | null;
  has_password: boolean;
  targeting: TargetingEntry[];
  ab_test: AbTest | null;
  rules: Rule[];
  workspace_rules_off: boolean;
  mobile: Mobile | null;
  rotator: Rotator | null;
  preview: { title: string; description?: string | null; image?: string | null } | null;
  destination_preview: { title: string | null; description: string | null; image: string | null; fetched_at: string } | null;
  archived: boolean;
  /** Set when an import created the link; its click total is the source's, not counted here. */
  imported: LinkImported;
  created_at: string;
  updated_at: string;
}

export interface Domain {
  id: string;
  hostname: string;
  status: string;
  default: boolean;
}

export interface Folder {
  id: string;
  name: string;
}

export interface BulkResult {
  data: ({ index: number; status: 'created'; link: Link } | { index: number; status: 'failed'; error: { code: string; message: string; details?: { path: string; message: string }[] } })[];
  created: number;
  failed: number;
}
