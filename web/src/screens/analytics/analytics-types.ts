// The analytics answers the screen reads (src/analytics/analytics.schemas.ts is the authority).
import type { Static } from '@sinclair/typebox';
import type { ImportedClicksSchema } from '../../../../src/analytics/analytics.schemas.ts';

export type ImportedClicks = Static<typeof ImportedClicksSchema>;

export type Revenue = Record<string, number>;

export interface Range {
  start: string;
  end: string;
  timezone: string;
  interval: string | null;
}

export interface Figures {
  clicks: number;
  human_clicks: number;
  bot_clicks: number;
  unique_visitors: number;
  conversions: number;
  revenue: Revenue;
}

export interface Summary extends Figures {
  range: Range;
  bots: string;
  unique_visitors_error: number;
  /** Click totals imported links came with from their source: apart from every counted figure. */
  imported_clicks: ImportedClicks;
  previous: Figures & { start: string; end: string };
}

export interface Bucket extends Figures {
  start: string;
  end: string;
  hours: number;
}

export interface Timeseries {
  range: Range;
  bots: string;
  granularity: 'hour' | 'day' | 'week' | 'month';
  data: Bucket[];
}

export interface BreakdownRow {
  value: string | null;
  clicks: number;
  unique_visitors: number;
  conversions: number;
  revenue: Revenue;
  share: number;
}

export interface Breakdown {
  range: Range;
  dimension: string;
  total_clicks: number;
  unique_visitors_error: number;
  /** Whether this installation resolves visitor locations and networks at all. */
  geo: { country: boolean; location: boolean; network: boolean };
  data: BreakdownRow[];
}

/** Dimensions whose values come from GeoIP (or trusted edge headers): `country`, then `location` for these, `network` for asn. */
export const LOCATION_DIMENSIONS: ReadonlySet<string> = new Set(['country', 'region', 'city']);

/** Why a breakdown's values are all empty when the installation cannot resolve them; null when it can. */
export function unresolvedReason(breakdown: Breakdown): string | null {
  if (breakdown.dimension === 'country' && !breakdown.geo.country) {
    return 'Countries are not recorded: this installation has no GeoIP City database (GEOIP_CITY_DB), has turned the packaged open data off (GEOIP_OPEN_DATA=false) and does not trust edge headers (TRUST_EDGE_HEADERS).';
  }
  if ((breakdown.dimension === 'region' || breakdown.dimension === 'city') && !breakdown.geo.location) {
    return 'Regions and cities are not recorded: this installation has no GeoIP City database (GEOIP_CITY_DB) and does not trust edge headers (TRUST_EDGE_HEADERS); the packaged open data gives countries only.';
  }
  if (breakdown.dimension === 'asn' && !breakdown.geo.network) {
    return 'Networks are not recorded: this installation has no GeoIP ASN database (GEOIP_ASN_DB), has turned the packaged open data off (GEOIP_OPEN_DATA=false) and does not trust edge headers (TRUST_EDGE_HEADERS).';
  }
  return null;
}

export interface TopLink {
  id: string;
  short_url: string | null;
  url: string | null;
  domain: string | null;
  slug: string | null;
  clicks: number;
  unique_visitors: number;
  conversions: number;
  revenue: Revenue;
}

export interface TopLinks {
  range: Range;
  data: TopLink[];
}
