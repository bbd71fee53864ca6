// A YOURLS install's yourls-api.php as its reference describes it, for import tests. Built from
// https://yourls.org/docs/guide/advanced/api and /passwordless-api, and github.com/YOURLS/YOURLS: yourls-api.php
// (actions, `format` default xml, unknown action 400), includes/functions-api.php (`stats` with `filter`, `limit`,
// `start`; `url-stats`; `db-stats`; `version`; the output and its HTTP status from statusCode/errorCode),
// functions.php `yourls_get_stats` (`last` = timestamp DESC, `top`/`bottom` = clicks, `LIMIT start, limit`, links as
// `link_1`...), functions-auth.php and auth.php (signature, timestamp + hashed signature, username + password, read from
// GET and POST alike; a refusal is errorCode 403 "Please log in" or "Invalid username or password"). Timestamps are
// `YYYY-MM-DD hh:mm:ss` in UTC. Ties in the sort come in an order that changes with `start` and `limit`, as MySQL's do.
// Not served: shorturl (writes), expand, plugins' actions.
import { createHash } from 'node:crypto';
import { sortWithLooseTies, startServiceServer, type RecordedRequest, type Reply, type ServiceServer } from './base.ts';

export interface YourlsLinkFixture {
  keyword: string;
  url: string;
  title?: string;
  /** `YYYY-MM-DD hh:mm:ss`, UTC. */
  timestamp: string;
  ip?: string;
  clicks?: number;
}

export interface YourlsUser {
  username: string;
  password: string;
  /** The user's secret signature token (YOURLS derives it from its cookie key; here it is given). */
  signature: string;
}

export interface YourlsServerOptions {
  users: YourlsUser[];
  /** Read on every request, so a test may add or remove links while an import runs. */
  links: YourlsLinkFixture[];
  /** YOURLS_PRIVATE (default true): false answers without credentials. */
  private?: boolean;
  /** YOURLS_SITE (default the server's URL). */
  site?: string;
  /** Before PHP 8.1, PDO gave MySQL integers as strings: `"clicks": "12"`. */
  numbersAsStrings?: boolean;
}

/** YOURLS_NONCE_LIFE's default: a timed signature is good for 12 hours either way. */
const NONCE_LIFE_SECONDS = 43_200;

export async function startYourlsServer(options: YourlsServerOptions): Promise<ServiceServer> {
  function handle(request: RecordedRequest, url: string): Reply {
    if (request.path !== '/yourls-api.php') return { status: 404, headers: { 'content-type': 'text/html' }, body: '<h1>Not Found</h1>' };
    // $_REQUEST: the query, then the POST body over it.
    const params = new URLSearchParams(request.query);
    if (String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
      for (const [name, value] of new URLSearchParams(request.body)) params.set(name, value);
    }
    const format = params.get('format') ?? 'xml';
    const failure = options.private === false ? null : authFailure(params);
    if (failure) return output(format, { message: failure, errorCode: '403', callback: params.get('callback') ?? '' }, failure);
    const site = options.site ?? url;
    const shortUrlOf = (keyword: string) => `${site}/${keyword}`;
    const count = (value: number) => (options.numbersAsStrings ? String(value) : value);
    const linkOf = (link: YourlsLinkFixture) => ({ shorturl: shortUrlOf(link.keyword), url: link.url, title: link.title ?? '', timestamp: link.timestamp, ip: link.ip ?? '127.0.0.1', clicks: count(link.clicks ?? 0) });
    const dbStats = () => ({ total_links: options.links.length, total_clicks: options.links.reduce((sum, link) => sum + (link.clicks ?? 0), 0) });
    const action = params.get('action');
    switch (action) {
      case 'stats': {
        const filter = params.get('filter') ?? '';
        const limit = phpIntval(params.get('limit'));
        const start = phpIntval(params.get('start'));
        const seed = `${start},${limit}`;
        const sorted =
          filter === 'last' ? sortWithLooseTies(options.links, (link) => link.timestamp, (link) => link.keyword, 'desc', seed)
          : filter === 'bottom' ? sortWithLooseTies(options.links, (link) => link.clicks ?? 0, (link) => link.keyword, 'asc', seed)
          : filter === 'rand' || filter === 'random' ? sortWithLooseTies(options.links, () => 0, (link) => link.keyword, 'asc', `${Math.random()}`)
          : sortWithLooseTies(options.links, (link) => link.clicks ?? 0, (link) => link.keyword, 'desc', seed);
        const result: Record<string, unknown> = {};
        if (limit > 0) result.links = Object.fromEntries(sorted.slice(start, start + limit).map((link, index) => [`link_${index + 1}`, linkOf(link)]));
        return output(format, { ...result, stats: dbStats(), statusCode: '200', message: 'success' }, 'Need either XML or JSON format for stats');
      }
      case 'url-stats': {
        const keyword = (params.get('shorturl') ?? '').replace(`${site}/`, '');
        const link = options.links.find((candidate) => candidate.keyword === keyword);
        const body = link ? { statusCode: '200', message: 'success', link: linkOf(link) } : { statusCode: '404', message: 'Error: short URL not found' };
        return output(format, body, 'Need either XML or JSON format for stats');
      }
      case 'db-stats':
        return output(format, { 'db-stats': dbStats(), statusCode: '200', message: 'success' }, 'Need either XML or JSON format for stats');
      case 'version':
        return output(format, { version: '1.10.2' }, '1.10.2');
      default:
        return output(format, { errorCode: '400', message: 'Unknown or missing "action" parameter' }, 'Unknown or missing "action" parameter');
    }
  }

  /** yourls_is_valid_user() for an API request: null when valid, else the message YOURLS answers. */
  function authFailure(params: URLSearchParams): string | null {
    const signature = params.get('signature') ?? '';
    const timestamp = params.get('timestamp') ?? '';
    const username = params.get('username') ?? '';
    const password = params.get('password') ?? '';
    let valid = false;
    if (signature !== '' && timestamp !== '') {
      const algorithm = params.get('hash') ?? 'sha256';
      const fresh = Math.abs(Math.floor(Date.now() / 1000) - (parseInt(timestamp, 10) || 0)) < NONCE_LIFE_SECONDS;
      valid = fresh && ['sha256', 'sha384', 'sha512'].includes(algorithm) && options.users.some((user) => {
        const digest = (text: string) => createHash(algorithm).update(text).digest('hex');
        return digest(timestamp + user.signature) === signature || digest(user.signature + timestamp) === signature;
      });
    } else if (signature !== '') {
      valid = options.users.some((user) => user.signature === signature);
    } else if (username !== '' && password !== '') {
      valid = options.users.some((user) => user.username === username && user.password === password);
    }
    if (valid) return null;
    return params.has('username') || params.has('password') ? 'Invalid username or password' : 'Please log in';
  }

  return startServiceServer(handle, (retryAfterSeconds) => ({
    // YOURLS has no limiter: this is what a host in front of it answers.
    status: 429,
    headers: { 'content-type': 'text/html', 'retry-after': String(retryAfterSeconds) },
    body: '<h1>429 Too Many Requests</h1>',
  }));
}

/** yourls_api_output(): the HTTP status from statusCode or errorCode, the body in the asked format. */
function output(format: string, body: Record<string, unknown>, simple: string): Reply {
  const status = Number(body.statusCode ?? body.errorCode ?? 200);
  switch (format) {
    case 'json':
      return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
    case 'jsonp':
      return { status, headers: { 'content-type': 'application/javascript; charset=utf-8' }, body: `${typeof body.callback === 'string' ? body.callback : ''}(${JSON.stringify(body)})` };
    case 'xml':
      return { status, headers: { 'content-type': 'application/xml; charset=utf-8' }, body: `<?xml version="1.0" encoding="UTF-8"?>\n<result>${xml(body)}</result>` };
    default:
      return { status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: simple };
  }
}

function xml(value: unknown): string {
  if (typeof value !== 'object' || value === null) return (typeof value === 'string' || typeof value === 'number' ? String(value) : '').replace(/[<>&]/g, (c) => `&#${c.charCodeAt(0)};`);
  return Object.entries(value).map(([name, inner]) => `<${name}>${xml(inner)}</${name}>`).join('');
}

/** PHP's intval() of a request string: the leading integer, else 0. */
function phpIntval(value: string | null): number {
  const match = /^\s*[+-]?\d+/.exec(value ?? '');
  return match ? parseInt(match[0], 10) : 0;
}
