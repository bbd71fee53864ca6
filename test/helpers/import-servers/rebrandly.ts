// A Rebrandly REST API for tests, as its public reference describes it:
// - https://developers.rebrandly.com/docs/list-links: `GET /v1/links`, `orderBy` (createdAt, the default), `orderDir`
//   (desc, the default, or asc), `last`, `limit` (default and at most 25), `domain.id`, `domain.fullName`.
// - https://developers.rebrandly.com/docs/understanding-pagination: the links after `last`, excluded, in the order
//   asked.
// - https://developers.rebrandly.com/docs/counting-your-links: `GET /v1/links/count` → `{ count }`, filtered by
//   `favourite` and `domain.id`; 403 "Invalid format" for a malformed parameter.
// - https://developers.rebrandly.com/docs/link-entity: the link object.
// - https://developers.rebrandly.com/docs/workspaces: the `workspace` header chooses a workspace, the main one when
//   absent; https://developers.rebrandly.com/docs/troubleshooting: the `apikey` header, 401 otherwise, 429.
// Where the reference is silent (each choice said so here): the body of a 401 (the text `Unauthorized`, as Dub's
// Rebrandly importer expects it); the headers of a 429 (the troubleshooting page says to read the reset time from
// them: X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset in epoch seconds are sent); the answer to a
// `last` or a workspace that does not exist (404 `{ code: "NotFound", message, source }`); tags in the link object
// (sent as `{ id, name, color }`, the shape of a tag in the tags reference).
import { itemsAfter, startServiceServer, type RecordedRequest, type Reply, type ServiceServer, type ThrottleOptions } from './service-server.ts';

/** One branded link; fields as Rebrandly names them. Extra fields are sent as they are. */
export interface RebrandlyLinkFixture {
  /** Default: 32 hex characters from its position; set to undefined for a malformed row. */
  id?: string;
  slashtag?: string;
  destination?: unknown;
  title?: string | null;
  /** The branded domain's full name (default `rebrand.ly`). */
  domain?: string;
  /** Tag names; sent as `{ id, name, color }`. */
  tags?: string[];
  /** ISO 8601; default: a minute apart, newest first in fixture order. */
  createdAt?: string;
  clicks?: number;
  favourite?: boolean;
  [field: string]: unknown;
}

export interface RebrandlyServerOptions extends ThrottleOptions {
  token: string;
  /** The main workspace's links. */
  links: RebrandlyLinkFixture[];
  /** Another workspace, reached with the `workspace` header. */
  workspace?: { id: string; links: RebrandlyLinkFixture[] };
  /** Seconds from now to the reset a 429 names (default 5). */
  resetSeconds?: number;
  /** The server's clock, for the reset time (default Date.now). */
  now?: () => number;
  /** The largest `limit` (default 25; the pagination page warns it may change at any time). */
  maxLimit?: number;
}

export interface RebrandlyServer extends ServiceServer {
  remove(id: string): void;
}

const MAX_LIMIT = 25;
type Stored = Record<string, unknown> & { id: string; createdAt: string; domainName: string; row: number };

export async function startRebrandlyServer(options: RebrandlyServerOptions): Promise<RebrandlyServer> {
  const base = Date.parse('2025-06-01T12:00:00Z');
  let sequence = 0;
  const prepare = (fixtures: RebrandlyLinkFixture[]): Stored[] =>
    fixtures.map((fixture, index) => {
      sequence += 1;
      const id = sequence.toString(16).padStart(32, '0');
      const { tags, domain = 'rebrand.ly', ...fields } = fixture;
      const slashtag = fixture.slashtag ?? `s${sequence}`;
      return {
        id,
        title: null,
        slashtag,
        destination: `https://example.com/${slashtag}`,
        shortUrl: `${domain}/${slashtag}`,
        domain: { id: `dom${domain.replace(/\W/g, '')}`, ref: `/domains/dom${domain.replace(/\W/g, '')}`, fullName: domain, sharing: { protocol: { allowed: ['http', 'https'], default: 'https' } }, active: true },
        status: 'active',
        tags: (tags ?? []).map((name) => ({ id: `tag${name}`, name, color: 'FF9944' })),
        createdAt: new Date(base - index * 60_000).toISOString(),
        updatedAt: new Date(base).toISOString(),
        clicks: 0,
        lastClickAt: null,
        favourite: false,
        forwardParameters: true,
        https: true,
        ...fields,
        ...(fixture.id === undefined && 'id' in fixture ? { id: '' } : {}),
        domainName: domain,
        row: sequence,
      };
    });
  const spaces = new Map<string, Stored[]>([['', prepare(options.links)]]);
  if (options.workspace) spaces.set(options.workspace.id, prepare(options.workspace.links));
  const now = options.now ?? Date.now;
  const resetSeconds = options.resetSeconds ?? 5;

  const server = await startServiceServer(
    {
      refuse: (request) => (request.headers['apikey'] === options.token ? null : { status: 401, body: 'Unauthorized' }),
      rateLimited: () => ({
        status: 429,
        body: { code: 'RateLimitExceeded', message: 'Too many requests' },
        headers: { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.ceil(now() / 1000) + resetSeconds) },
      }),
      handle(request) {
        const space = workspaceOf(request);
        if (space === null) return notFound('workspace', String(request.headers['workspace']));
        if (request.method !== 'GET') return { status: 405, body: { code: 'MethodNotAllowed', message: 'Method not allowed' } };
        if (request.path === '/v1/links') return listLinks(space, request);
        if (request.path === '/v1/links/count') return { status: 200, body: { count: filtered(space, request, false).length } };
        return notFound('route', request.path);
      },
    },
    options,
  );

  function workspaceOf(request: RecordedRequest): Stored[] | null {
    const header = request.headers['workspace'];
    return spaces.get(typeof header === 'string' ? header : '') ?? null;
  }

  /** The links matching the filters; counting knows only `domain.id` (the counting page lists no other domain filter). */
  function filtered(space: Stored[], request: RecordedRequest, byName = true): Stored[] {
    const fullName = byName ? request.query.get('domain.fullName') : null;
    const domainId = request.query.get('domain.id');
    return space.filter((link) => (fullName === null || link.domainName === fullName) && (domainId === null || (link['domain'] as { id: string }).id === domainId));
  }

  function listLinks(space: Stored[], request: RecordedRequest): Reply {
    const orderBy = request.query.get('orderBy') ?? 'createdAt';
    const orderDir = request.query.get('orderDir') ?? 'desc';
    const maxLimit = options.maxLimit ?? MAX_LIMIT;
    const limit = Number(request.query.get('limit') ?? maxLimit);
    if (orderBy !== 'createdAt') return invalidFormat('orderBy', 'orderBy must be one of: createdAt');
    if (orderDir !== 'desc' && orderDir !== 'asc') return invalidFormat('orderDir', 'orderDir must be one of: desc, asc');
    if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) return invalidFormat('limit', `limit must be a positive integer up to ${maxLimit}`);
    const sign = orderDir === 'desc' ? -1 : 1;
    const ordered = filtered(space, request).sort((a, b) => sign * (Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.row - b.row));
    const last = request.query.get('last');
    const { page, found } = itemsAfter(ordered, (link) => link.id, last, limit);
    if (!found) return notFound('link', last!);
    return { status: 200, body: page.map(({ domainName: _d, row: _r, ...link }) => (link.id === '' ? Object.fromEntries(Object.entries(link).filter(([k]) => k !== 'id')) : link)) };
  }

  return {
    ...server,
    remove(id) {
      for (const [key, links] of spaces) spaces.set(key, links.filter((link) => link.id !== id));
    },
  };
}

function invalidFormat(property: string, message: string): Reply {
  return { status: 403, body: { code: 'InvalidFormat', property, message, source: 'query' } };
}

function notFound(source: string, value: string): Reply {
  return { status: 404, body: { code: 'NotFound', message: `Not found with property value "${value}"`, source } };
}
