// A Dub REST API for tests, as its public reference describes it:
// - Dub's published OpenAPI document (generated from apps/web/lib/openapi in github.com/dubinc/dub): `GET /links`
//   with `folderId`, `showArchived` (default false), `pageSize` (default and at most 100), `page` (deprecated, offset),
//   `startingAfter` / `endingBefore` (a link id; mutually exclusive, not with `page`, an unknown id is a 422 "Invalid
//   cursor"); `GET /links/count` (a number); `GET /folders` (`page`, `pageSize` at most 50); the Link and Folder
//   schemas; errors as `{ error: { code, message, doc_url } }`.
// - https://dub.co/docs/api-reference/introduction: `Authorization: Bearer <key>`, 401 when missing or wrong.
// - https://dub.co/docs/api-reference/rate-limits: 429 with Retry-After (seconds to wait), X-RateLimit-Limit,
//   X-RateLimit-Remaining and X-RateLimit-Reset (epoch seconds).
// Lists are sorted newest first by creation date (the reference's default sort, "always descending"), ties by id,
// and both cursors move in that order. `folderId=unsorted` lists the links outside folders (the schema maps it to
// none); without `folderId` every link is listed, as the reference says.
import { itemsAfter, startServiceServer, type RecordedRequest, type Reply, type ServiceServer, type ThrottleOptions } from './service-server.ts';

/** One link; fields as Dub names them. Extra fields are sent as they are. */
export interface DubLinkFixture {
  /** Default `link_<n>`; set to undefined for a malformed row (it is still listed, after its position). */
  id?: string;
  domain?: string;
  key?: string;
  url?: unknown;
  title?: string | null;
  /** Tag names; sent as Dub's `{ id, name, color }`. */
  tags?: string[];
  folderId?: string | null;
  archived?: boolean;
  expiresAt?: string | null;
  expiredUrl?: string | null;
  password?: string | null;
  ios?: string | null;
  android?: string | null;
  geo?: Record<string, string> | null;
  utm_source?: string | null;
  utm_medium?: string | null;
  utm_campaign?: string | null;
  utm_term?: string | null;
  utm_content?: string | null;
  clicks?: number;
  /** ISO 8601; default: a minute apart, newest first in fixture order. */
  createdAt?: string;
  [field: string]: unknown;
}

export interface DubServerOptions extends ThrottleOptions {
  token: string;
  links: DubLinkFixture[];
  /** Folder ids; every link's `folderId` should be one of them or null. */
  folders?: string[];
  /** Retry-After of the 429 (default 7). */
  retryAfterSeconds?: number;
}

export interface DubServer extends ServiceServer {
  /** Deletes a link, as someone would at Dub while an import runs. */
  remove(id: string): void;
  /** Creates a link from now on (newest of all). */
  add(link: DubLinkFixture): void;
}

const MAX_PAGE_SIZE = 100;
const MAX_FOLDERS_PAGE_SIZE = 50;
const DOCS = 'https://dub.co/docs/api-reference/errors';

type Stored = Record<string, unknown> & { id: string; key: string; createdAt: string; folderId: string | null; archived: boolean; row: number };

export async function startDubServer(options: DubServerOptions): Promise<DubServer> {
  const base = Date.parse('2025-06-01T12:00:00Z');
  let sequence = 0;
  const store = (fixture: DubLinkFixture, createdAt: number): Stored => {
    sequence += 1;
    const id = `link_${String(sequence).padStart(6, '0')}`;
    const { tags, ...fields } = fixture;
    return {
      ...defaults(id, fixture.key ?? `k${sequence}`, fixture.domain ?? 'dub.sh'),
      createdAt: new Date(createdAt).toISOString(),
      ...fields,
      tags: (tags ?? []).map((name) => ({ id: `tag_${name}`, name, color: 'blue' })),
      id: fixture.id === undefined && 'id' in fixture ? '' : (fixture.id ?? id),
      row: sequence,
    } as Stored;
  };
  let links = options.links.map((fixture, index) => store(fixture, base - index * 60_000));
  const folders = options.folders ?? [];
  const retryAfter = options.retryAfterSeconds ?? 7;

  const server = await startServiceServer(
    {
      refuse(request) {
        const header = request.headers.authorization;
        if (header === `Bearer ${options.token}`) return null;
        return dubError(401, 'unauthorized', header === undefined ? 'Missing Authorization header.' : 'Unauthorized: Invalid API key.');
      },
      rateLimited: () => ({
        ...dubError(429, 'rate_limit_exceeded', 'Too many requests.'),
        headers: {
          'retry-after': String(retryAfter),
          'x-ratelimit-limit': '60',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + retryAfter),
        },
      }),
      handle(request) {
        if (request.method !== 'GET') return dubError(405, 'bad_request', 'Method not allowed.');
        if (request.path === '/links') return listLinks(request);
        if (request.path === '/links/count') return { status: 200, body: filtered(request).length };
        if (request.path === '/folders') return listFolders(request);
        return dubError(404, 'not_found', 'The requested resource was not found.');
      },
    },
    options,
  );

  function filtered(request: RecordedRequest): Stored[] {
    const folder = request.query.get('folderId');
    const archived = request.query.get('showArchived') === 'true';
    return sorted().filter((link) => (archived || !link.archived) && (folder === null || (folder === 'unsorted' ? link.folderId === null : link.folderId === folder)));
  }

  function sorted(): Stored[] {
    return [...links].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (b.row - a.row));
  }

  function listLinks(request: RecordedRequest): Reply {
    const pageSize = Number(request.query.get('pageSize') ?? MAX_PAGE_SIZE);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) return dubError(422, 'unprocessable_entity', `Max page size is ${MAX_PAGE_SIZE}.`);
    const after = request.query.get('startingAfter');
    const before = request.query.get('endingBefore');
    const page = request.query.get('page');
    if (after && before) return dubError(422, 'unprocessable_entity', 'You cannot use both startingAfter and endingBefore at the same time.');
    if ((after || before) && page) return dubError(422, 'unprocessable_entity', 'You cannot use both page and startingAfter/endingBefore at the same time. Please use one pagination method.');
    const cursor = after ?? before;
    if (cursor && !links.some((link) => link.id === cursor)) return dubError(422, 'unprocessable_entity', 'Invalid cursor: the provided ID does not exist.');
    const visible = filtered(request);
    const keyOf = (link: Stored) => link.id || `row-${link.row}`;
    let chosen: Stored[];
    if (before) {
      const at = visible.findIndex((link) => link.id === before);
      chosen = visible.slice(Math.max(0, at - pageSize), at);
    } else if (after) {
      chosen = itemsAfter(visible, keyOf, after, pageSize).page;
    } else {
      const offset = (Number(page ?? '1') - 1) * pageSize;
      chosen = visible.slice(offset, offset + pageSize);
    }
    return { status: 200, body: chosen.map(linkBody) };
  }

  function listFolders(request: RecordedRequest): Reply {
    const pageSize = Number(request.query.get('pageSize') ?? MAX_FOLDERS_PAGE_SIZE);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_FOLDERS_PAGE_SIZE) return dubError(422, 'unprocessable_entity', `Max page size is ${MAX_FOLDERS_PAGE_SIZE}.`);
    const offset = (Number(request.query.get('page') ?? '1') - 1) * pageSize;
    const body = folders.slice(offset, offset + pageSize).map((id) => ({
      id,
      name: `Folder ${id}`,
      description: null,
      type: 'default',
      accessLevel: 'write',
      createdAt: new Date(base).toISOString(),
      updatedAt: new Date(base).toISOString(),
    }));
    return { status: 200, body };
  }

  function linkBody(link: Stored): Record<string, unknown> {
    const { row: _row, ...body } = link;
    if (body.id === '') delete (body as Record<string, unknown>)['id'];
    return body;
  }

  return {
    ...server,
    remove(id) {
      links = links.filter((link) => link.id !== id);
    },
    add(fixture) {
      links.push(store(fixture, Date.now()));
    },
  };
}

function defaults(id: string, key: string, domain: string): Record<string, unknown> {
  return {
    id,
    domain,
    key,
    url: `https://example.com/${key}`,
    trackConversion: false,
    externalId: null,
    tenantId: null,
    programId: null,
    partnerId: null,
    archived: false,
    expiresAt: null,
    expiredUrl: null,
    disabledAt: null,
    password: null,
    proxy: false,
    title: null,
    description: null,
    image: null,
    video: null,
    rewrite: false,
    doIndex: false,
    ios: null,
    android: null,
    geo: null,
    publicStats: false,
    folderId: null,
    comments: null,
    shortLink: `https://${domain}/${key}`,
    qrCode: `https://api.dub.co/qr?url=https://${domain}/${key}`,
    utm_source: null,
    utm_medium: null,
    utm_campaign: null,
    utm_term: null,
    utm_content: null,
    userId: 'user_1',
    workspaceId: 'ws_1',
    clicks: 0,
    leads: 0,
    conversions: 0,
    sales: 0,
    saleAmount: 0,
    lastClicked: null,
    updatedAt: '2025-06-01T12:00:00.000Z',
    tagId: null,
    projectId: 'ws_1',
    webhookIds: [],
  };
}

/** Dub's error body; its doc_url replaces the first underscore of the code only, as Dub does. */
function dubError(status: number, code: string, message: string): Reply {
  return { status, body: { error: { code, message, doc_url: `${DOCS}#${code.replace('_', '-')}` } } };
}
