// Reads a Short.io account's links, domain by domain, through Short.io's REST API. Followed:
// - Short.io's OpenAPI document (https://api.short.io/openapi.json, as its official Node SDK, Short-io/client-node,
//   is generated from it): `GET /api/links` (`domain_id` required, `limit`, `dateSortOrder`, `pageToken`; answers
//   `{ count, links, nextPageToken? }`, errors `{ error }`), the link's fields (`idString`, `path`, `originalURL`,
//   `title`, `tags`, `createdAt` and `expiresAt` in milliseconds or ISO, `expiredURL`, `password`, `hasPassword`,
//   `utmSource`...`utmContent`, `iphoneURL`, `androidURL`), `GET /api/domains` (`limit`, `offset`; `id`, `hostname`).
// - https://developers.short.io/docs/getting-a-list-of-links: the secret API key in the `authorization` header, the
//   domain's id, a `limit` below 150.
// - The official SDK's README (rate limits and their handling): a 429 with Retry-After (seconds) and
//   X-RateLimit-Reset (a Unix timestamp).
// Not read, and why: per-country and per-region redirects need one request per link (`/link_country/{linkId}`) and
// the reference does not describe their answer; click totals live in a separate statistics API, one request per link.
// A link Short.io reports as password-protected without giving the password becomes a row error rather than an open
// link. A domain's root redirect (empty path) is the domain's setting, not a short link.
import type { ImportSource, ImportedLink, SourceDeps, SourceHttpAnswer, SourceOptions, SourcePage, SourceRowError } from '../source.ts';
import { SourceError } from '../source.ts';
import { callRemoteJson } from './remote.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { destinationProblem, httpUrl, importedLink, isRow, rowRef, sourceDate, tagNames, text, utmOf, type Row } from './link-fields.ts';
import { rateLimitWaitMs } from './rate-limit-headers.ts';
import { optionalParam, remoteOptions } from './source-options.ts';

const DEFAULT_BASE_URL = 'https://api.short.io';
const PAGE_SIZE = 100;
const DOMAINS_PAGE_SIZE = 100;
/** Short.io's names of the UTM parameters it keeps apart. */
const SHORTIO_UTM = { utm_source: 'utmSource', utm_medium: 'utmMedium', utm_campaign: 'utmCampaign', utm_term: 'utmTerm', utm_content: 'utmContent' } as const;

/** `domain`: one domain, by its id or its host name (default: every domain of the account). */
export const SHORTIO_PARAMS = ['domain'] as const;

interface ShortioState {
  /** Domains still to read as [id, host name], the current one first. */
  q: Array<[number, string]>;
  /** Short.io's `pageToken` within the current domain; null for its first page. */
  t: string | null;
}

function isShortioState(state: unknown): state is ShortioState {
  return (
    isRow(state) &&
    Array.isArray(state['q']) &&
    state['q'].every((entry) => Array.isArray(entry) && entry.length === 2 && Number.isSafeInteger(entry[0]) && typeof entry[1] === 'string') &&
    (state['t'] === null || typeof state['t'] === 'string')
  );
}

export function createShortioSource(options: SourceOptions, deps: SourceDeps): ImportSource {
  const { token, baseUrl, params } = remoteOptions('shortio', options, DEFAULT_BASE_URL, SHORTIO_PARAMS);
  const domain = optionalParam('shortio', params, 'domain', /^(\d+|[A-Za-z0-9.-]{1,253})$/, 'a Short.io domain id or host name');

  async function get(path: string, query: Record<string, string>, doing: string, signal: AbortSignal): Promise<unknown> {
    const { answer, json } = await callRemoteJson(
      deps,
      { method: 'GET', url: `${baseUrl}${path}?${new URLSearchParams(query).toString()}`, headers: { authorization: token, accept: 'application/json' } },
      signal,
      { waitOf: rateLimitWaitMs, now: deps.now ?? Date.now },
    );
    if (answer.status !== 200) throw refusal(answer, json, doing);
    return json;
  }

  async function domains(signal: AbortSignal): Promise<Array<[number, string]>> {
    const found: Array<[number, string]> = [];
    for (let offset = 0; ; offset += DOMAINS_PAGE_SIZE) {
      const json = await get('/api/domains', { limit: String(DOMAINS_PAGE_SIZE), offset: String(offset) }, 'listing the domains', signal);
      const rows = Array.isArray(json) ? json : [];
      for (const row of rows) {
        const id = isRow(row) ? row['id'] : null;
        const host = isRow(row) ? text(row['hostname']) : null;
        if (typeof id === 'number' && Number.isSafeInteger(id) && host !== null) found.push([id, host]);
      }
      if (rows.length < DOMAINS_PAGE_SIZE) break;
    }
    if (domain === null) return found;
    const chosen = found.filter(([id, host]) => String(id) === domain || host.toLowerCase() === domain.toLowerCase());
    if (chosen.length === 0) throw new SourceError('input', `shortio: the account has no domain ${domain}`);
    return chosen;
  }

  return {
    kind: 'shortio',
    async page(cursor: string | null, signal: AbortSignal): Promise<SourcePage> {
      let state: ShortioState | null = cursor === null ? { q: await domains(signal), t: null } : decodeCursor('shortio', cursor, isShortioState);
      let rows: unknown[] = [];
      let host = '';
      // a domain without links goes on to the next one, so a page is empty only at the very end
      while (state !== null && state.q.length > 0 && rows.length === 0) {
        const [id, name] = state.q[0]!;
        host = name;
        const query = { domain_id: String(id), limit: String(PAGE_SIZE), dateSortOrder: 'desc', ...(state.t === null ? {} : { pageToken: state.t }) };
        const json = await get('/api/links', query, `listing the links of ${name}`, signal);
        if (!isRow(json) || !Array.isArray(json['links'])) throw new SourceError('remote', `shortio answered the links of ${name} without a \`links\` array`);
        rows = json['links'] as unknown[];
        const token = text(json['nextPageToken']);
        state = token !== null ? { q: state.q, t: token } : { q: state.q.slice(1), t: null };
      }
      const links: ImportedLink[] = [];
      const errors: SourceRowError[] = [];
      for (const [index, row] of rows.entries()) {
        const mapped = mapShortioLink(row, index, host);
        if (mapped === null) continue;
        if ('error' in mapped) errors.push(mapped.error);
        else links.push(mapped);
      }
      const next = state !== null && state.q.length > 0 ? encodeCursor('shortio', state) : null;
      return { links, errors, next, total: null };
    },
  };
}

function mapShortioLink(row: unknown, index: number, host: string): ImportedLink | { error: SourceRowError } | null {
  const fields: Row = isRow(row) ? row : {};
  const id = text(fields['idString']) ?? text(fields['id']);
  if (id === null) return { error: { ref: rowRef(index, fields['secureShortURL'], fields['shortURL']), message: 'the link has no id' } };
  const path = text(fields['path']);
  if (path === null) return null;
  const url = httpUrl(fields['originalURL']);
  if (url === null) return { error: { ref: id, message: destinationProblem(fields['originalURL']) } };
  const password = text(fields['password']);
  if (password === null && fields['hasPassword'] === true) {
    return { error: { ref: id, message: `${host}/${path} is password-protected and Short.io does not export its password; it was not imported, so as not to open it` } };
  }
  return {
    ...importedLink(id, url),
    domain: host,
    slug: path,
    title: text(fields['title']),
    tags: tagNames(fields['tags']),
    createdAt: sourceDate(fields['createdAt']),
    expiresAt: sourceDate(fields['expiresAt']),
    expiredUrl: httpUrl(fields['expiredURL']),
    password,
    utm: utmOf(fields, SHORTIO_UTM),
    ios: httpUrl(fields['iphoneURL']),
    android: httpUrl(fields['androidURL']),
  };
}

function refusal(answer: SourceHttpAnswer, json: unknown, doing: string): SourceError {
  const said = isRow(json) ? text(json['error']) : null;
  const detail = `HTTP ${answer.status}${said ? ` ${said}` : ''}`;
  // 402: the plan does not include the API; 404: no such domain. Neither gets better by retrying.
  const kind = answer.status === 402 || answer.status === 404 || answer.status === 400 ? 'input' : 'remote';
  return new SourceError(kind, `shortio refused ${doing} (${detail})`);
}
