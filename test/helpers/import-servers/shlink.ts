// A Shlink instance's REST API as its reference describes it, for import tests. Built from github.com/shlinkio/shlink:
// the OpenAPI definition in docs/swagger (swagger.json: paths under /rest/v{version}, the `X-Api-Key` header;
// paths/v1_short-urls.json: `page`, `itemsPerPage` (default 10, -1 for all), `orderBy` (`field-DIR`), `startDate` /
// `endDate`, `domain`; paths/v3_short-urls_{shortCode}_redirect-rules.json; definitions/ShortUrl.json, ShortUrlMeta.json,
// VisitsSummary.json, Pagination.json, Error.json; examples/short-url-not-found-v3.json), and the code those leave
// open: module/Rest/src/Middleware/AuthenticationMiddleware.php and Exception/{Missing,Verify}AuthenticationException
// (401 problems), ShortUrlListRepository.php (dateCreated DESC unless asked, `startDate` inclusive), Pagerfanta's
// pagesCount (at least 1). Release '3.7' answers as Shlink 3.5 to 3.7 did (`deviceLongUrls` and `visitsCount` on each
// short URL, no redirect rules; git tag v3.7.0 of docs/swagger). Not served: searchTerm, tags filters, writes.
//
// Also: the CSV Shlink's web client exports (github.com/shlinkio/shlink-web-component,
// src/short-urls/helpers/ExportShortUrlsBtn.tsx, written by @json2csv/plainjs with its defaults).
import { jsonReply, sortWithLooseTies, startServiceServer, type RecordedRequest, type Reply, type ServiceServer } from './base.ts';

export interface ShlinkRedirectRuleFixture {
  longUrl: string;
  conditions: Array<{ type: string; matchKey?: string | null; matchValue: string | null }>;
}

export interface ShlinkShortUrlFixture {
  shortCode: string;
  longUrl: string;
  /** ISO 8601 with offset, as Shlink writes it: `2024-05-01T10:00:00+02:00`. */
  dateCreated: string;
  /** Null or absent: the default domain. */
  domain?: string | null;
  title?: string | null;
  tags?: string[];
  validSince?: string | null;
  validUntil?: string | null;
  maxVisits?: number | null;
  visits?: { total: number; bots?: number };
  crawlable?: boolean;
  forwardQuery?: boolean;
  /** Served by release '3.7' only. */
  deviceLongUrls?: { android?: string | null; ios?: string | null; desktop?: string | null };
  /** Served by release '5' only; priorities follow the order. */
  redirectRules?: ShlinkRedirectRuleFixture[];
}

export interface ShlinkServerOptions {
  apiKey: string;
  /** Read on every request, so a test may add or remove short URLs while an import runs. */
  shortUrls: ShlinkShortUrlFixture[];
  /** Host of the default domain (default `s.test`). */
  defaultDomain?: string;
  release?: '3.7' | '5';
}

const PROBLEM = 'application/problem+json';

export async function startShlinkServer(options: ShlinkServerOptions): Promise<ServiceServer> {
  const defaultDomain = options.defaultDomain ?? 's.test';
  const release = options.release ?? '5';
  const shortUrlOf = (fixture: ShlinkShortUrlFixture) => `https://${fixture.domain ?? defaultDomain}/${fixture.shortCode}`;

  function handle(request: RecordedRequest): Reply {
    const route = /^\/rest\/v([123])\/(short-urls(?:\/(.+)\/redirect-rules)?)$/.exec(request.path);
    const isList = route?.[2] === 'short-urls';
    const isRules = route?.[3] !== undefined && release !== '3.7';
    if (request.method !== 'GET' || !route || (!isList && !isRules)) {
      // mezzio's ProblemDetailsNotFoundHandler, which Shlink mounts under /rest.
      return jsonReply(404, { title: 'Not Found', type: 'https://httpstatus.es/404', status: 404, detail: `Cannot ${request.method} ${request.path}` }, PROBLEM);
    }
    const apiKey = request.headers['x-api-key'];
    if (typeof apiKey !== 'string' || apiKey === '') {
      return jsonReply(401, { title: 'Invalid authorization', type: 'https://shlink.io/api/error/missing-authentication', status: 401, detail: 'Expected one of the following authentication headers, ["X-Api-Key"], but none were provided', expectedHeaders: ['X-Api-Key'] }, PROBLEM);
    }
    if (apiKey !== options.apiKey) {
      return jsonReply(401, { title: 'Invalid API key', type: 'https://shlink.io/api/error/invalid-api-key', status: 401, detail: 'Provided API key does not exist or is invalid.' }, PROBLEM);
    }
    return isList ? list(request.query) : rules(route[3]!, request.query);
  }

  function list(query: URLSearchParams): Reply {
    let rows = options.shortUrls;
    const startDate = query.get('startDate');
    const endDate = query.get('endDate');
    if (startDate) rows = rows.filter((row) => Date.parse(row.dateCreated) >= Date.parse(startDate));
    if (endDate) rows = rows.filter((row) => Date.parse(row.dateCreated) <= Date.parse(endDate));
    const domain = query.get('domain');
    if (domain) rows = rows.filter((row) => (domain === 'DEFAULT' ? !row.domain : row.domain === domain));
    const [field, direction] = (query.get('orderBy') ?? 'dateCreated-DESC').split('-');
    const keyOf = field === 'shortCode' ? (row: ShlinkShortUrlFixture) => row.shortCode : (row: ShlinkShortUrlFixture) => Date.parse(row.dateCreated);
    rows = sortWithLooseTies(rows, keyOf, (row) => `${row.domain ?? ''}/${row.shortCode}`, direction === 'ASC' ? 'asc' : 'desc', query.toString());
    const page = Math.max(1, parseInt(query.get('page') ?? '', 10) || 1);
    const asked = parseInt(query.get('itemsPerPage') ?? '', 10) || 10;
    const itemsPerPage = asked === -1 ? Math.max(1, rows.length) : asked;
    const data = rows.slice((page - 1) * itemsPerPage, page * itemsPerPage).map(serialize);
    const pagination = { currentPage: page, pagesCount: Math.max(1, Math.ceil(rows.length / itemsPerPage)), itemsPerPage, itemsInCurrentPage: data.length, totalItems: rows.length };
    return jsonReply(200, { shortUrls: { data, pagination } });
  }

  function rules(path: string, query: URLSearchParams): Reply {
    const shortCode = path.split('/').map(decodeURIComponent).join('/');
    const domain = query.get('domain');
    const fixture = options.shortUrls.find((row) => row.shortCode === shortCode && (row.domain ?? defaultDomain) === (domain ?? defaultDomain));
    if (!fixture) {
      const where = domain ? ` for domain "${domain}"` : '';
      return jsonReply(404, { detail: `No URL found with short code "${shortCode}"${where}`, title: 'Short URL not found', type: 'https://shlink.io/api/error/short-url-not-found', status: 404, shortCode, ...(domain && { domain }) }, PROBLEM);
    }
    const redirectRules = (fixture.redirectRules ?? []).map((rule, index) => ({
      longUrl: rule.longUrl,
      priority: index + 1,
      conditions: rule.conditions.map((condition) => ({ type: condition.type, matchKey: condition.matchKey ?? null, matchValue: condition.matchValue })),
    }));
    return jsonReply(200, { defaultLongUrl: fixture.longUrl, redirectRules });
  }

  function serialize(fixture: ShlinkShortUrlFixture): Record<string, unknown> {
    const total = fixture.visits?.total ?? 0;
    const bots = fixture.visits?.bots ?? 0;
    const common = {
      shortCode: fixture.shortCode,
      shortUrl: shortUrlOf(fixture),
      longUrl: fixture.longUrl,
    };
    const rest = {
      dateCreated: fixture.dateCreated,
      visitsSummary: { total, nonBots: total - bots, bots },
      tags: fixture.tags ?? [],
      meta: { validSince: fixture.validSince ?? null, validUntil: fixture.validUntil ?? null, maxVisits: fixture.maxVisits ?? null },
      domain: fixture.domain ?? null,
      title: fixture.title ?? null,
      crawlable: fixture.crawlable ?? false,
      forwardQuery: fixture.forwardQuery ?? true,
    };
    if (release === '3.7') {
      const device = fixture.deviceLongUrls ?? {};
      return { ...common, deviceLongUrls: { android: device.android ?? null, ios: device.ios ?? null, desktop: device.desktop ?? null }, visitsCount: total, ...rest };
    }
    return { ...common, ...rest, hasRedirectRules: (fixture.redirectRules ?? []).length > 0 };
  }

  return startServiceServer(handle, (retryAfterSeconds) => ({
    // Shlink has no limiter: this is what a proxy in front of it answers.
    status: 429,
    headers: { 'content-type': 'text/plain', 'retry-after': String(retryAfterSeconds) },
    body: 'Too Many Requests',
  }));
}

/**
 * `short_urls.csv` as Shlink's web client exports it: @json2csv/plainjs's defaults (every header and text quoted, a
 * quote doubled, numbers bare, `\n` between rows, none after the last), the columns in ExportableShortUrl's order.
 */
export function shlinkExportCsv(shortUrls: readonly ShlinkShortUrlFixture[], defaultDomain = 's.test'): string {
  const quote = (text: string) => `"${text.replaceAll('"', '""')}"`;
  const header = ['createdAt', 'domain', 'shortCode', 'shortUrl', 'longUrl', 'title', 'tags', 'visits'].map(quote).join(',');
  const rows = shortUrls.map((fixture) => {
    // Shlink's `shortUrl` as the API gives it; the web client takes the domain and short code back out of it with
    // `new URL`, so the short code is the path, percent-encoded.
    const shortUrl = `https://${fixture.domain ?? defaultDomain}/${fixture.shortCode}`;
    const { hostname, pathname } = new URL(shortUrl);
    const cells = [fixture.dateCreated, hostname, pathname.substring(1), shortUrl, fixture.longUrl, fixture.title ?? '', (fixture.tags ?? []).join('|')].map(quote);
    return [...cells, String(fixture.visits?.total ?? 0)].join(',');
  });
  return [header, ...rows].join('\n');
}
