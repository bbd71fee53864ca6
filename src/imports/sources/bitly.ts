// Reads a Bitly group's links through Bitly's API v4. Followed:
// - https://dev.bitly.com/api-reference: Retrieve Bitlinks by Group (`GET /v4/groups/{group_guid}/bitlinks`, `size`,
//   `archived` on|off|both, default off), Retrieve a User (`GET /v4/user`, `default_group_guid`), Get a Clicks Summary
//   for a Bitlink (`GET /v4/bitlinks/{bitlink}/clicks/summary`, `unit`, `units=-1` for all time, `total_clicks`); the
//   Bitlink body (`id` = domain/back-half, `long_url`, `title`, `tags`, `created_at`, `custom_bitlinks`,
//   `expiration_at`); errors as `{ message, resource, description }` with 400 BAD_REQUEST, 403 FORBIDDEN, 404
//   NOT_FOUND, 429 (RATE_LIMIT_EXCEEDED, MONTHLY_LIMIT_EXCEEDED).
// - https://dev.bitly.com/docs/getting-started/changes-to-retrieve-bitlinks-by-group/: iterate with `search_after`
//   from the `pagination` struct; an empty `search_after` means the last batch was returned.
// - https://dev.bitly.com/docs/getting-started/rate-limits/: per-hour and per-minute limits per endpoint (the minute
//   one a tenth of the hourly one), reset once each minute and each hour; at most five concurrent connections per IP.
// - https://dev.bitly.com/docs/getting-started/migrating-from-v3/: `Authorization: Bearer {token}`; the user's
//   default group.
// Bitly documents no Retry-After: a 429 without one waits for the next minute, when the per-minute limit resets. The
// size limit of a page is not stated on the reference page; 100 is what Bitly's own clients use as the maximum.
// Clicks are not in the list: totals take one call per link, so they are read only when the job asks (`clicks`).
import type { ImportSource, ImportedLink, SourceDeps, SourceHttpAnswer, SourceOptions, SourcePage, SourceRowError } from '../source.ts';
import { SourceError } from '../source.ts';
import { callRemoteJson } from './remote.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { count, destinationProblem, httpUrl, importedLink, isRow, rowRef, sourceDate, tagNames, text, type Row } from './link-fields.ts';
import { rateLimitWaitMs } from './rate-limit-headers.ts';
import { optionalParam, remoteOptions } from './source-options.ts';

const DEFAULT_BASE_URL = 'https://api-ssl.bitly.com';
const PAGE_SIZE = 100;
/** Waiting for the next minute, a little past it, so the retry lands after the reset. */
const PAST_THE_MINUTE_MS = 1000;

/** `group`: a group guid (default: the token's user's default group); `clicks`: `per_link` to read click totals. */
export const BITLY_PARAMS = ['group', 'clicks'] as const;

interface BitlyState {
  /** The group guid being read. */
  g: string;
  /** Bitly's `search_after` for the next batch; null for the first. */
  a: string | null;
}

function isBitlyState(state: unknown): state is BitlyState {
  return isRow(state) && typeof state['g'] === 'string' && (state['a'] === null || typeof state['a'] === 'string');
}

export function createBitlySource(options: SourceOptions, deps: SourceDeps): ImportSource {
  const { token, baseUrl, params } = remoteOptions('bitly', options, DEFAULT_BASE_URL, BITLY_PARAMS);
  const group = optionalParam('bitly', params, 'group', /^[A-Za-z0-9_-]{1,64}$/, 'a Bitly group guid');
  const clicks = optionalParam('bitly', params, 'clicks', /^(none|per_link)$/, '`none` or `per_link`') ?? 'none';
  const now = deps.now ?? Date.now;

  function get(path: string, signal: AbortSignal): Promise<{ answer: SourceHttpAnswer; json: unknown }> {
    return callRemoteJson(
      deps,
      { method: 'GET', url: `${baseUrl}${path}`, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } },
      signal,
      { isRateLimited: (a) => a.status === 429 && !isMonthlyLimit(a), waitOf: (a, at) => rateLimitWaitMs(a, at) ?? untilNextMinute(at), now },
    );
  }

  async function defaultGroup(signal: AbortSignal): Promise<string> {
    const { answer, json } = await get('/v4/user', signal);
    if (!isSuccess(answer)) throw refusal(answer, json, 'reading the user');
    const guid = isRow(json) ? text(json['default_group_guid']) : null;
    if (guid === null) throw new SourceError('input', 'bitly: the account has no default group; give the group guid to import');
    return guid;
  }

  /** The bitlink's clicks of all time; null when Bitly no longer knows the bitlink (deleted since the list was read). */
  async function clicksOf(bitlink: string, signal: AbortSignal): Promise<number | null> {
    const path = bitlink.split('/').map(encodeURIComponent).join('/');
    const { answer, json } = await get(`/v4/bitlinks/${path}/clicks/summary?unit=day&units=-1`, signal);
    if (answer.status === 404) return null;
    if (!isSuccess(answer)) throw refusal(answer, json, `reading the clicks of ${bitlink}`);
    return isRow(json) ? count(json['total_clicks']) : null;
  }

  return {
    kind: 'bitly',
    async page(cursor: string | null, signal: AbortSignal): Promise<SourcePage> {
      const state: BitlyState = cursor === null ? { g: group ?? (await defaultGroup(signal)), a: null } : decodeCursor('bitly', cursor, isBitlyState);
      const query = new URLSearchParams({ size: String(PAGE_SIZE), archived: 'both' });
      if (state.a !== null) query.set('search_after', state.a);
      const { answer, json } = await get(`/v4/groups/${encodeURIComponent(state.g)}/bitlinks?${query.toString()}`, signal);
      if (answer.status === 404) throw new SourceError('input', `bitly: this token sees no group ${state.g}`);
      if (!isSuccess(answer)) throw refusal(answer, json, `listing the bitlinks of group ${state.g}`);
      if (!isRow(json) || !Array.isArray(json['links'])) throw new SourceError('remote', 'bitly answered the list of bitlinks without a `links` array');
      const rows: unknown[] = json['links'];
      const pagination = isRow(json['pagination']) ? json['pagination'] : {};

      const links: ImportedLink[] = [];
      const errors: SourceRowError[] = [];
      for (const [index, row] of rows.entries()) {
        const mapped = mapBitlink(row, index);
        if ('error' in mapped) {
          errors.push(mapped.error);
          continue;
        }
        if (clicks === 'per_link') mapped.links[0]!.clicksTotal = await clicksOf(mapped.links[0]!.sourceId, signal);
        links.push(...mapped.links);
      }
      const searchAfter = text(pagination['search_after']);
      const next = rows.length > 0 && searchAfter !== null ? encodeCursor('bitly', { g: state.g, a: searchAfter } satisfies BitlyState) : null;
      return { links, errors, next, total: count(pagination['total']) };
    },
  };
}

/**
 * A bitlink, and one link more for each of its custom back-halves (`custom_bitlinks`, such as a branded domain's
 * `go.example.com/launch`), which Bitly keeps as other short links to the same bitlink. Its clicks are counted once,
 * on the bitlink itself.
 */
function mapBitlink(row: unknown, index: number): { links: ImportedLink[] } | { error: SourceRowError } {
  const fields: Row = isRow(row) ? row : {};
  const id = text(fields['id']);
  if (id === null) return { error: { ref: rowRef(index, fields['link']), message: 'the bitlink has no id' } };
  const url = httpUrl(fields['long_url']);
  if (url === null) return { error: { ref: id, message: destinationProblem(fields['long_url']) } };
  const link = importedLink(id, url);
  Object.assign(link, {
    ...domainAndSlug(id),
    title: text(fields['title']),
    tags: tagNames(fields['tags']),
    createdAt: sourceDate(fields['created_at']),
    expiresAt: sourceDate(fields['expiration_at']),
  });
  const aliases = Array.isArray(fields['custom_bitlinks']) ? fields['custom_bitlinks'] : [];
  const custom = aliases
    .map((alias) => customBitlinkId(alias))
    .filter((alias): alias is string => alias !== null && alias !== id)
    .map((alias): ImportedLink => ({ ...link, sourceId: alias, ...domainAndSlug(alias) }));
  return { links: [link, ...custom] };
}

function domainAndSlug(bitlink: string): { domain: string; slug: string | null } {
  const [domain, ...path] = bitlink.split('/');
  return { domain: domain!, slug: path.join('/') || null };
}

/** `https://go.example.com/launch` (or without its scheme) as a bitlink id, `go.example.com/launch`. */
function customBitlinkId(value: unknown): string | null {
  const given = text(value);
  if (given === null) return null;
  const absolute = /^https?:\/\//i.test(given) ? given : `https://${given}`;
  if (!URL.canParse(absolute)) return null;
  const { host, pathname } = new URL(absolute);
  return pathname.length > 1 ? `${host}${decodeURIComponent(pathname)}` : null;
}

function bodyOf(answer: SourceHttpAnswer): Row {
  try {
    const json: unknown = JSON.parse(answer.body);
    return isRow(json) ? json : {};
  } catch {
    return {};
  }
}

function isMonthlyLimit(answer: SourceHttpAnswer): boolean {
  return answer.status === 429 && bodyOf(answer)['message'] === 'MONTHLY_LIMIT_EXCEEDED';
}

function untilNextMinute(now: number): number {
  return 60_000 - (now % 60_000) + PAST_THE_MINUTE_MS;
}

function isSuccess(answer: SourceHttpAnswer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

function refusal(answer: SourceHttpAnswer, json: unknown, doing: string): SourceError {
  const body = isRow(json) ? json : {};
  const said = [text(body['message']), text(body['description'])].filter((part) => part !== null).join(': ');
  const detail = said === '' ? `HTTP ${answer.status}` : `HTTP ${answer.status} ${said}`;
  if (isMonthlyLimit(answer)) return new SourceError('remote', `bitly: the account's monthly API allowance is used up (${detail})`);
  return new SourceError('remote', `bitly refused ${doing} (${detail})`);
}
