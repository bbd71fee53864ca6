// A Bitly API v4 for tests, as its public reference describes it:
// - https://dev.bitly.com/api-reference: `GET /v4/user` (with `default_group_guid`), `GET /v4/groups/{group_guid}/
//   bitlinks` (`size` default 50, `archived` on|off|both default off, `search_after`), `GET /v4/bitlinks/{bitlink}/
//   clicks/summary` (`unit`, `units`; `total_clicks`); the Bitlink body; errors `{ message, resource, description }`
//   (403 FORBIDDEN for refused credentials, 404 NOT_FOUND).
// - https://dev.bitly.com/docs/getting-started/changes-to-retrieve-bitlinks-by-group/: the `pagination` struct with
//   `next` and `search_after` (without `prev`, `page` and `total`, which the page announces are removed); an empty
//   `search_after` on the last batch.
// - https://dev.bitly.com/docs/getting-started/rate-limits/: limits per minute and hour; the 429 names no wait
//   (no Retry-After is documented, so none is sent).
// Where the reference is silent: the largest `size` (not stated; sizes above 100 are served as 100, which Bitly's
// clients use as the maximum) and the order of the list (newest first, as Bitly's app shows it).
import { startServiceServer, type RecordedRequest, type Reply, type ServiceServer, type ThrottleOptions } from './service-server.ts';

/** One bitlink; fields as Bitly names them. Extra fields are sent as they are (to make malformed rows). */
export interface BitlyLinkFixture {
  /** Domain and back-half: `bit.ly/3xYz` or `go.example.com/launch`; left out, a malformed row without one. */
  id?: string;
  /** Default `https://example.com/<back-half>`; anything (even a non-URL) is sent as given. */
  long_url?: unknown;
  title?: string | null;
  tags?: string[];
  /** Bitly's format, `2024-05-01T10:00:00+0000`; default: a minute apart, newest first in fixture order. */
  created_at?: string;
  archived?: boolean;
  /** Full URLs of the custom back-halves on branded domains, as Bitly lists them. */
  custom_bitlinks?: string[];
  /** Bitly's format, like `created_at`. */
  expiration_at?: string;
  /** Clicks of all time, answered by the clicks summary (default 0). */
  clicks?: number;
  [field: string]: unknown;
}

export interface BitlyServerOptions extends ThrottleOptions {
  token: string;
  links: BitlyLinkFixture[];
  /** The token's user's default group (default `Bg1aBcDeF2h`). */
  groupGuid?: string;
}

export interface BitlyServer extends ServiceServer {
  groupGuid: string;
  /** The `message` of the 429s from now on: the per-minute limit (default) or the monthly allowance. */
  rateLimitMessage(message: 'RATE_LIMIT_EXCEEDED' | 'MONTHLY_LIMIT_EXCEEDED'): void;
}

const DEFAULT_SIZE = 50;
const MAX_SIZE = 100;

export async function startBitlyServer(options: BitlyServerOptions): Promise<BitlyServer> {
  const groupGuid = options.groupGuid ?? 'Bg1aBcDeF2h';
  const base = Date.parse('2025-06-01T12:00:00Z');
  const links = options.links
    .map((fixture, index) => ({ clicks: 0, created_at: bitlyTime(base - index * 60_000), ...fixture, key: fixture.id ?? `row-${index}` }))
    .sort((a, b) => Date.parse(toIso(b.created_at)) - Date.parse(toIso(a.created_at)));
  let limitMessage = 'RATE_LIMIT_EXCEEDED';
  let url = '';

  const server = await startServiceServer(
    {
      refuse: (request) => (request.headers.authorization === `Bearer ${options.token}` ? null : bitlyError(403, 'FORBIDDEN', resourceOf(request), 'You are currently forbidden to access this resource.')),
      rateLimited: () => bitlyError(429, limitMessage, 'bitlinks', 'You have exceeded your rate limit.'),
      handle(request) {
        if (request.method !== 'GET') return bitlyError(405, 'METHOD_NOT_ALLOWED', resourceOf(request), 'Method not allowed.');
        if (request.path === '/v4/user') return { status: 200, body: user(groupGuid) };
        const list = /^\/v4\/groups\/([^/]+)\/bitlinks$/.exec(request.path);
        if (list) return listBitlinks(decodeURIComponent(list[1]!), request);
        const summary = /^\/v4\/bitlinks\/(.+)\/clicks\/summary$/.exec(request.path);
        if (summary) return clicksSummary(decodeURIComponent(summary[1]!), request);
        return bitlyError(404, 'NOT_FOUND', resourceOf(request), 'The resource was not found.');
      },
    },
    options,
  );
  url = server.url;

  function listBitlinks(guid: string, request: RecordedRequest): Reply {
    if (guid !== groupGuid) return bitlyError(404, 'NOT_FOUND', 'groups', 'The group was not found.');
    const sizeText = request.query.get('size') ?? String(DEFAULT_SIZE);
    if (!/^\d+$/.test(sizeText) || Number(sizeText) < 1) return bitlyError(400, 'INVALID_ARG_SIZE', 'bitlinks', 'The value provided is invalid.');
    const size = Math.min(MAX_SIZE, Number(sizeText));
    const archived = request.query.get('archived') ?? 'off';
    if (!['on', 'off', 'both'].includes(archived)) return bitlyError(400, 'INVALID_ARG_ARCHIVED', 'bitlinks', 'The value provided is invalid.');
    const visible = links.filter((link) => archived === 'both' || (archived === 'on') === Boolean(link.archived));
    const token = request.query.get('search_after') ?? '';
    const start = token === '' ? 0 : visible.findIndex((link) => searchAfterOf(link.key) === token) + 1;
    if (token !== '' && start === 0) return bitlyError(400, 'INVALID_ARG_SEARCH_AFTER', 'bitlinks', 'The value provided is invalid.');
    const page = visible.slice(start, start + size);
    const more = start + page.length < visible.length;
    const searchAfter = more ? searchAfterOf(page.at(-1)!.key) : '';
    const next = more ? `${url}/v4/groups/${guid}/bitlinks?${new URLSearchParams({ search_after: searchAfter, size: String(size), archived }).toString()}` : '';
    return { status: 200, body: { links: page.map((link) => bitlinkBody(link, guid)), pagination: { next, search_after: searchAfter, size } } };
  }

  function clicksSummary(bitlink: string, request: RecordedRequest): Reply {
    const link = links.find((candidate) => candidate.id === bitlink);
    if (!link) return bitlyError(404, 'NOT_FOUND', 'bitlinks', 'The bitlink was not found.');
    const unit = request.query.get('unit') ?? 'day';
    const units = Number(request.query.get('units') ?? '-1');
    return { status: 200, body: { unit_reference: new Date(base).toISOString(), total_clicks: link.clicks, units, unit } };
  }

  function bitlinkBody(link: BitlyLinkFixture & { key: string }, guid: string): Record<string, unknown> {
    const { clicks: _clicks, key, ...fields } = link;
    const hash = key.slice(key.indexOf('/') + 1);
    return {
      references: { group: `${url}/v4/groups/${guid}` },
      ...(link.id === undefined ? {} : { link: `https://${key}` }),
      long_url: `https://example.com/${hash}`,
      title: null,
      archived: false,
      created_by: 'importer',
      client_id: 'a1b2c3d4e5f6',
      custom_bitlinks: [],
      tags: [],
      launchpad_ids: [],
      qr_code_ids: [],
      deeplinks: [],
      campaign_ids: [],
      is_deleted: false,
      ...fields,
    };
  }

  return {
    ...server,
    groupGuid,
    rateLimitMessage(message) {
      limitMessage = message;
    },
  };
}

function user(groupGuid: string): Record<string, unknown> {
  return {
    login: 'importer',
    name: 'Import Tester',
    is_active: true,
    created: '2020-01-01T00:00:00+0000',
    modified: '2024-01-01T00:00:00+0000',
    is_sso_user: false,
    emails: [{ email: 'importer@example.com', is_primary: true, is_verified: true }],
    is_2fa_enabled: false,
    default_group_guid: groupGuid,
  };
}

function bitlyError(status: number, message: string, resource: string, description: string): Reply {
  return { status, body: { message, resource, description } };
}

function resourceOf(request: RecordedRequest): string {
  return request.path.split('/')[2] ?? 'unknown';
}

/** Opaque to clients: here, the last id of the batch, encoded. */
function searchAfterOf(id: string): string {
  return Buffer.from(id).toString('base64url');
}

function bitlyTime(time: number): string {
  return new Date(time).toISOString().replace(/\.\d{3}Z$/, '+0000');
}

function toIso(bitly: unknown): string {
  return String(bitly).replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
}
