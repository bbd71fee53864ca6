// A Short.io REST API for tests, as its public reference describes it:
// - Short.io's OpenAPI document (https://api.short.io/openapi.json; the official Node SDK Short-io/client-node is
//   generated from it): `GET /api/links` (`domain_id` required, `limit`, `dateSortOrder` asc|desc, `pageToken`;
//   `{ count, links, nextPageToken }`, the token absent on the last page; errors `{ error }`: 401, 402, 403, 404),
//   `GET /api/domains` (`limit`, `offset`; an array of domains), the link and domain fields.
// - https://developers.short.io/docs/getting-a-list-of-links: the secret key as the `authorization` header; a
//   `limit` that must be below 150.
// - The official SDK's README: a 429 with Retry-After (seconds), X-RateLimit-Limit, X-RateLimit-Remaining and
//   X-RateLimit-Reset (a Unix timestamp).
// Where the reference is silent: the body of a refused key (`{ error: "Unauthorized" }`, the shape of the other
// errors, which Dub's Short.io importer also reads), what `count` counts (here: the domain's links), the default sort
// (newest first) and the default `limit` of the domains list (all of them).
import { itemsAfter, startServiceServer, type RecordedRequest, type Reply, type ServiceServer, type ThrottleOptions } from './service-server.ts';

/** One link; fields as Short.io names them. Extra fields are sent as they are. */
export interface ShortioLinkFixture {
  /** The domain's host name (default: the first domain). */
  domain?: string;
  /** Default `lnk_<n>`; set to undefined for a malformed row. */
  idString?: string;
  /** The slug; `''` is the domain's root redirect. */
  path?: string;
  originalURL?: unknown;
  title?: string;
  tags?: string[];
  /** Milliseconds since the epoch, or ISO; default: a minute apart, newest first in fixture order. */
  createdAt?: number | string;
  expiresAt?: number | string;
  expiredURL?: string;
  /** Short.io may give it; `hasPassword` says whether there is one. */
  password?: string;
  hasPassword?: boolean;
  utmSource?: string;
  utmMedium?: string;
  utmCampaign?: string;
  utmTerm?: string;
  utmContent?: string;
  iphoneURL?: string;
  androidURL?: string;
  archived?: boolean;
  [field: string]: unknown;
}

export interface ShortioServerOptions extends ThrottleOptions {
  token: string;
  /** The account's domains, as host names; ids are given in order from 310001. */
  domains: string[];
  links: ShortioLinkFixture[];
  retryAfterSeconds?: number;
}

export interface ShortioServer extends ServiceServer {
  /** The id Short.io gives a domain of the fixtures. */
  domainId(host: string): number;
}

const MAX_LIMIT = 149;
type Stored = Record<string, unknown> & { key: string; host: string; time: number; row: number };

export async function startShortioServer(options: ShortioServerOptions): Promise<ShortioServer> {
  const ids = new Map(options.domains.map((host, index) => [host, 310001 + index]));
  const base = Date.parse('2025-06-01T12:00:00Z');
  const links: Stored[] = options.links.map((fixture, index) => {
    const { domain = options.domains[0]!, ...fields } = fixture;
    const key = fixture.idString ?? `lnk_${index + 1}`;
    const path = fixture.path ?? `p${index + 1}`;
    const createdAt = fixture.createdAt ?? base - index * 60_000;
    return {
      originalURL: `https://example.com/${path}`,
      path,
      idString: key,
      id: key,
      shortURL: `http://${domain}/${path}`,
      secureShortURL: `https://${domain}/${path}`,
      cloaking: false,
      title: '',
      tags: [],
      createdAt,
      skipQS: false,
      archived: false,
      DomainId: ids.get(domain),
      OwnerId: 1,
      hasPassword: false,
      source: 'api',
      User: { id: 1, name: 'Importer', email: 'importer@example.com', photoURL: '' },
      ...fields,
      ...(fixture.idString === undefined && 'idString' in fixture ? { id: undefined } : {}),
      key,
      host: domain,
      time: typeof createdAt === 'number' ? createdAt : Date.parse(createdAt),
      row: index,
    };
  });

  const server = await startServiceServer(
    {
      refuse: (request) => (request.headers.authorization === options.token ? null : { status: 401, body: { error: 'Unauthorized' } }),
      rateLimited: () => {
        const wait = options.retryAfterSeconds ?? 3;
        return {
          status: 429,
          body: { error: 'Too Many Requests' },
          headers: { 'retry-after': String(wait), 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + wait) },
        };
      },
      handle(request) {
        if (request.method !== 'GET') return { status: 405, body: { error: 'Method Not Allowed' } };
        if (request.path === '/api/domains') return listDomains(request);
        if (request.path === '/api/links') return listLinks(request);
        return { status: 404, body: { error: 'Not Found' } };
      },
    },
    options,
  );

  function listDomains(request: RecordedRequest): Reply {
    const offset = Number(request.query.get('offset') ?? '0');
    const limit = Number(request.query.get('limit') ?? options.domains.length);
    const page = options.domains.slice(offset, offset + limit).map((hostname) => ({
      id: ids.get(hostname),
      hostname,
      unicodeHostname: hostname,
      state: 'configured',
      createdAt: new Date(base).toISOString(),
      updatedAt: new Date(base).toISOString(),
      hasFavicon: false,
      hideReferer: false,
      linkType: 'random',
      cloaking: false,
      hideVisitorIp: false,
      enableAI: false,
      httpsLevel: 'redirect',
      httpsLinks: true,
      clientStorage: {},
      caseSensitive: false,
      incrementCounter: '0',
      robots: 'disallow',
      exportEnabled: true,
      enableConversionTracking: false,
      qrScanTracking: true,
      isFavorite: false,
    }));
    return { status: 200, body: page };
  }

  function listLinks(request: RecordedRequest): Reply {
    const domainId = Number(request.query.get('domain_id'));
    if (!Number.isSafeInteger(domainId) || domainId <= 0) return { status: 400, body: { error: "querystring must have required property 'domain_id'" } };
    const host = [...ids].find(([, id]) => id === domainId)?.[0];
    if (host === undefined) return { status: 403, body: { error: 'Domain does not belong to the user' } };
    const limit = Number(request.query.get('limit') ?? '150');
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) return { status: 400, body: { error: 'querystring/limit must be < 150' } };
    const order = request.query.get('dateSortOrder') ?? 'desc';
    if (order !== 'asc' && order !== 'desc') return { status: 400, body: { error: 'querystring/dateSortOrder must be equal to one of the allowed values' } };
    const ordered = links.filter((link) => link.host === host).sort((a, b) => (order === 'desc' ? b.time - a.time : a.time - b.time) || a.row - b.row);
    const token = request.query.get('pageToken');
    const after = token === null ? null : Buffer.from(token, 'base64url').toString();
    const { page, found, rest } = itemsAfter(ordered, (link) => link.key, after, limit);
    if (!found) return { status: 400, body: { error: 'Invalid pageToken' } };
    const body: Record<string, unknown> = { count: ordered.length, links: page.map(({ key: _k, host: _h, time: _t, row: _r, ...link }) => link) };
    if (rest > 0) body['nextPageToken'] = Buffer.from(page.at(-1)!.key).toString('base64url');
    return { status: 200, body };
  }

  return {
    ...server,
    domainId(host) {
      return ids.get(host)!;
    },
  };
}
