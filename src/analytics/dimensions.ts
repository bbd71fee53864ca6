// What analytics knows of a click: whether it is a bot, who the visitor is (for unique visitors), and its value in
// each breakdown dimension. One definition, used by the rollup writer, the rebuild, the CSV export's filters and the
// tests' brute-force recount, so they cannot disagree.
import type { ClickRecord } from '../visitor/click-record.ts';

/** Every dimension a breakdown can be asked for (query parameter `dimension`). */
export const DIMENSIONS = [
  'country',
  'region',
  'city',
  'device',
  'os',
  'browser',
  'language',
  'referer',
  'referer_url',
  'visitor_type',
  'asn',
  'domain',
  'link',
  'destination',
  'ab_variant',
  'rotator_destination',
  'rule',
  'utm_source',
  'utm_medium',
  'utm_campaign',
] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** The rollup cell holding a bucket's totals. */
export const TOTAL = '_';

/**
 * Workspace-level rollup documents hold one group of dimensions each: the totals alone (read by every summary and
 * time series), the dimensions with few values together, and each dimension with many values on its own, so that
 * a click touches few documents and a query reads small ones.
 */
const SMALL_DIMENSIONS: ReadonlySet<string> = new Set([
  'country',
  'device',
  'os',
  'browser',
  'language',
  'visitor_type',
  'domain',
  'ab_variant',
  'rotator_destination',
  'rule',
  'utm_source',
  'utm_medium',
  'utm_campaign',
]);

export function documentGroup(dimension: string): string {
  return SMALL_DIMENSIONS.has(dimension) ? 'small' : dimension;
}

/** Visitor dimensions a query may filter on (link properties are filtered through the link-level rollups). */
export const VISITOR_FILTERS = ['country', 'device', 'os', 'browser', 'referer', 'visitor_type', 'utm_source', 'utm_medium', 'utm_campaign'] as const;
export type VisitorFilter = (typeof VISITOR_FILTERS)[number];

/** Visitor types that are automated agents; the rest (humans, and people behind a VPN, proxy or Tor) are human traffic. */
const NOT_BOTS: ReadonlySet<string> = new Set(['human', 'datacenter', 'proxy', 'vpn', 'tor', 'unknown']);

export function isBot(visitorType: string): boolean {
  return !NOT_BOTS.has(visitorType);
}

/** A bounded memo for URL parsing: the same referers and destinations come back click after click. */
function memo<T>(compute: (s: string) => T, max = 20_000): (s: string) => T {
  const cache = new Map<string, T>();
  return (s) => {
    let v = cache.get(s);
    if (v === undefined && !cache.has(s)) {
      if (cache.size >= max) cache.clear();
      v = compute(s);
      cache.set(s, v);
    }
    return v as T;
  };
}

/** Host of a referer URL, lower-cased, without `www.`; null when absent or not a URL. */
export function refererHost(referer: string | null): string | null {
  return referer ? hostOf(referer) : null;
}

const hostOf = memo((referer: string): string | null => {
  try {
    const host = new URL(referer).hostname.toLowerCase();
    return host === '' ? null : host.replace(/^www\./, '');
  } catch {
    return null;
  }
});

interface Utm {
  source: string | null;
  medium: string | null;
  campaign: string | null;
}
const NO_UTM: Utm = { source: null, medium: null, campaign: null };

/** The UTM parameters of a destination URL (each null when absent). */
export function utm(destination: string | null): Utm {
  if (!destination || !destination.includes('utm_')) return NO_UTM;
  return utmOf(destination);
}

const utmOf = memo((destination: string): Utm => {
  try {
    const params = new URL(destination).searchParams;
    return { source: params.get('utm_source'), medium: params.get('utm_medium'), campaign: params.get('utm_campaign') };
  } catch {
    return NO_UTM;
  }
});

/** The click's value in each dimension (null: none, answered as `null` in a breakdown), in DIMENSIONS order. */
export function dimensionValueList(click: ClickRecord): Array<string | null> {
  const v = click.visitor;
  const d = click.decision;
  const u = utm(click.destination);
  // In the order of DIMENSIONS.
  return [
    v.country,
    v.region,
    v.city,
    v.device,
    v.os,
    v.browser,
    v.language,
    refererHost(v.referer),
    v.referer,
    v.visitor_type,
    v.asn === null ? null : String(v.asn),
    click.domain,
    click.link_id,
    click.destination,
    d.variantIndex === null ? null : String(d.variantIndex),
    d.destinationId,
    d.ruleId,
    u.source,
    u.medium,
    u.campaign,
  ];
}

/** The click's value in each dimension, by name. */
export function dimensionValues(click: ClickRecord): Record<Dimension, string | null> {
  const list = dimensionValueList(click);
  const values = {} as Record<Dimension, string | null>;
  for (let i = 0; i < DIMENSIONS.length; i++) values[DIMENSIONS[i]!] = list[i] ?? null;
  return values;
}

// Dimension values become field names of the rollup documents (`v.<dimension>.<value>`): MongoDB field names cannot
// hold `.` nor start with `$`, and null needs a name of its own. `%` escapes, as in URLs; null is `~`.
const NULL_KEY = '~';

const SPECIAL = /[%.$~]/;

export function cellKey(value: string | null): string {
  if (value === null) return NULL_KEY;
  if (value === '') return '%';
  if (!SPECIAL.test(value)) return value;
  return escaped(value);
}

// Host names and URLs hold dots: the same ones come back click after click.
const escaped = memo((value: string) => value.replace(/[%.$~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`));

export function cellValue(key: string): string | null {
  if (key === NULL_KEY) return null;
  if (key === '%') return '';
  return key.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
