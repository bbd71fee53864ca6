// The Linkplane client. `lp.api` is an openapi-fetch client typed by the generated paths, so every operation of the
// API is callable with its parameters and body checked by the compiler; `lp.links`, `lp.analytics`, `lp.webhooks`
// are the common operations as methods that return the data and throw a typed LinkplaneError on a refusal, and
// `lp.paginate` walks any cursor-paginated list as an async iterator.
import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './generated/openapi.ts';
import { errorFromResponse } from './errors.ts';
import { sleep, transport, type RetryEvent } from './transport.ts';

export const SDK_VERSION = '0.1.0';

export interface LinkplaneOptions {
  /** A workspace key (`lp_live_…`) or a partner key (`lpp_live_…`). */
  apiKey: string;
  /** The API's origin, e.g. `https://api.linkplane.example` (`/v1` is added); default http://127.0.0.1:8080. */
  baseUrl?: string;
  /** Retries after the first attempt on `rate_limited`, `internal` and connection failures (default 2). */
  maxRetries?: number;
  /** A Retry-After longer than this is not waited for (default 60 000 ms). */
  maxRetryDelayMs?: number;
  /** First backoff step when the API gives no Retry-After (default 500 ms). */
  initialBackoffMs?: number;
  /** Called before each retry, with why and how long it waits. */
  onRetry?: (event: RetryEvent) => void;
  /** The fetch to send with (default globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Appended to the User-Agent (`linkplane-sdk/<version> <yours>`). */
  userAgent?: string;
}

export type Schemas = components['schemas'];
export type Link = Schemas['Link'];
type JsonBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : O extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B
    : never;
type Query<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type Ok<O> = O extends { responses: { 200: { content: { 'application/json': infer R } } } }
  ? R
  : O extends { responses: { 201: { content: { 'application/json': infer R } } } }
    ? R
    : never;

export type LinkCreate = JsonBody<operations['createLink']>;
export type LinkUpdate = JsonBody<operations['updateLink']>;
export type LinkListQuery = Omit<Query<operations['listLinks']>, 'cursor'>;
export type AnalyticsQuery = Query<operations['getAnalyticsSummary']>;
export type AnalyticsSummary = Ok<operations['getAnalyticsSummary']>;
export type AnalyticsTimeseries = Ok<operations['getAnalyticsTimeseries']>;
export type AnalyticsTopLinks = Ok<operations['getAnalyticsTopLinks']>;
export type Webhook = Ok<operations['getWebhook']>;
export type WebhookCreate = JsonBody<operations['createWebhook']>;
export type WebhookCreated = Ok<operations['createWebhook']>;

/** Per-call options of the helper methods. */
export interface CallOptions {
  /** Your own Idempotency-Key for a mutation (one is made for each call otherwise). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** The list operations: a GET whose 200 answer is `{ data: [...], pagination: { next_cursor } }`. */
type ListOperation<P extends keyof paths> = paths[P] extends { get: infer O }
  ? O extends { responses: { 200: { content: { 'application/json': { data: unknown[]; pagination: { next_cursor: string | null } } } } } }
    ? O
    : never
  : never;
export type ListPath = { [P in keyof paths]: ListOperation<P> extends never ? never : P }[keyof paths];
export type ListItem<P extends ListPath> = Ok<ListOperation<P>> extends { data: Array<infer T> } ? T : never;
type PathParams<O> = O extends { parameters: { path: infer A } } ? (A extends Record<string, unknown> ? A : never) : never;
export type ListParams<P extends ListPath> = {
  query?: Omit<Query<ListOperation<P>>, 'cursor'>;
} & (PathParams<ListOperation<P>> extends never ? { path?: never } : { path: PathParams<ListOperation<P>> });

/** The pages of a list, fetched one at a time as the loop asks for them; iterate it for the items. */
export class Paginator<T> implements AsyncIterable<T> {
  private readonly fetchPage: (cursor: string | null) => Promise<{ data: T[]; pagination: { next_cursor: string | null } }>;

  constructor(fetchPage: (cursor: string | null) => Promise<{ data: T[]; pagination: { next_cursor: string | null } }>) {
    this.fetchPage = fetchPage;
  }

  /** Each page, as the API answered it. */
  async *pages(): AsyncGenerator<{ data: T[]; pagination: { next_cursor: string | null } }, void, undefined> {
    let cursor: string | null = null;
    do {
      const page = await this.fetchPage(cursor);
      yield page;
      cursor = page.pagination.next_cursor;
    } while (cursor !== null);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item, fetched page after page (mind the size of the list). */
  async toArray(): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this) all.push(item);
    return all;
  }
}

/** The data of an openapi-fetch answer, or the typed LinkplaneError of its refusal. */
export async function unwrap<R extends { data?: unknown; error?: unknown; response: Response }>(call: Promise<R>): Promise<NonNullable<R['data']>> {
  const { data, error, response } = await call;
  if (!response.ok) throw errorFromResponse(response, error);
  return data as NonNullable<R['data']>;
}

export class Linkplane {
  /** Every operation of the API, typed from its OpenAPI document; answers `{ data, error, response }`. */
  readonly api: Client<paths>;
  readonly baseUrl: string;

  constructor(options: LinkplaneOptions) {
    if (!options.apiKey) throw new TypeError('Linkplane: apiKey is required');
    this.baseUrl = (options.baseUrl ?? 'http://127.0.0.1:8080').replace(/\/+$/, '').replace(/\/v1$/, '');
    const send = transport({
      apiKey: options.apiKey,
      maxRetries: options.maxRetries ?? 2,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
      initialBackoffMs: options.initialBackoffMs ?? 500,
      userAgent: `linkplane-sdk/${SDK_VERSION}${options.userAgent ? ` ${options.userAgent}` : ''}`,
      fetch: options.fetch ?? ((request) => globalThis.fetch(request)),
      onRetry: options.onRetry,
      sleep,
    });
    this.api = createClient<paths>({ baseUrl: `${this.baseUrl}/v1`, fetch: send });
  }

  /** Any cursor-paginated list, as an async iterator over its items: `for await (const l of lp.paginate('/links')) …`. */
  paginate<P extends ListPath>(path: P, params?: ListParams<P>): Paginator<ListItem<P>> {
    // The path is one of a union; openapi-fetch's types check one literal path at a time, so the call is untyped here
    // and typed at the boundary (ListParams in, ListItem out).
    const get = this.api.GET as unknown as (
      path: string,
      init: { params: { path?: unknown; query?: unknown } },
    ) => Promise<{ data?: { data: ListItem<P>[]; pagination: { next_cursor: string | null } }; error?: unknown; response: Response }>;
    return new Paginator((cursor) =>
      unwrap(get(path, { params: { path: params?.path, query: { ...(params?.query ?? {}), ...(cursor === null ? {} : { cursor }) } } })),
    );
  }

  readonly links = {
    create: (body: LinkCreate, options: CallOptions = {}): Promise<Link> =>
      unwrap(this.api.POST('/links', { body, ...init(options) })),
    get: (id: string, options: CallOptions = {}): Promise<Link> =>
      unwrap(this.api.GET('/links/{id}', { params: { path: { id } }, signal: options.signal })),
    update: (id: string, body: LinkUpdate, options: CallOptions = {}): Promise<Link> =>
      unwrap(this.api.PATCH('/links/{id}', { params: { path: { id } }, body, ...init(options) })),
    delete: async (id: string, options: CallOptions = {}): Promise<void> => {
      await unwrap(this.api.DELETE('/links/{id}', { params: { path: { id } }, ...init(options) }));
    },
    /** Every link matching the filters, page after page: `for await (const link of lp.links.list()) …`. */
    list: (query: LinkListQuery = {}): Paginator<Link> => this.paginate('/links', { query }),
  };

  readonly analytics = {
    summary: (query: AnalyticsQuery = {}, options: CallOptions = {}): Promise<AnalyticsSummary> =>
      unwrap(this.api.GET('/analytics/summary', { params: { query }, signal: options.signal })),
    timeseries: (query: Query<operations['getAnalyticsTimeseries']> = {}, options: CallOptions = {}): Promise<AnalyticsTimeseries> =>
      unwrap(this.api.GET('/analytics/timeseries', { params: { query }, signal: options.signal })),
    topLinks: (query: Query<operations['getAnalyticsTopLinks']> = {}, options: CallOptions = {}): Promise<AnalyticsTopLinks> =>
      unwrap(this.api.GET('/analytics/links/top', { params: { query }, signal: options.signal })),
  };

  readonly webhooks = {
    /** The answer carries the endpoint's signing secret, shown this once. */
    create: (body: WebhookCreate, options: CallOptions = {}): Promise<WebhookCreated> =>
      unwrap(this.api.POST('/webhooks', { body, ...init(options) })),
    get: (id: string, options: CallOptions = {}): Promise<Webhook> =>
      unwrap(this.api.GET('/webhooks/{id}', { params: { path: { id } }, signal: options.signal })),
    list: (): Paginator<ListItem<'/webhooks'>> => this.paginate('/webhooks'),
  };
}

function init(options: CallOptions): { headers?: Record<string, string>; signal?: AbortSignal } {
  return {
    ...(options.idempotencyKey === undefined ? {} : { headers: { 'Idempotency-Key': options.idempotencyKey } }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
}
