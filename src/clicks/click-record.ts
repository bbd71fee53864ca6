import type { Device, OperatingSystem, ProxyType, VisitorType } from '../redirect/visitor-profile.ts';
import type { DecisionTrace } from '../redirect/outcome.ts';

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
  /** Outcome kind: redirect, block, gone, password, warn, page, app. */
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
