// Reads a Dub workspace's links through Dub's REST API. Followed:
// - Dub's published OpenAPI document, as generated from apps/web/lib/openapi in github.com/dubinc/dub: `GET /links`
//   (getLinks: `startingAfter` / `endingBefore` cursors, mutually exclusive, each a link id; `pageSize` up to 100, the
//   default; `page` deprecated; `folderId`; `showArchived`, false by default), `GET /links/count`, `GET /folders`
//   (page / pageSize up to 50); the Link schema (password, geo, ios, android, utm_*, clicks... all returned); errors as
//   `{ error: { code, message, doc_url } }`, 401 unauthorized, 403 forbidden, 422 for an unknown cursor, 429.
// - https://dub.co/docs/api-reference/introduction: base URL https://api.dub.co, `Authorization: Bearer <key>`.
// - https://dub.co/docs/api-reference/rate-limits: 429 with Retry-After (seconds) and X-RateLimit-Reset (epoch seconds).
// Two things Dub's implementation does that its reference does not say, which the reading is built to survive: a list
// without `folderId` holds only the links outside folders, so the workspace is read folder by folder (`unsorted`,
// then each folder); and its cursors walk the links by id while the first page of a list is sorted by creation date,
// so each folder is read from one pivot link outwards with cursors only: the links before it (`endingBefore`), then
// the links after it (`startingAfter`). Both hold as well if the cursors follow the creation-date order the reference
// implies. Deleted cursor links are survived with resume anchors (resume-anchors.ts).
import type { ImportSource, ImportedLink, SourceDeps, SourceHttpAnswer, SourceOptions, SourcePage, SourceRowError } from '../source.ts';
import { SourceError } from '../source.ts';
import { callRemoteJson } from './remote.ts';
import { decodeCursor, encodeCursor, isStringArray } from './cursor.ts';
import { count, countryTargeting, destinationProblem, httpUrl, importedLink, isRow, rowRef, sourceDate, tagNames, text, utmOf, UTM_NAMES, type Row } from './link-fields.ts';
import { rateLimitWaitMs } from './rate-limit-headers.ts';
import { ANCHOR_GONE, RESUME_ANCHORS, anchorsOf, readAfterAnchors } from './resume-anchors.ts';
import { remoteOptions } from './source-options.ts';

const DEFAULT_BASE_URL = 'https://api.dub.co';
const PAGE_SIZE = 100;
const FOLDERS_PAGE_SIZE = 50;
/** The `folderId` that lists the links outside any folder. */
const UNSORTED = 'unsorted';
/** Counting the links takes one request a folder: beyond this many folders, the total is left unknown. */
const MAX_COUNTED_FOLDERS = 10;
/** Dub's own key for a domain's root redirect: not a short link of its own. */
const ROOT_KEY = '_root';

export const DUB_PARAMS = [] as const;

interface DubState {
  /** Folders still to read, the current one first. */
  f: string[];
  /** `pivot`: find the folder's newest link; `up`: links before the pivot; `down`: links after it. */
  s: 'pivot' | 'up' | 'down';
  /** The pivot link's id. */
  p: string | null;
  /** Resume anchors, the one to try first last. */
  a: string[];
}

function isDubState(state: unknown): state is DubState {
  return (
    isRow(state) &&
    isStringArray(state['f']) &&
    ['pivot', 'up', 'down'].includes(state['s'] as string) &&
    (state['p'] === null || typeof state['p'] === 'string') &&
    isStringArray(state['a'])
  );
}

export function createDubSource(options: SourceOptions, deps: SourceDeps): ImportSource {
  const { token, baseUrl } = remoteOptions('dub', options, DEFAULT_BASE_URL, DUB_PARAMS);

  async function get(path: string, query: Record<string, string>, signal: AbortSignal): Promise<{ answer: SourceHttpAnswer; json: unknown }> {
    return callRemoteJson(
      deps,
      { method: 'GET', url: `${baseUrl}${path}?${new URLSearchParams(query).toString()}`, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } },
      signal,
      { waitOf: rateLimitWaitMs, now: deps.now ?? Date.now },
    );
  }

  async function list(folder: string, cursor: Record<string, string>, size: number, signal: AbortSignal): Promise<unknown[] | typeof ANCHOR_GONE> {
    const { answer, json } = await get('/links', { folderId: folder, showArchived: 'true', pageSize: String(size), ...cursor }, signal);
    if (answer.status === 422 && Object.keys(cursor).length > 0 && /cursor/i.test(errorOf(json).message)) return ANCHOR_GONE;
    if (answer.status !== 200) throw refusal(answer, json, `listing the links of folder ${folder}`);
    if (!Array.isArray(json)) throw new SourceError('remote', 'dub answered the list of links with something other than an array');
    return json as unknown[];
  }

  async function folders(signal: AbortSignal): Promise<string[]> {
    const ids: string[] = [];
    for (let page = 1; ; page++) {
      const { answer, json } = await get('/folders', { page: String(page), pageSize: String(FOLDERS_PAGE_SIZE) }, signal);
      if (answer.status !== 200) throw refusal(answer, json, 'listing the folders');
      const rows = Array.isArray(json) ? json : [];
      ids.push(...rows.map((row) => (isRow(row) ? text(row['id']) : null)).filter((id): id is string => id !== null));
      if (rows.length < FOLDERS_PAGE_SIZE) return ids;
    }
  }

  /** The links to read, for the progress bar; not counted (null) when that would take too many requests. */
  async function total(scopes: string[], signal: AbortSignal): Promise<number | null> {
    if (scopes.length > MAX_COUNTED_FOLDERS) return null;
    let sum = 0;
    for (const folder of scopes) {
      const { answer, json } = await get('/links/count', { folderId: folder, showArchived: 'true' }, signal);
      const counted = answer.status === 200 ? count(json) : null;
      if (counted === null) return null;
      sum += counted;
    }
    return sum;
  }

  /** One step of the folder-by-folder walk: the rows it read (possibly none) and the state after it. */
  async function step(state: DubState, signal: AbortSignal): Promise<{ rows: unknown[]; next: DubState | null }> {
    const folder = state.f[0]!;
    const nextFolder = (): DubState | null => (state.f.length > 1 ? { f: state.f.slice(1), s: 'pivot', p: null, a: [] } : null);
    if (state.s === 'pivot') {
      const rows = await readAfterAnchors('dub', [], () => list(folder, {}, 1, signal));
      if (rows.length === 0) return { rows, next: nextFolder() };
      const pivot = idOf(rows[0]);
      // without the pivot's id the folder cannot be walked; skipping it silently would lose its links
      if (pivot === null) throw new SourceError('remote', `dub listed the newest link of folder ${folder} without its id`);
      return { rows, next: { ...state, s: 'up', p: pivot, a: [pivot] } };
    }
    if (state.s === 'up') {
      const rows = await readAfterAnchors('dub', state.a, (id) => list(folder, { endingBefore: id! }, PAGE_SIZE, signal));
      // the links just before an anchor come newest first, so the next anchors are the page's first ids
      const next: DubState =
        rows.length === PAGE_SIZE ? { ...state, a: anchorsOf(rows.slice(0, RESUME_ANCHORS).reverse(), idOf) } : { ...state, s: 'down', a: [state.p!] };
      return { rows, next };
    }
    const rows = await readAfterAnchors('dub', state.a, (id) => list(folder, { startingAfter: id! }, PAGE_SIZE, signal));
    return { rows, next: rows.length === PAGE_SIZE ? { ...state, a: anchorsOf(rows, idOf) } : nextFolder() };
  }

  return {
    kind: 'dub',
    async page(cursor: string | null, signal: AbortSignal): Promise<SourcePage> {
      let state: DubState | null;
      let size: number | null = null;
      if (cursor === null) {
        const scopes = [UNSORTED, ...(await folders(signal))];
        size = await total(scopes, signal);
        state = { f: scopes, s: 'pivot', p: null, a: [] };
      } else {
        state = decodeCursor('dub', cursor, isDubState);
      }
      // steps that find nothing (an empty folder, no link before the pivot) go on to the next, so a page is empty
      // only at the very end
      let rows: unknown[] = [];
      while (state !== null && rows.length === 0) ({ rows, next: state } = await step(state, signal));
      const links: ImportedLink[] = [];
      const errors: SourceRowError[] = [];
      for (const [index, row] of rows.entries()) {
        const mapped = mapDubLink(row, index);
        if (mapped === null) continue;
        if ('error' in mapped) errors.push(mapped.error);
        else links.push(mapped);
      }
      return { links, errors, next: state === null ? null : encodeCursor('dub', state), total: size };
    },
  };
}

function idOf(row: unknown): string | null {
  return isRow(row) ? text(row['id']) : null;
}

/** A Dub link in our words; null for a domain's root redirect, which is the domain's setting, not a short link. */
function mapDubLink(row: unknown, index: number): ImportedLink | { error: SourceRowError } | null {
  const fields: Row = isRow(row) ? row : {};
  const id = text(fields['id']);
  if (id === null) return { error: { ref: rowRef(index, fields['shortLink']), message: 'the link has no id' } };
  if (fields['key'] === ROOT_KEY) return null;
  const url = httpUrl(fields['url']);
  if (url === null) return { error: { ref: id, message: destinationProblem(fields['url']) } };
  return {
    ...importedLink(id, url),
    domain: text(fields['domain']),
    slug: text(fields['key']),
    title: text(fields['title']),
    tags: tagNames(fields['tags']),
    createdAt: sourceDate(fields['createdAt']),
    expiresAt: sourceDate(fields['expiresAt']),
    expiredUrl: httpUrl(fields['expiredUrl']),
    password: text(fields['password']),
    utm: utmOf(fields, UTM_NAMES),
    targeting: countryTargeting(fields['geo']),
    ios: httpUrl(fields['ios']),
    android: httpUrl(fields['android']),
    clicksTotal: count(fields['clicks']),
  };
}

function errorOf(json: unknown): { code: string; message: string } {
  const error = isRow(json) && isRow(json['error']) ? json['error'] : {};
  return { code: text(error['code']) ?? '', message: text(error['message']) ?? '' };
}

function refusal(answer: SourceHttpAnswer, json: unknown, doing: string): SourceError {
  const { code, message } = errorOf(json);
  const detail = `HTTP ${answer.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
  // a 404 on the workspace's own lists means the key names no workspace (a personal key, per Dub's message)
  return new SourceError(answer.status === 404 ? 'input' : 'remote', `dub refused ${doing} (${detail})`);
}
