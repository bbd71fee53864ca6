import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { DateTime, Integer, Nullable, StringEnum, closed } from '../platform/schema.ts';
import { DIMENSIONS } from './dimensions.ts';
import { CELL_PRECISION, TOTAL_PRECISION, exactLimit, standardError } from './hll.ts';

export const INTERVALS = ['24h', '7d', '30d', '90d', '12mo', 'all'] as const;
export type Interval = (typeof INTERVALS)[number];
export const GRANULARITIES = ['hour', 'day', 'week', 'month'] as const;
export const BOTS = ['exclude', 'include', 'only'] as const;
export type BotsMode = (typeof BOTS)[number];

export const MAX_FILTER_VALUES = 50;
export const MAX_BUCKETS = 1000;

/** Up to 50 comma-separated values. */
const list = (description: string) =>
  Type.Optional(Type.String({
    minLength: 1,
    maxLength: 50 * 513,
    pattern: `^[^,]+(?:,[^,]+){0,${MAX_FILTER_VALUES - 1}}$`,
    description: `${description} Up to ${MAX_FILTER_VALUES} comma-separated values; a click matches when it has any of them.`,
  }));

/** The filters every analytics endpoint takes. Link filters combine with everything; visitor filters, see the tag. */
export const FILTER_PARAMS = {
  link_id: list('Link ids.'),
  domain_id: list('Domain ids: clicks of links on these domains.'),
  tag: list('Tag ids: clicks of links carrying any of these tags (tags as the links carry them now).'),
  folder_id: list('Folder ids: clicks of links in these folders (as they are filed now).'),
  country: list('ISO 3166-1 alpha-2 country codes, uppercase.'),
  device: list('`desktop`, `mobile`, `tablet`.'),
  os: list('`ios`, `android`, `windows`, `macos`, `linux`, `other`.'),
  browser: list('Browser families as breakdowns name them (e.g. `Chrome`, `Mobile Safari`).'),
  referer: list('Referring hosts, without `www.` (e.g. `news.ycombinator.com`).'),
  visitor_type: list('Visitor types (`human`, `search_bot`, `ai_crawler`, …).'),
  utm_source: list('`utm_source` of the destination the visitor was sent to.'),
  utm_medium: list('`utm_medium` of the destination.'),
  utm_campaign: list('`utm_campaign` of the destination.'),
} as const;

const RANGE_PARAMS = {
  start: Type.Optional(DateTime({ description: 'Range start (ISO 8601 date-time, any offset), rounded down to the quarter-hour. Give `start` and `end`, or `interval`.' })),
  end: Type.Optional(DateTime({ description: 'Range end, exclusive, rounded up to the quarter-hour.' })),
  interval: Type.Optional(StringEnum(INTERVALS, {
    description:
      'A range ending with the current period, in `timezone`: `24h` the last 24 hours; `7d`, `30d`, `90d` that many local days ' +
      'including today; `12mo` twelve calendar months including this one; `all` from the first click within the plan\'s retention. ' +
      'Default `30d` when neither `interval` nor `start`/`end` is given.',
  })),
  timezone: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'IANA time zone the range, the buckets and the answer\'s timestamps are in (e.g. `America/New_York`); default the workspace\'s, else UTC.',
  })),
  bots: Type.Optional(StringEnum(BOTS, { default: 'exclude', description: '`exclude` (default) counts human traffic only, `include` everything, `only` bots.' })),
  ...FILTER_PARAMS,
};

function query<P extends Record<string, TSchema>>(extra: P) {
  return Type.Object({ ...RANGE_PARAMS, ...extra }, closed);
}

/** The shared range, zone, bots and filter parameters with others (the partner analytics add theirs). */
export const analyticsQuery = query;

/** A breakdown's answer for the given dimension names. */
/** What this installation can tell about where visitors are, so an empty location column can be explained. */
export const GeoSourcesSchema = Type.Object(
  {
    country: Type.Boolean({
      description:
        'Countries are resolved: a GeoIP City database (GEOIP_CITY_DB) is configured, the packaged open data is on (GEOIP_OPEN_DATA, the default), or edge headers are trusted (TRUST_EDGE_HEADERS). False: `country` is null on every click',
    }),
    location: Type.Boolean({
      description: 'Regions and cities are resolved: a GeoIP City database (GEOIP_CITY_DB) is configured or edge headers are trusted (TRUST_EDGE_HEADERS). False: they are null on every click',
    }),
    network: Type.Boolean({
      description: 'Networks (`asn`) are resolved: a GeoIP ASN database (GEOIP_ASN_DB) is configured, the packaged open data is on, or edge headers are trusted. False: `asn` is null on every click',
    }),
  },
  { ...closed, $id: 'GeoSources' },
);
export type GeoSources = Static<typeof GeoSourcesSchema>;

export function breakdownSchema<D extends readonly string[]>(dimensions: D) {
  return Type.Object(
    {
      ...Echo,
      dimension: StringEnum(dimensions),
      total_clicks: Count,
      unique_visitors_error: UniquesError,
      geo: GeoSourcesSchema,
      data: Type.Array(BreakdownRow),
    },
    closed,
  );
}

export const SummaryQuerySchema = query({});
export const TimeseriesQuerySchema = query({
  granularity: Type.Optional(StringEnum(GRANULARITIES, {
    description: `Bucket size (weeks are ISO weeks starting Monday). Default: \`hour\` up to 2 days, \`day\` up to 92 days, else \`month\`. At most ${MAX_BUCKETS} buckets.`,
  })),
});
export const BreakdownQuerySchema = query({
  dimension: StringEnum(DIMENSIONS, { description: 'What to break the clicks down by.' }),
  limit: Type.Optional(Integer(1, 1000, { default: 100, description: 'Rows returned, most clicks first.' })),
});
export const TopLinksQuerySchema = query({
  sort: Type.Optional(StringEnum(['clicks', 'unique_visitors'] as const, { default: 'clicks' })),
  limit: Type.Optional(Integer(1, 100, { default: 10 })),
});
export const ExportQuerySchema = query({});

export type SummaryQuery = Static<typeof SummaryQuerySchema>;
export type TimeseriesQuery = Static<typeof TimeseriesQuerySchema>;
export type BreakdownQuery = Static<typeof BreakdownQuerySchema>;
export type TopLinksQuery = Static<typeof TopLinksQuerySchema>;
export type AnalyticsQuery = SummaryQuery & Partial<Pick<TimeseriesQuery, 'granularity'>>;

const Count = Type.Integer({ minimum: 0 });

const percent = (p: number) => `${(standardError(p) * 100).toFixed(2)} %`;
/** Where unique visitors are exact and where they are an estimate, with its error: said once for every field. */
const UNIQUES =
  'Distinct visitors counted under `bots`, never more than the clicks. Exact while each stored bucket holds few visitors ' +
  `(up to ${exactLimit(CELL_PRECISION).toLocaleString('en')} per dimension value, ${exactLimit(TOTAL_PRECISION).toLocaleString('en')} for totals, in each ` +
  'quarter-hour, hour or day kept); beyond that an estimate (HyperLogLog) whose relative standard error is ' +
  `${percent(TOTAL_PRECISION)} for totals and ${percent(CELL_PRECISION)} per dimension value (\`unique_visitors_error\` where the answer has it).`;
const Uniques = Type.Integer({ minimum: 0, description: UNIQUES });
const UniquesError = Type.Number({
  description:
    'Relative standard error of `unique_visitors` (of the rows, in a breakdown): 0 when every figure it covers is an exact count, else the ' +
    'estimate\'s (one standard error: the figure is within twice it of the true count 95 % of the time)',
});

/** Revenue per ISO 4217 currency in integer minor units; currencies are never added together or converted. */
const Revenue = Type.Record(Type.String({ pattern: '^[A-Z]{3}$' }), Type.Integer({ minimum: 0 }), {
  description: 'Revenue of the conversions per ISO 4217 currency, in integer minor units (cents for USD): `{ "EUR": 1250, "USD": 300 }`; `{}` when none',
});

export const RangeSchema = Type.Object(
  {
    start: Type.String({ description: 'Resolved start, ISO 8601 with the zone\'s offset' }),
    end: Type.String({ description: 'Resolved end (exclusive)' }),
    timezone: Type.String(),
    interval: Nullable(StringEnum(INTERVALS), { description: 'The preset the range came from, null for start/end' }),
  },
  closed,
);

const Figures = {
  clicks: Type.Integer({ minimum: 0, description: 'Clicks counted under `bots`' }),
  human_clicks: Count,
  bot_clicks: Count,
  unique_visitors: Uniques,
  conversions: Count,
  revenue: Revenue,
};

const Echo = {
  range: RangeSchema,
  bots: StringEnum(BOTS),
};

/** Click totals other services reported for links imported from them: beside the counted clicks, never inside. */
export const ImportedClicksSchema = Nullable(
  Type.Object(
    {
      total: Type.Integer({ minimum: 0, description: 'The sum of the click totals the sources reported for the selected links when they were imported' }),
      links: Type.Integer({ minimum: 0, description: 'The selected links that came with a click total' }),
      sources: Type.Array(
        Type.Object(
          {
            source: Type.String({ description: 'The import source (`bitly`, `dub`, `shlink`…), as `imported.source` of the link' }),
            clicks: Type.Integer({ minimum: 0 }),
            links: Type.Integer({ minimum: 0 }),
            last_imported_at: DateTime({ description: 'When the latest of these links was imported' }),
          },
          closed,
        ),
        { description: 'Per source, most clicks first' },
      ),
    },
    closed,
  ),
  {
    description:
      'Historical click totals of imported links, as their source reported them at import (`imported.clicks_total` of each link), summed ' +
      'over the links the link filters select. Shown apart because they are not clicks counted here: they are in none of the other figures, ' +
      'have no date, so they do not depend on the range (nor the previous period), and have no visitor, so they cannot be filtered by one: ' +
      'null when a visitor filter is given. With no imported totals: `total` 0 and no sources.',
  },
);

export const SummarySchema = Type.Object(
  {
    ...Echo,
    ...Figures,
    unique_visitors_error: UniquesError,
    imported_clicks: ImportedClicksSchema,
    previous: Type.Object({ start: Type.String(), end: Type.String(), ...Figures }, { ...closed, description: 'The same figures for the period of equal length just before' }),
  },
  closed,
);

export const TimeseriesSchema = Type.Object(
  {
    ...Echo,
    granularity: StringEnum(GRANULARITIES),
    data: Type.Array(
      Type.Object(
        {
          start: Type.String(),
          end: Type.String(),
          hours: Type.Number({ description: 'Length of the bucket in hours: 23 or 25 on DST days; first and last buckets may be cut by the range' }),
          ...Figures,
        },
        closed,
      ),
    ),
  },
  closed,
);

const BreakdownRow = Type.Object(
  {
    value: Nullable(Type.String(), { description: 'The dimension value; null when the click had none (no referer, no rule…)' }),
    clicks: Count,
    unique_visitors: Uniques,
    conversions: Count,
    revenue: Revenue,
    share: Type.Number({ minimum: 0, maximum: 1, description: 'clicks / total_clicks' }),
  },
  closed,
);

export const BreakdownSchema = breakdownSchema(DIMENSIONS);

export const TopLinksSchema = Type.Object(
  {
    ...Echo,
    sort: StringEnum(['clicks', 'unique_visitors'] as const),
    data: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          short_url: Nullable(Type.String({ format: 'uri' }), { description: 'null for a deleted link' }),
          url: Nullable(Type.String(), { description: 'The link\'s destination; null for a deleted link' }),
          domain: Nullable(Type.String()),
          slug: Nullable(Type.String()),
          clicks: Count,
          unique_visitors: Uniques,
          conversions: Count,
          revenue: Revenue,
        },
        closed,
      ),
    ),
  },
  closed,
);

export type Summary = Static<typeof SummarySchema>;
export type Timeseries = Static<typeof TimeseriesSchema>;
export type Breakdown = Static<typeof BreakdownSchema>;
export type TopLinks = Static<typeof TopLinksSchema>;

export const ERROR_BOUNDS = { totals: standardError(TOTAL_PRECISION), values: standardError(CELL_PRECISION) };
