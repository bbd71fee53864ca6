// A Kutt instance's API v2 as its reference describes it, for import tests. Built from github.com/thedevs-network/kutt:
// docs/api/api.js (the OpenAPI document behind https://docs.kutt.it: `GET /links` with `limit` and `skip`, the
// `X-API-KEY` header, `{ total, limit, skip, data }`, the Link schema) and the server code it leaves open:
// server/server.js (mounted at /api/v2 and /api), handlers/helpers.handler.js (`parseQuery`: `limit` parsed as an
// integer, default 10, at most 50; `skip` default 0; a repeated parameter is a 400; errors `{ error }`; the
// express-rate-limit 429), handlers/auth.handler.js (a missing or unknown key ends in the JWT check's 401
// "Unauthorized."), queries/link.queries.js (a user's links, newest first by internal id), utils/utils.js
// (`sanitize.link`: `id` is the uuid, `password` only a boolean, `link` the short URL: https on the default domain,
// http on a custom one unless CUSTOM_DOMAIN_USE_HTTPS; `parseDatetime`: created_at always a date-time, expire_in as the
// database gives it, `YYYY-MM-DD hh:mm:ss` in UTC on SQLite). Not served: search, writes, stats.
import { randomUUID } from 'node:crypto';
import { jsonReply, startServiceServer, type RecordedRequest, type Reply, type ServiceServer } from './base.ts';

export interface KuttLinkFixture {
  /** The link's uuid; filled in by the server when absent, so a test can read it back. */
  id?: string;
  address: string;
  target: string;
  description?: string | null;
  /** Kept hashed by Kutt; the API only says there is one. */
  password?: string | null;
  /** ISO 8601 date-time. */
  expireIn?: string | null;
  visitCount?: number;
  /** A custom domain's address; null or absent for the default domain. */
  domain?: string | null;
  banned?: boolean;
  /** ISO 8601 date-time. */
  createdAt?: string;
}

export interface KuttServerOptions {
  apiKey: string;
  /** Oldest first (Kutt's id order); read on every request, so a test may add or remove links while an import runs. */
  links: KuttLinkFixture[];
  /** DEFAULT_DOMAIN (default `kutt.test`). */
  defaultDomain?: string;
  /** How the database hands back `expire_in` (default postgres). */
  database?: 'postgres' | 'sqlite';
}

export async function startKuttServer(options: KuttServerOptions): Promise<ServiceServer> {
  const defaultDomain = options.defaultDomain ?? 'kutt.test';
  for (const link of options.links) link.id ??= randomUUID();

  function handle(request: RecordedRequest): Reply {
    if (request.method !== 'GET' || !/^\/api(?:\/v2)?\/links\/?$/.test(request.path)) {
      // An unknown path falls through to Kutt's page routes.
      return { status: 404, headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<!DOCTYPE html><html><body><h1>404 | Link could not be found.</h1></body></html>' };
    }
    if (request.headers['x-api-key'] !== options.apiKey) return jsonReply(401, { error: 'Unauthorized.' });
    for (const name of ['limit', 'skip', 'search']) {
      if (request.query.getAll(name).length > 1) return jsonReply(400, { error: `${name} query is not valid.` });
    }
    const limit = Math.min(50, parseInt(request.query.get('limit') ?? '', 10) || 10);
    const skip = parseInt(request.query.get('skip') ?? '', 10) || 0;
    for (const link of options.links) link.id ??= randomUUID();
    const newestFirst = [...options.links].reverse();
    return jsonReply(200, { total: newestFirst.length, limit, skip, data: newestFirst.slice(skip, skip + limit).map(serialize) });
  }

  function serialize(link: KuttLinkFixture): Record<string, unknown> {
    const createdAt = link.createdAt ?? '2024-01-01T00:00:00.000Z';
    return {
      id: link.id,
      address: link.address,
      banned: link.banned ?? false,
      created_at: new Date(createdAt).toISOString(),
      domain: link.domain ?? null,
      updated_at: new Date(createdAt).toISOString(),
      password: Boolean(link.password),
      description: link.description ?? null,
      expire_in: expireIn(link.expireIn ?? null),
      target: link.target,
      visit_count: link.visitCount ?? 0,
      link: link.domain ? `http://${link.domain}/${link.address}` : `https://${defaultDomain}/${link.address}`,
    };
  }

  function expireIn(value: string | null): string | null {
    if (value === null) return null;
    const iso = new Date(value).toISOString();
    return options.database === 'sqlite' ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}` : iso;
  }

  return startServiceServer(handle, (retryAfterSeconds) => ({
    // express-rate-limit 7 with Kutt's options: its default message and legacy headers, Retry-After on the 429.
    status: 429,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'retry-after': String(retryAfterSeconds),
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + retryAfterSeconds),
    },
    body: JSON.stringify({ error: 'Too many requests, please try again later.' }),
  }));
}
