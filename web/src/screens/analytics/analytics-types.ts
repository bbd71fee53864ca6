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
  data: BreakdownRow[];
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
