// Reads a Kutt instance through its API v2, as Kutt describes it (docs/api/api.js in github.com/thedevs-network/kutt,
// published at https://docs.kutt.it) and as its server answers (server/handlers/links.handler.js, helpers.handler.js,
// utils/utils.js): `GET /api/v2/links?limit=&skip=` with the `X-API-KEY` header, answering
// `{ total, limit, skip, data }`, newest first (by Kutt's internal id), `limit` capped at 50 by the server. Errors are
// `{ error: "message" }`; a missing or refused key is a 401. An instance started with ENABLE_RATE_LIMIT answers 429
// with Retry-After (express-rate-limit) on the routes it limits, which callRemote waits out.
//
// The list is sorted by a unique id that the API does not show, so an offset reads the same rows on the same data.
// Links created while the import runs go to the top and shift every offset down; links deleted shift them up. So each
// request also re-reads a few rows before the offset and looks for the last link given out (the anchor): the rows
// after it are the new ones, wherever it moved. Links created after the import began are not read (they are above the
// anchor); a run of the import afterwards picks them up.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { SourceError, type ImportSource, type ImportedLink, type SourceDeps, type SourceOptions, type SourcePage, type SourceRowError } from '../source.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { countOf, hostnameOf, isHttpUrl, linkOf, sqlUtcDateOf, textOf } from './mapping.ts';
import { baseUrlOf, checkParams, tokenOf } from './options.ts';
import { callRemote } from './remote.ts';

/** Kutt answers at most 50 links a request; this many of them are before the offset, to find the anchor. */
const LIMIT = 50;
const OVERLAP = 5;
export const KUTT_PAGE_SIZE = LIMIT - OVERLAP;

const CursorSchema = Type.Object(
  {
    skip: Type.Integer({ minimum: 0 }),
    /** Id of the last link given out. */
    anchor: Type.String(),
  },
  { additionalProperties: false },
);

/** A link as Kutt's `sanitize.link` writes it; `password` is only whether it has one. */
const LinkSchema = Type.Object({
  id: Type.String({ minLength: 1 }),
  address: Type.String({ minLength: 1 }),
  target: Type.String(),
  link: Type.String(),
  banned: Type.Optional(Type.Boolean()),
  password: Type.Optional(Type.Boolean()),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  expire_in: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  created_at: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  visit_count: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
  domain: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
type KuttLink = Static<typeof LinkSchema>;

const ListSchema = Type.Object({ total: Type.Integer({ minimum: 0 }), data: Type.Array(Type.Unknown()) });

export function createKuttSource(options: SourceOptions, deps: SourceDeps): ImportSource {
  checkParams(options, 'Kutt', []);
  const base = baseUrlOf(options, 'Kutt', /\/api(?:\/v2)?$/);
  const headers = { 'x-api-key': tokenOf(options, 'Kutt', 'an API key (Settings, section API, in Kutt)'), accept: 'application/json' };

  async function list(skip: number, limit: number, signal: AbortSignal) {
    const query = new URLSearchParams({ limit: String(limit), skip: String(skip) });
    const answer = await callRemote(deps, { method: 'GET', url: `${base}/api/v2/links?${query.toString()}`, headers }, signal);
    let json: unknown;
    try {
      json = JSON.parse(answer.body);
    } catch {
      // Kutt answers an unknown path with its HTML 404 page.
      throw new SourceError('input', `${base} does not serve Kutt's API v2 (HTTP ${answer.status}, not JSON): check the base URL`);
    }
    if (answer.status !== 200) throw new SourceError('remote', `Kutt refused to list links: HTTP ${answer.status}, ${errorOf(json)}`);
    if (!Value.Check(ListSchema, json)) throw new SourceError('remote', 'Kutt answered the link list in a shape this reader does not know');
    return json;
  }

  return {
    kind: 'kutt',
    async page(cursorText, signal): Promise<SourcePage> {
      const cursor = cursorText === null ? null : decodeCursor('kutt', cursorText, CursorSchema);
      const skip = cursor?.skip ?? 0;
      const start = Math.max(0, skip - OVERLAP);
      const { total, data } = await list(start, LIMIT, signal);
      const anchorAt = cursor ? data.findIndex((raw) => idOf(raw) === cursor.anchor) : -1;
      // The anchor gone (deleted since), the rows at the offset are the best guess of where the last page ended.
      const fresh = anchorAt >= 0 ? data.slice(anchorAt + 1) : data.slice(skip - start);
      const links: ImportedLink[] = [];
      const errors: SourceRowError[] = [];
      for (const [index, raw] of fresh.entries()) {
        const mapped = rowToLink(raw, `link ${skip + index + 1}`);
        if ('url' in mapped) links.push(mapped);
        else errors.push(mapped);
      }
      const read = start + data.length;
      const anchor = idOf(data.at(-1));
      const last = data.length === 0 || read >= total || anchor === null;
      return { links, errors, total, next: last ? null : encodeCursor('kutt', { skip: read, anchor }) };
    },
  };
}

function idOf(raw: unknown): string | null {
  const id = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>).id : undefined;
  return typeof id === 'string' ? id : null;
}

function rowToLink(raw: unknown, position: string): ImportedLink | SourceRowError {
  if (!Value.Check(LinkSchema, raw)) return { ref: idOf(raw) ?? position, message: 'Kutt answered this link without a field this reader needs' };
  const link: KuttLink = raw;
  // A link an administrator banned (malware, phishing) stays off rather than coming back to life here.
  if (link.banned) return { ref: link.id, message: `it is banned on Kutt (${link.target}); it was not imported` };
  if (!isHttpUrl(link.target)) return { ref: link.id, message: `its target ${JSON.stringify(link.target)} is not an absolute http(s) URL` };
  const warnings = link.password ? ['it is password-protected on Kutt, which never gives the password out: set one here if it must stay protected'] : [];
  return linkOf(link.id, link.target, {
    // Kutt leaves `domain` null for its default domain, whose name is in the short link.
    domain: link.domain ? link.domain.toLowerCase() : hostnameOf(link.link),
    slug: link.address,
    // Kutt has no title: the description is what its dashboard shows beside a link.
    title: textOf(link.description),
    createdAt: sqlUtcDateOf(link.created_at),
    // Postgres and MySQL give a date-time; SQLite gives `YYYY-MM-DD hh:mm:ss` in UTC.
    expiresAt: sqlUtcDateOf(link.expire_in),
    clicksTotal: countOf(link.visit_count),
    ...(warnings.length > 0 && { warnings }),
  });
}

function errorOf(json: unknown): string {
  const error = typeof json === 'object' && json !== null ? (json as Record<string, unknown>).error : undefined;
  return typeof error === 'string' ? error : 'no detail';
}
