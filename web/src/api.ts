// The one way the dashboard talks to the api: same origin, the session cookie, the CSRF token on every
// state-changing call and the workspace or partner in view. Every failure becomes an ApiError carrying the
// envelope's code and field details, so screens show errors next to their fields without parsing anything.

export interface ErrorDetail {
  path: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: ErrorDetail[];
  readonly retryAfter: number | null;

  constructor(status: number, code: string, message: string, details: ErrorDetail[] = [], retryAfter: number | null = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
  }

  /** The message for one field (`url`, `rules[0].action.url`), or for anything below it when `nested`. */
  fieldError(path: string, nested = false): string | undefined {
    const hit = this.details.find((d) => d.path === path || (nested && (d.path.startsWith(`${path}.`) || d.path.startsWith(`${path}[`))));
    return hit?.message;
  }
}

/** What the session supplies to every call; set by session.ts when the session or the context changes. */
interface Credentials {
  csrfToken: string | null;
  context: string | null;
}

const credentials: Credentials = { csrfToken: null, context: null };
let onUnauthorized: (() => void) | null = null;

export function setCredentials(next: Partial<Credentials>): void {
  Object.assign(credentials, next);
}

/** Called when a /v1 call answers 401: the session ended (expired, revoked, signed out elsewhere). */
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

export type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function withQuery(path: string, query: Query | undefined): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(key, String(value));
  }
  const search = params.toString();
  return search ? `${path}${path.includes('?') ? '&' : '?'}${search}` : path;
}

async function send(method: string, path: string, options: RequestOptions, accept: string): Promise<Response> {
  const headers: Record<string, string> = { Accept: accept, ...options.headers };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  if (!SAFE_METHODS.has(method) && credentials.csrfToken) headers['X-CSRF-Token'] = credentials.csrfToken;
  if (path.startsWith('/v1/') && credentials.context) headers['Linkplane-Context'] = credentials.context;
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'network', 'The server could not be reached. Check your connection and try again.');
  }
  if (!response.ok) {
    const failure = await toApiError(response);
    if (failure.status === 401 && path.startsWith('/v1/')) onUnauthorized?.();
    throw failure;
  }
  return response;
}

async function toApiError(response: Response): Promise<ApiError> {
  const retryAfter = Number(response.headers.get('Retry-After')) || null;
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string; details?: ErrorDetail[] } };
    if (body.error?.code) {
      return new ApiError(response.status, body.error.code, body.error.message ?? response.statusText, body.error.details ?? [], retryAfter);
    }
  } catch {
    // not JSON: a proxy's error page, or the api is restarting
  }
  return new ApiError(response.status, response.status >= 500 ? 'internal' : 'invalid_request', `The server answered ${response.status} ${response.statusText}.`, [], retryAfter);
}

/** A JSON call; resolves to the parsed body, or undefined for 202/204 without one. */
export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(method, path, options, 'application/json');
  if (response.status === 204 || response.headers.get('Content-Length') === '0') return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export const api = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) => request<T>('GET', path, { query, signal }),
  post: <T>(path: string, body?: unknown, headers?: Record<string, string>) => request<T>('POST', path, { body: body ?? {}, headers }),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, { body }),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, { body }),
  delete: <T = void>(path: string, query?: Query) => request<T>('DELETE', path, { query }),
  /**
   * Saves a /v1 file (the CSV export) to disk as it arrives: a one-minute link for this session and the context in
   * view (POST /auth/downloads), followed as a plain link. Fetched here instead, the whole file would wait in the
   * tab's memory first. Errors the ticket can meet (no session, no membership) throw here, as for any call.
   */
  async download(path: string, query?: Query): Promise<void> {
    const search = withQuery('', query).replace(/^\?/, '');
    const { url } = await request<{ url: string }>('POST', '/auth/downloads', { body: { context: credentials.context, path, query: search } });
    const anchor = document.createElement('a');
    anchor.href = url;
    anchor.download = '';
    document.body.append(anchor);
    anchor.click();
    anchor.remove();
  },
  /**
   * Reads a Server-Sent Events answer (GET /v1/clicks/stream) until it ends or `signal` aborts, handing each event
   * over with its id. Fetched rather than opened with EventSource, which cannot send the context header; resuming
   * is the caller's: it passes the last id it saw as `lastEventId`. `onOpen` is called once the server has answered
   * (its stream is then following the clicks: none made from then on is missed).
   */
  async events(
    path: string,
    query: Query | undefined,
    options: { lastEventId: string | null; signal: AbortSignal; onEvent: (event: { id: string | null; type: string; data: string }) => void; onOpen?: () => void },
  ): Promise<void> {
    const headers: Record<string, string> = options.lastEventId ? { 'Last-Event-ID': options.lastEventId } : {};
    const response = await send('GET', path, { query, headers, signal: options.signal }, 'text/event-stream');
    if (!response.body) return;
    options.onOpen?.();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id: string | null = null;
        let type = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('id:')) id = line.slice(3).trim();
          else if (line.startsWith('event:')) type = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) options.onEvent({ id, type, data: data.join('\n') });
      }
    }
  },
  /** A binary answer (QR images) as a Blob, for object URLs the CSP allows (img-src blob:). */
  async blob(path: string, query?: Query, accept = '*/*'): Promise<Blob> {
    const response = await send('GET', path, { query }, accept);
    return response.blob();
  },
};

/** The pagination envelope of every cursor-paged list (spec part 8). */
export interface Page<T> {
  data: T[];
  pagination: { next_cursor: string | null; has_more: boolean };
}

/** One page of a cursor-paged list; pass the previous page's `next_cursor` back unchanged. */
export function fetchPage<T>(path: string, query: Query, cursor: string | null, signal?: AbortSignal): Promise<Page<T>> {
  return api.get<Page<T>>(path, { ...query, cursor: cursor ?? undefined }, signal);
}

/** Every item of a cursor-paged list (for small lists such as domains or tags used in pickers). */
export async function fetchAll<T>(path: string, query: Query = {}, maxPages = 20): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < maxPages; page++) {
    const answer: Page<T> = await fetchPage<T>(path, { limit: 100, ...query }, cursor);
    items.push(...answer.data);
    if (!answer.pagination?.has_more || !answer.pagination.next_cursor) break;
    cursor = answer.pagination.next_cursor;
  }
  return items;
}

/** A human sentence for any thrown value, for banners and toasts. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'rate_limited' && error.retryAfter && !/\b(retry|try again)\b/i.test(error.message)) {
      return `${error.message} Try again in ${error.retryAfter} s.`;
    }
    // The api speaks of key kinds; in the dashboard the kind is the workspace or partner in view.
    const kind = error.code === 'forbidden' ? /requires a (workspace|partner) key/.exec(error.message)?.[1] : undefined;
    if (kind) return `This belongs to a ${kind}, not to what is in view: switch to a ${kind} with the menu at the top of the page.`;
    return error.message;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}
