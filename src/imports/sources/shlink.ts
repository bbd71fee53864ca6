// Reads a Shlink instance through its REST API v3, as its OpenAPI definition describes it (docs/swagger in
// github.com/shlinkio/shlink, published at https://api-spec.shlink.io): `GET /rest/v3/short-urls` with the
// `X-Api-Key` header, answering `{ shortUrls: { data, pagination } }`; errors are RFC 7807 problem+json bodies
// (`type`, `title`, `detail`, `status`); a refused key is a 401. Shlink has no rate limit of its own, but a proxy in
// front of it may answer 429 or 503, which callRemote waits out.
//
// Pages are not read by page number: the list is sorted by creation date (`orderBy=dateCreated-ASC`), which many
// links share (Shlink's own CSV import dates every link it creates at the same second), and SQL gives no order within
// a tie, so page N and page N+1 may overlap or leave a link out. Instead each request asks for the links created at or
// after the last date read (`startDate`, inclusive), and boundary.ts drops the ones of that date already given out.
// Links created while the import runs sort last, so they are read too.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { SourceError, type ImportSource, type ImportedLink, type SourceDeps, type SourceHttpAnswer, type SourceOptions, type SourcePage, type SourceRowError } from '../source.ts';
import { advance, type KeyedRow } from './boundary.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { countOf, hostnameOf, isHttpUrl, isoDateOf, linkOf, textOf } from './mapping.ts';
import { baseUrlOf, checkParams, tokenOf } from './options.ts';
import { callRemote } from './remote.ts';
import { targetingOfDeviceLongUrls, targetingOfRules, type MappedTargeting } from './shlink-rules.ts';

/** Short URLs asked per request (Shlink's default is 10 and it sets no maximum). */
export const SHLINK_PAGE_SIZE = 100;

const CursorSchema = Type.Object(
  {
    /** `dateCreated` of the last short URL given out, exactly as Shlink wrote it (sent back as `startDate`). */
    since: Type.Union([Type.String(), Type.Null()]),
    seen: Type.Array(Type.String()),
    total: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  },
  { additionalProperties: false },
);
type Cursor = Static<typeof CursorSchema>;

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** The fields of docs/swagger/definitions/ShortUrl.json we read; `deviceLongUrls`/`visitsCount` are Shlink 3's. */
const ShortUrlSchema = Type.Object({
  shortCode: Type.String({ minLength: 1 }),
  shortUrl: Type.String(),
  longUrl: Type.String(),
  dateCreated: Type.String(),
  tags: Type.Array(Type.String()),
  domain: Type.Optional(NullableString),
  title: Type.Optional(NullableString),
  meta: Type.Optional(Type.Object({ validSince: Type.Optional(NullableString), validUntil: Type.Optional(NullableString), maxVisits: Type.Optional(Type.Union([Type.Number(), Type.Null()])) })),
  visitsSummary: Type.Optional(Type.Object({ total: Type.Integer({ minimum: 0 }) })),
  visitsCount: Type.Optional(Type.Integer({ minimum: 0 })),
  hasRedirectRules: Type.Optional(Type.Boolean()),
  deviceLongUrls: Type.Optional(Type.Object({ android: Type.Optional(NullableString), ios: Type.Optional(NullableString), desktop: Type.Optional(NullableString) })),
});
type ShortUrl = Static<typeof ShortUrlSchema>;

const ListSchema = Type.Object({
  shortUrls: Type.Object({
    data: Type.Array(Type.Unknown()),
    pagination: Type.Object({ currentPage: Type.Integer(), pagesCount: Type.Integer(), totalItems: Type.Integer({ minimum: 0 }) }),
  }),
});

const RulesSchema = Type.Object({
  redirectRules: Type.Array(
    Type.Object({
      longUrl: Type.String(),
      priority: Type.Number(),
      conditions: Type.Array(Type.Object({ type: Type.String(), matchKey: NullableString, matchValue: NullableString })),
    }),
  ),
});

interface Row extends KeyedRow {
  raw: unknown;
  dateCreated: string;
}

export function createShlinkSource(options: SourceOptions, deps: SourceDeps): ImportSource {
  checkParams(options, 'Shlink', []);
  // People paste the API's URL as often as the instance's.
  const base = baseUrlOf(options, 'Shlink', /\/rest(?:\/v\d+)?$/);
  const headers = { 'x-api-key': tokenOf(options, 'Shlink', 'an API key (`shlink api-key:generate` creates one)'), accept: 'application/json' };
  // Shlink 3.0 to 3.4 has neither device URLs nor redirect rules; the first 404 of the rules route says so.
  let hasRulesRoute = true;

  async function list(cursor: Cursor, size: number, signal: AbortSignal) {
    const query = new URLSearchParams({ orderBy: 'dateCreated-ASC', page: '1', itemsPerPage: String(size) });
    if (cursor.since !== null) query.set('startDate', cursor.since);
    const answer = await callRemote(deps, { method: 'GET', url: `${base}/rest/v3/short-urls?${query.toString()}`, headers }, signal);
    if (answer.status === 404) throw new SourceError('input', `${base} does not serve Shlink's REST API v3 (HTTP 404): check the base URL (Shlink 3.0 or later is needed)`);
    const json = jsonOf(answer);
    if (answer.status !== 200) throw new SourceError('remote', `Shlink refused to list short URLs: ${problemOf(answer.status, json)}`);
    if (!Value.Check(ListSchema, json)) throw new SourceError('remote', 'Shlink answered the short URL list in a shape this reader does not know');
    return json.shortUrls;
  }

  async function targetingOf(shortUrl: ShortUrl, signal: AbortSignal): Promise<MappedTargeting> {
    if (shortUrl.deviceLongUrls) return targetingOfDeviceLongUrls(shortUrl.deviceLongUrls);
    // Shlink 4.3 says whether a short URL has rules; 4.0 to 4.2 have them without saying, so those are asked each time.
    const mayHaveRules = shortUrl.hasRedirectRules ?? hasRulesRoute;
    if (!mayHaveRules) return { targeting: [], warnings: [] };
    // A multi-segment slug keeps its slashes: an instance that allows them routes them that way.
    const path = shortUrl.shortCode.split('/').map(encodeURIComponent).join('/');
    const query = shortUrl.domain ? `?${new URLSearchParams({ domain: shortUrl.domain }).toString()}` : '';
    const answer = await callRemote(deps, { method: 'GET', url: `${base}/rest/v3/short-urls/${path}/redirect-rules${query}`, headers }, signal);
    const json = jsonOf(answer);
    if (answer.status === 404) {
      // Deleted since it was listed: it had no rules worth keeping. Any other 404 is a Shlink without the route.
      if (!problemTypeIs(json, 'short-url-not-found')) hasRulesRoute = false;
      return { targeting: [], warnings: [] };
    }
    if (answer.status !== 200) throw new SourceError('remote', `Shlink refused the redirect rules of ${shortUrl.shortCode}: ${problemOf(answer.status, json)}`);
    if (!Value.Check(RulesSchema, json)) throw new SourceError('remote', `Shlink answered the redirect rules of ${shortUrl.shortCode} in a shape this reader does not know`);
    return targetingOfRules(json.redirectRules);
  }

  async function linkOrError(raw: unknown, id: string, signal: AbortSignal): Promise<ImportedLink | SourceRowError> {
    if (!Value.Check(ShortUrlSchema, raw)) return { ref: id, message: 'Shlink answered this short URL without a field this reader needs' };
    if (!isHttpUrl(raw.longUrl)) return { ref: id, message: `its long URL ${JSON.stringify(raw.longUrl)} is not an absolute http(s) URL` };
    const { targeting, warnings } = await targetingOf(raw, signal);
    const validSince = textOf(raw.meta?.validSince);
    if (validSince) warnings.unshift(`Shlink only redirects it from ${validSince}; Linkplane links have no start date`);
    if (typeof raw.meta?.maxVisits === 'number') warnings.unshift(`Shlink stops it after ${raw.meta.maxVisits} visits; Linkplane links have no visit limit`);
    return linkOf(id, raw.longUrl, {
      domain: raw.domain ? raw.domain.toLowerCase() : hostnameOf(raw.shortUrl),
      slug: raw.shortCode,
      title: textOf(raw.title),
      tags: raw.tags,
      createdAt: isoDateOf(raw.dateCreated),
      expiresAt: isoDateOf(raw.meta?.validUntil),
      targeting,
      clicksTotal: raw.visitsSummary?.total ?? countOf(raw.visitsCount),
      ...(warnings.length > 0 && { warnings }),
    });
  }

  return {
    kind: 'shlink',
    async page(cursorText, signal): Promise<SourcePage> {
      const cursor: Cursor = cursorText === null ? { since: null, seen: [], total: null } : decodeCursor('shlink', cursorText, CursorSchema);
      // Room for the whole group at the boundary plus a page of new ones, however Shlink orders the group.
      const size = cursor.seen.length + SHLINK_PAGE_SIZE;
      const { data, pagination } = await list(cursor, size, signal);
      const rows: Row[] = [];
      const errors: SourceRowError[] = [];
      for (const [index, raw] of data.entries()) {
        const row = keyedRowOf(raw);
        if (row) rows.push(row);
        else errors.push({ ref: `short URL ${index + 1} of the page from ${cursor.since ?? 'the start'}`, message: 'Shlink answered it without a short code or creation date' });
      }
      const step = advance(rows, { key: cursor.since === null ? null : Date.parse(cursor.since), seen: cursor.seen }, 'asc');
      const links: ImportedLink[] = [];
      for (const row of step.fresh) {
        const mapped = await linkOrError(row.raw, row.id, signal);
        if ('url' in mapped) links.push(mapped);
        else errors.push(mapped);
      }
      const total = cursor.total ?? pagination.totalItems;
      const last = data.length < size || pagination.pagesCount <= pagination.currentPage;
      const since = step.groupStart === null ? cursor.since : rows[step.groupStart]!.dateCreated;
      return { links, errors, total, next: last ? null : encodeCursor('shlink', { since, seen: step.boundary.seen, total }) };
    },
  };
}

/** Shlink identifies a short URL by its short code and domain; the id is both, with the default domain's name. */
function keyedRowOf(raw: unknown): Row | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const { shortCode, dateCreated, domain, shortUrl } = raw as Record<string, unknown>;
  if (typeof shortCode !== 'string' || typeof dateCreated !== 'string') return null;
  const key = Date.parse(dateCreated);
  if (Number.isNaN(key)) return null;
  const host = typeof domain === 'string' && domain !== '' ? domain.toLowerCase() : hostnameOf(shortUrl);
  return { id: `${host ?? ''}/${shortCode}`, key, raw, dateCreated };
}

function jsonOf(answer: SourceHttpAnswer): unknown {
  try {
    return JSON.parse(answer.body) as unknown;
  } catch {
    return null;
  }
}

/** The problem+json `detail` (or `title`) of an error answer. */
function problemOf(status: number, json: unknown): string {
  const problem = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const text = typeof problem.detail === 'string' ? problem.detail : typeof problem.title === 'string' ? problem.title : 'no detail';
  return `HTTP ${status}, ${text}`;
}

/** Shlink's problem types are `https://shlink.io/api/error/<code>`; API v1 and v2 used the bare code. */
function problemTypeIs(json: unknown, code: string): boolean {
  const type = typeof json === 'object' && json !== null ? (json as Record<string, unknown>).type : undefined;
  return typeof type === 'string' && (type === code || type.endsWith(`/${code}`));
}
