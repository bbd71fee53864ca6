// Reads a YOURLS install through yourls-api.php, as YOURLS documents it (https://yourls.org/docs/guide/advanced/api,
// https://yourls.org/docs/guide/advanced/passwordless-api) and as its code answers (yourls-api.php,
// includes/functions-api.php, functions.php `yourls_get_stats`, functions-auth.php, auth.php in
// github.com/YOURLS/YOURLS). The one action that lists links is `stats`: `filter=last` sorts them newest first by
// their `timestamp` (to the second), `limit` bounds the count and `start` is an offset (in the code since 1.6; the
// documentation page does not list it). Links come as an object `{ link_1: {...}, link_2: ... }` of `shorturl`, `url`,
// `title`, `timestamp`, `ip` and `clicks`: no keyword of its own (it is the short URL's path), no tags, no expiry, no
// password. Authentication is the signature token or a username and password, sent here in a POST body rather than
// the query string so they stay out of access logs; a refusal is `{ errorCode: "403", message }` with HTTP 403.
// YOURLS has no rate limit of its own; a host in front of it may answer 429 or 503, which callRemote waits out.
//
// Many links share a timestamp (a bulk import creates hundreds a second) and MySQL orders a tie as it likes, differently
// for different offsets, so pages are read by boundary (boundary.ts): each request starts one row before the group at
// the boundary, re-reads the group and keeps what is new. That row must be newer than the boundary; when it is not,
// links were deleted above the offset and the request steps back. Links created during the import sort first and are
// not read; a run of the import afterwards picks them up.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { SourceError, type ImportSource, type ImportedLink, type SourceDeps, type SourceOptions, type SourcePage, type SourceRowError } from '../source.ts';
import { advance, comesBefore, type KeyedRow } from './boundary.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { countOf, decodePath, isHttpUrl, linkOf, sqlUtcDateOf, textOf } from './mapping.ts';
import { baseUrlOf, checkParams } from './options.ts';
import { callRemote } from './remote.ts';

export const YOURLS_PAGE_SIZE = 100;
/** Steps back, a page each, before reading on from where we are anyway (links deleted by the thousand meanwhile). */
const MAX_STEPS_BACK = 20;

const CursorSchema = Type.Object(
  {
    /** Offset where the group of the boundary timestamp began when last read. */
    at: Type.Integer({ minimum: 0 }),
    key: Type.Union([Type.String(), Type.Null()]),
    seen: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);
type Cursor = Static<typeof CursorSchema>;

const LinkSchema = Type.Object({
  shorturl: Type.String(),
  url: Type.String(),
  title: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  timestamp: Type.String(),
  clicks: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
});
type YourlsLink = Static<typeof LinkSchema>;

interface Row extends KeyedRow {
  link: YourlsLink;
  domain: string;
  /** Index among the links of the answer. */
  position: number;
}

interface Stats {
  rows: Row[];
  errors: Array<SourceRowError & { position: number }>;
  count: number;
  total: number | null;
}

export function createYourlsSource(options: SourceOptions, deps: SourceDeps): ImportSource {
  checkParams(options, 'YOURLS', ['username', 'password']);
  const base = baseUrlOf(options, 'YOURLS', /\/yourls-api\.php$/);
  const api = `${base}/yourls-api.php`;
  const sitePath = new URL(base).pathname.replace(/\/$/, '');
  const credentials = credentialsOf(options);

  async function stats(start: number, limit: number, signal: AbortSignal): Promise<Stats> {
    const body = new URLSearchParams({ action: 'stats', filter: 'last', limit: String(limit), start: String(start), format: 'json', ...credentials });
    const answer = await callRemote(deps, { method: 'POST', url: api, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: body.toString() }, signal);
    if (answer.status === 404) throw new SourceError('input', `${api} was not found (HTTP 404): check the YOURLS base URL`);
    let json: unknown;
    try {
      json = JSON.parse(answer.body);
    } catch {
      throw new SourceError('input', `${api} did not answer as YOURLS's API does (HTTP ${answer.status}, not JSON): check the YOURLS base URL`);
    }
    const reply = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
    // YOURLS sets the HTTP status from errorCode, unless a plugin printed something first; the body is what counts.
    const message = typeof reply.message === 'string' ? reply.message : 'no message';
    if (String(reply.errorCode) === '403') throw new SourceError('auth', `YOURLS refused the credentials: ${message}`);
    if (reply.errorCode !== undefined || answer.status !== 200) throw new SourceError('remote', `YOURLS refused to list links: HTTP ${answer.status}, ${message}`);
    return rowsOf(reply, sitePath);
  }

  return {
    kind: 'yourls',
    async page(cursorText, signal): Promise<SourcePage> {
      const cursor: Cursor = cursorText === null ? { at: 0, key: null, seen: [] } : decodeCursor('yourls', cursorText, CursorSchema);
      let start = Math.max(0, cursor.at - 1);
      let limit: number;
      let read: Stats;
      for (let step = 0; ; step++) {
        // Room for the rows before the group, the group given out so far and a page of new ones.
        limit = cursor.at - start + cursor.seen.length + YOURLS_PAGE_SIZE;
        read = await stats(start, limit, signal);
        const first = read.rows[0];
        const movedUp = cursor.key !== null && start > 0 && first?.position === 0 && !comesBefore(first.key, cursor.key, 'desc');
        if (!movedUp || step === MAX_STEPS_BACK) break;
        start = Math.max(0, start - YOURLS_PAGE_SIZE);
      }
      const step = advance(read.rows, { key: cursor.key, seen: cursor.seen }, 'desc');
      const links: ImportedLink[] = [];
      // An unreadable link in the rows re-read before the boundary was reported with its page (one inside a re-read
      // tie may be reported again).
      const errors: SourceRowError[] = read.errors.filter((error) => start + error.position >= cursor.at).map(({ ref, message }) => ({ ref, message }));
      for (const row of step.fresh) {
        const mapped = rowToLink(row);
        if ('url' in mapped) links.push(mapped);
        else errors.push(mapped);
      }
      const next: Cursor =
        step.groupStart === null
          ? { ...cursor, at: start + read.count }
          : { at: start + read.rows[step.groupStart]!.position, key: step.boundary.key as string, seen: step.boundary.seen };
      return { links, errors, total: read.total, next: read.count < limit ? null : encodeCursor('yourls', next) };
    },
  };
}

function credentialsOf(options: SourceOptions): Record<string, string> {
  const signature = options.token?.trim();
  const { username, password } = options.params;
  if (signature) return { signature };
  if (username && password) return { username, password };
  if (username || password) throw new SourceError('input', 'YOURLS needs both a username and a password (or the signature token instead)');
  // A public install asks for nothing; a private one answers 403, which says what is missing.
  return {};
}

function rowsOf(reply: Record<string, unknown>, sitePath: string): Stats {
  const links = typeof reply.links === 'object' && reply.links !== null ? (reply.links as Record<string, unknown>) : {};
  // `link_1`, `link_2`... in the order of the query; sorted on the number rather than trusting key order.
  const entries = Object.entries(links).sort(([a], [b]) => Number(a.slice(5)) - Number(b.slice(5)));
  const stats = reply.stats as Record<string, unknown> | undefined;
  const result: Stats = { rows: [], errors: [], count: entries.length, total: countOf(stats?.total_links) };
  for (const [position, [name, link]] of entries.entries()) {
    const short = Value.Check(LinkSchema, link) ? URL.parse(link.shorturl) : null;
    const keyword = short ? keywordOf(short, sitePath) : '';
    if (!short || keyword === '' || !sqlUtcDateOf((link as YourlsLink).timestamp)) {
      result.errors.push({ ref: short ? keyword || (link as YourlsLink).shorturl : name, message: 'YOURLS answered this link without a readable short URL or timestamp', position });
      continue;
    }
    result.rows.push({ id: keyword, key: (link as YourlsLink).timestamp, link: link as YourlsLink, domain: short.hostname.toLowerCase(), position });
  }
  return result;
}

/**
 * YOURLS writes a short URL as its site URL, `/`, the keyword. A standard install serves yourls-api.php from the site
 * URL, so the site's directory (if any) is the base URL's path.
 */
function keywordOf(short: URL, sitePath: string): string {
  const path = short.pathname;
  const rest = sitePath !== '' && path.startsWith(`${sitePath}/`) ? path.slice(sitePath.length + 1) : path.slice(1);
  return decodePath(rest);
}

function rowToLink(row: Row): ImportedLink | SourceRowError {
  const { link } = row;
  if (!isHttpUrl(link.url)) return { ref: row.id, message: `its long URL ${JSON.stringify(link.url)} is not an absolute http(s) URL` };
  return linkOf(row.id, link.url, {
    domain: row.domain,
    slug: row.id,
    title: textOf(link.title),
    // YOURLS writes it in UTC (it sets PHP's time zone to UTC), without saying so.
    createdAt: sqlUtcDateOf(link.timestamp),
    clicksTotal: countOf(link.clicks),
  });
}
