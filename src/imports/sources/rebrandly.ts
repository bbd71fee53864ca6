// Reads a Rebrandly workspace's branded links through Rebrandly's REST API. Followed:
// - https://developers.rebrandly.com/docs/list-links: `GET /v1/links` with `orderBy` (createdAt), `orderDir` (desc),
//   `last` (the id of the last link fetched), `limit` (at most 25), `domain.fullName`.
// - https://developers.rebrandly.com/docs/understanding-pagination: pages of at most 25, the next one after `last`
//   in the same order, excluded.
// - https://developers.rebrandly.com/docs/counting-your-links: `GET /v1/links/count`, `{ count }` (filters: `favourite`,
//   `domain.id`; not the domain's name).
// - https://developers.rebrandly.com/docs/link-entity: the link (`id`, `title`, `slashtag`, `destination`, `domain`
//   { id, fullName }, `createdAt`, `clicks`...).
// - https://developers.rebrandly.com/docs/workspaces and /docs/get-started: the `apikey` header; the `workspace`
//   header chooses a workspace other than the main one.
// - https://developers.rebrandly.com/docs/model-overview and /docs/troubleshooting: 401 for refused credentials,
//   403 with JSON validation details for an invalid request (so a 403 is not taken for a refused key), 429 when the
//   rate limit (10 requests a second, 20,000 an hour: /docs/api-limits) is exceeded.
// Where the reference is silent: the headers of a 429 (the troubleshooting page says to read the reset time from
// them without naming them; Retry-After and X-RateLimit-Reset are both read, else the wait backs off), and the answer
// to a `last` id that no longer exists (taken to be a 404, as for any unknown resource, and resumed past with resume
// anchors). Tags come with each link as `{ id, name, color }`, as the tags endpoint describes a tag, when the list
// includes them; none is requested per link.
import type { ImportSource, ImportedLink, SourceDeps, SourceHttpAnswer, SourceOptions, SourcePage, SourceRowError } from '../source.ts';
import { SourceError } from '../source.ts';
import { callRemoteJson } from './remote.ts';
import { decodeCursor, encodeCursor, isStringArray } from './cursor.ts';
import { count, destinationProblem, httpUrl, importedLink, isRow, rowRef, sourceDate, tagNames, text, type Row } from './link-fields.ts';
import { rateLimitWaitMs } from './rate-limit-headers.ts';
import { ANCHOR_GONE, anchorsOf, readAfterAnchors } from './resume-anchors.ts';
import { optionalParam, remoteOptions } from './source-options.ts';

const DEFAULT_BASE_URL = 'https://api.rebrandly.com';
const PAGE_SIZE = 25;

/** `workspace`: a workspace id (default: the main workspace); `domain`: one branded domain's full name. */
export const REBRANDLY_PARAMS = ['workspace', 'domain'] as const;

interface RebrandlyState {
  /** Resume anchors: the last ids of the page before, the one to try first last. */
  a: string[];
}

function isRebrandlyState(state: unknown): state is RebrandlyState {
  return isRow(state) && isStringArray(state['a']);
}

export function createRebrandlySource(options: SourceOptions, deps: SourceDeps): ImportSource {
  const { token, baseUrl, params } = remoteOptions('rebrandly', options, DEFAULT_BASE_URL, REBRANDLY_PARAMS);
  const workspace = optionalParam('rebrandly', params, 'workspace', /^[A-Za-z0-9_-]{1,64}$/, 'a Rebrandly workspace id');
  const domain = optionalParam('rebrandly', params, 'domain', /^[A-Za-z0-9.-]{1,253}$/, 'a domain name');
  const filter: Record<string, string> = domain === null ? {} : { 'domain.fullName': domain.toLowerCase() };

  function get(path: string, query: Record<string, string>, signal: AbortSignal): Promise<{ answer: SourceHttpAnswer; json: unknown }> {
    return callRemoteJson(
      deps,
      {
        method: 'GET',
        url: `${baseUrl}${path}?${new URLSearchParams(query).toString()}`,
        headers: { apikey: token, accept: 'application/json', ...(workspace === null ? {} : { workspace }) },
      },
      signal,
      { isAuthFailure: (answer) => answer.status === 401, waitOf: rateLimitWaitMs, now: deps.now ?? Date.now },
    );
  }

  async function list(last: string | null, signal: AbortSignal): Promise<unknown[] | typeof ANCHOR_GONE> {
    const query = { orderBy: 'createdAt', orderDir: 'desc', limit: String(PAGE_SIZE), ...filter, ...(last === null ? {} : { last }) };
    const { answer, json } = await get('/v1/links', query, signal);
    if (answer.status === 404 && last !== null) return ANCHOR_GONE;
    if (answer.status !== 200) throw refusal(answer, json, 'listing the links');
    if (!Array.isArray(json)) throw new SourceError('remote', 'rebrandly answered the list of links with something other than an array');
    return json as unknown[];
  }

  async function total(signal: AbortSignal): Promise<number | null> {
    const { answer, json } = await get('/v1/links/count', {}, signal);
    if (answer.status !== 200) throw refusal(answer, json, 'counting the links');
    return isRow(json) ? count(json['count']) : null;
  }

  return {
    kind: 'rebrandly',
    async page(cursor: string | null, signal: AbortSignal): Promise<SourcePage> {
      const anchors = cursor === null ? [] : decodeCursor('rebrandly', cursor, isRebrandlyState).a;
      // Rebrandly counts by domain id, not by name: with a domain chosen, the total is left unknown
      const size = cursor === null && domain === null ? await total(signal) : null;
      const rows = await readAfterAnchors('rebrandly', anchors, (last) => list(last, signal));
      const links: ImportedLink[] = [];
      const errors: SourceRowError[] = [];
      for (const [index, row] of rows.entries()) {
        const mapped = mapRebrandlyLink(row, index);
        if ('error' in mapped) errors.push(mapped.error);
        else links.push(mapped);
      }
      const next = rows.length === PAGE_SIZE ? encodeCursor('rebrandly', { a: anchorsOf(rows, idOf) } satisfies RebrandlyState) : null;
      return { links, errors, next, total: size };
    },
  };
}

function idOf(row: unknown): string | null {
  return isRow(row) ? text(row['id']) : null;
}

function mapRebrandlyLink(row: unknown, index: number): ImportedLink | { error: SourceRowError } {
  const fields: Row = isRow(row) ? row : {};
  const id = text(fields['id']);
  if (id === null) return { error: { ref: rowRef(index, fields['shortUrl']), message: 'the link has no id' } };
  const url = httpUrl(fields['destination']);
  if (url === null) return { error: { ref: id, message: destinationProblem(fields['destination']) } };
  const domain = isRow(fields['domain']) ? text(fields['domain']['fullName']) : null;
  return {
    ...importedLink(id, url),
    domain,
    slug: text(fields['slashtag']),
    title: text(fields['title']),
    tags: tagNames(fields['tags']),
    createdAt: sourceDate(fields['createdAt']),
    clicksTotal: count(fields['clicks']),
  };
}

function refusal(answer: SourceHttpAnswer, json: unknown, doing: string): SourceError {
  const body = isRow(json) ? json : {};
  const said = [text(body['code']), text(body['property']), text(body['message'])].filter((part) => part !== null).join(' ');
  const detail = `HTTP ${answer.status}${said ? ` ${said}` : ''}`;
  // 403 is Rebrandly's answer to invalid parameters, 404 to an unknown workspace or domain: both the options given
  if (answer.status === 403 || answer.status === 404) return new SourceError('input', `rebrandly refused ${doing} (${detail}); check the workspace and domain given`);
  return new SourceError('remote', `rebrandly refused ${doing} (${detail})`);
}
