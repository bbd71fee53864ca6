// What the analytics screen shows lives in its URL (range, zone, bots, filters, breakdown dimension), so a view can
// be bookmarked, shared, and opened from elsewhere: the links screen opens `/analytics?link_id=lnk_…`.
import type { Query } from '../../api.ts';
import type { ContextKind } from '../../session.ts';

export const INTERVALS = [
  { value: '24h', label: 'Last 24 hours' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: '90d', label: 'Last 90 days' },
  { value: '12mo', label: 'Last 12 months' },
  { value: 'all', label: 'All time' },
] as const;
export const DEFAULT_INTERVAL = '30d';

export const BOTS = [
  { value: 'exclude', label: 'People only' },
  { value: 'include', label: 'People and bots' },
  { value: 'only', label: 'Bots only' },
] as const;

/** Breakdown dimensions with their labels, in the order the picker lists them (src/analytics/dimensions.ts). */
export const DIMENSIONS: readonly { value: string; label: string; partnerOnly?: boolean }[] = [
  { value: 'client', label: 'Client', partnerOnly: true },
  { value: 'country', label: 'Country' },
  { value: 'region', label: 'Region' },
  { value: 'city', label: 'City' },
  { value: 'device', label: 'Device' },
  { value: 'os', label: 'Operating system' },
  { value: 'browser', label: 'Browser' },
  { value: 'language', label: 'Language' },
  { value: 'referer', label: 'Referring site' },
  { value: 'referer_url', label: 'Referring page' },
  { value: 'visitor_type', label: 'Visitor type' },
  { value: 'asn', label: 'Network (ASN)' },
  { value: 'domain', label: 'Domain' },
  { value: 'link', label: 'Link' },
  { value: 'destination', label: 'Destination' },
  { value: 'ab_variant', label: 'A/B variant' },
  { value: 'rotator_destination', label: 'Rotator destination' },
  { value: 'rule', label: 'Rule' },
  { value: 'utm_source', label: 'UTM source' },
  { value: 'utm_medium', label: 'UTM medium' },
  { value: 'utm_campaign', label: 'UTM campaign' },
];

/** The visitor dimensions a query may filter on; the api takes one of them per request. */
export const VISITOR_FILTERS = ['country', 'device', 'os', 'browser', 'referer', 'visitor_type', 'utm_source', 'utm_medium', 'utm_campaign'] as const;
/** Filters on links rather than visitors; they combine with everything. */
export const LINK_FILTERS = ['link_id', 'domain_id', 'tag', 'folder_id', 'client_id'] as const;

export function dimensionLabel(value: string): string {
  if (value === 'link_id') return 'Link';
  if (value === 'domain_id') return 'Domain';
  if (value === 'tag') return 'Tag';
  if (value === 'folder_id') return 'Folder';
  if (value === 'client_id') return 'Client';
  return DIMENSIONS.find((d) => d.value === value)?.label ?? value;
}

export interface AnalyticsParams {
  interval: string | null;
  /** Custom range as local calendar dates (YYYY-MM-DD) in the zone; end inclusive. Used when interval is null. */
  from: string | null;
  to: string | null;
  /** IANA zone; empty: the workspace's own (the api's default). */
  timezone: string;
  bots: string;
  dimension: string;
  /** Filter name → comma-separated values. */
  filters: Record<string, string>;
}

const FILTER_NAMES: readonly string[] = [...LINK_FILTERS, ...VISITOR_FILTERS];

export function parseParams(query: Record<string, string | undefined>): AnalyticsParams {
  const from = isDate(query.from) ? query.from! : null;
  const to = isDate(query.to) ? query.to! : null;
  const custom = from !== null && to !== null;
  const interval = INTERVALS.some((i) => i.value === query.interval) ? query.interval! : custom ? null : DEFAULT_INTERVAL;
  const filters: Record<string, string> = {};
  for (const name of FILTER_NAMES) {
    const value = query[name];
    if (value) filters[name] = value;
  }
  return {
    interval,
    from: interval === null ? from : null,
    to: interval === null ? to : null,
    timezone: query.timezone ?? '',
    bots: BOTS.some((b) => b.value === query.bots) ? query.bots! : 'exclude',
    dimension: DIMENSIONS.some((d) => d.value === query.dimension) ? query.dimension! : 'country',
    filters,
  };
}

/** The screen's own URL query for these parameters (defaults left out, so links stay short). */
export function screenQuery(params: AnalyticsParams): string {
  const search = new URLSearchParams();
  if (params.interval && params.interval !== DEFAULT_INTERVAL) search.set('interval', params.interval);
  if (params.interval === null && params.from && params.to) {
    search.set('from', params.from);
    search.set('to', params.to);
  }
  if (params.timezone) search.set('timezone', params.timezone);
  if (params.bots !== 'exclude') search.set('bots', params.bots);
  if (params.dimension !== 'country') search.set('dimension', params.dimension);
  for (const [name, value] of Object.entries(params.filters)) search.set(name, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}

/**
 * The api query: range, zone, bots and filters. A custom range runs from the first day's midnight to the midnight
 * after the last day, in `zone` (the chosen one, else the zone the api last answered in).
 */
export function apiQuery(params: AnalyticsParams, zone: string, kind: ContextKind): Query {
  const query: Query = { bots: params.bots, timezone: params.timezone || undefined };
  if (params.interval) query.interval = params.interval;
  else if (params.from && params.to) {
    query.start = zonedMidnight(params.from, zone);
    query.end = zonedMidnight(nextDay(params.to), zone);
  }
  for (const [name, value] of Object.entries(params.filters)) {
    if (name === 'client_id' && kind !== 'partner') continue;
    query[name] = value;
  }
  return query;
}

/** Where the analytics of the context in view are read. */
export function analyticsBase(kind: ContextKind): string {
  return kind === 'partner' ? '/v1/partner/analytics' : '/v1/analytics';
}

function isDate(value: string | undefined): boolean {
  return value !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`));
}

export function nextDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

/** Offset of `zone` from UTC at `instant`, in minutes (New York in winter: -300). */
export function zoneOffsetMinutes(instant: Date, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((asUtc - Math.floor(instant.getTime() / 1000) * 1000) / 60_000);
}

/** Midnight starting `date` in `zone`, as ISO 8601 with that zone's offset (`2026-03-08T00:00:00-05:00`). */
export function zonedMidnight(date: string, zone: string): string {
  const wall = Date.parse(`${date}T00:00:00Z`);
  // The offset at the wall time read as UTC is right except within hours of a change; one more pass settles it.
  let offset = zoneOffsetMinutes(new Date(wall), zone);
  offset = zoneOffsetMinutes(new Date(wall - offset * 60_000), zone);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${date}T00:00:00${sign}${hh}:${mm}`;
}

/** Every IANA zone the browser knows, UTC first. */
export function timeZones(): string[] {
  let zones: string[];
  try {
    zones = Intl.supportedValuesOf('timeZone');
  } catch {
    zones = []; // an older engine: UTC alone
  }
  return ['UTC', ...zones.filter((z) => z !== 'UTC')];
}

export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}
