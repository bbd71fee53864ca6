import type { Device, OperatingSystem, ProxyType, VisitorType } from './visitor-profile.ts';

/** What the redirect publishes to CLICKS for every counted visit (JSON on `clicks.<workspace_id>`). */
export interface ClickRecord {
  /** The click id (signed, see click-id.ts); also the JetStream message id and the `clicks` document _id. */
  id: string;
  /** ISO 8601 UTC with milliseconds. */
  ts: string;
  workspace_id: string;
  link_id: string;
  domain_id: string;
  domain: string;
  slug: string;
  /** Outcome kind: redirect, block, gone, password, warn, page, app; `preview`: a social crawler was shown the link's card. */
  outcome: string;
  /** Where the visitor was sent (redirect outcomes), else null. */
  destination: string | null;
  decision: DecisionTrace;
  visitor: {
    ip: string | null;
    device: Device;
    os: OperatingSystem;
    browser: string | null;
    language: string | null;
    country: string | null;
    region: string | null;
    city: string | null;
    asn: number | null;
    visitor_type: VisitorType;
    verified_bot: boolean;
    bot_name: string | null;
    proxy_type: ProxyType | null;
    quality: number;
    referer: string | null;
    visit: 'first' | 'repeat';
    visitor_id: string;
  };
}

/** Which step decided, and the choice it made: kept in the click record and fed back to A/B and rotator counts. */
export interface DecisionTrace {
  step: 'expired' | 'rule' | 'password' | 'targeting' | 'mobile' | 'ab_test' | 'rotator' | 'url';
  ruleId: string | null;
  /** True when the rule that acted is a workspace rule. */
  workspaceRule: boolean;
  targetingIndex: number | null;
  variantIndex: number | null;
  destinationId: string | null;
  /** The rotator had no eligible destination and used `fallback_url` (or the link's url). */
  rotatorFallback: boolean;
}
