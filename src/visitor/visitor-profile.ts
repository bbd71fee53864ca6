import type { DEVICES, OPERATING_SYSTEMS } from '../platform/schema.ts';

/** The visitor classes and proxy kinds a profile names: rules match them, clicks record them, analytics group by them. */
export const VISITOR_TYPES = [
  'human',
  'search_bot',
  'social_preview',
  'seo_crawler',
  'ai_crawler',
  'monitoring',
  'security_scanner',
  'library',
  'headless',
  'feed_reader',
  'automated',
  'datacenter',
  'proxy',
  'vpn',
  'tor',
  'unknown',
] as const;
export const PROXY_TYPES = ['DCH', 'PUB', 'VPN', 'SES', 'TOR', 'WEB'] as const;

export type Device = (typeof DEVICES)[number];
export type OperatingSystem = (typeof OPERATING_SYSTEMS)[number];
export type VisitorType = (typeof VISITOR_TYPES)[number];
export type ProxyType = (typeof PROXY_TYPES)[number];

/**
 * Everything the redirect decision may look at, computed once per request (DESIGN, decision order step 3).
 * The raw IP lives only here, in memory, for `ip` and `ip_list_ids` rules; a click record gets `ipStored`.
 */
export interface VisitorProfile {
  /** The visitor's address as the redirect sees it (socket, or X-Forwarded-For per TRUSTED_PROXY_HOPS); null if unknown. */
  ip: string | null;
  /** The address as it may be kept: truncated, keyed hash, or null (IP_STORAGE). */
  ipStored: string | null;
  userAgent: string;
  device: Device;
  os: OperatingSystem;
  /** Browser family as the User-Agent parser names it (e.g. "Chrome", "Mobile Safari"); null if unknown. */
  browser: string | null;
  /** Accept-Language tags in preference order, lower-cased (e.g. ["fr-ca", "fr", "en"]). */
  languages: string[];
  /** ISO 3166-1 alpha-2, upper-case. */
  country: string | null;
  /** Region / subdivision name (e.g. "California") */
  region: string | null;
  city: string | null;
  asn: number | null;
  /** IANA time zone of the visitor (GeoIP location or edge header); null falls back to UTC. */
  timezone: string | null;
  /** Hour of day 0–23 and ISO weekday 1 (Monday)–7 (Sunday) in the visitor's time zone. */
  localHour: number;
  weekday: number;
  visitorType: VisitorType;
  /** A bot whose identity was confirmed (edge header, or a published IP range), not just claimed by its User-Agent. */
  verifiedBot: boolean;
  /** Bot name when known (e.g. "Googlebot", "facebookexternalhit"). */
  botName: string | null;
  proxyType: ProxyType | null;
  /** 0 (certainly not a human) to 100 (clean human traffic); `quality_below: n` holds when quality < n. */
  quality: number;
  referer: string | null;
  /** The request URL carries at least one utm_* parameter. */
  hasUtm: boolean;
  /** First visit to this link by this browser (no visitor cookie for it), or a repeat. */
  visit: 'first' | 'repeat';
  /** Stable pseudonymous id from the visitor cookie: stickiness for A/B and rotator. */
  visitorId: string;
}
