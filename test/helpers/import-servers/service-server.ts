// What every outside service's test server shares: a real node:http server on a free loopback port that records the
// requests it gets, checks credentials before anything else (as the services do), and can be told to answer the next
// requests, or every Nth one, with the service's own rate-limit answer. Each service's file (bitly.ts, dub.ts...)
// gives the routes, the credential check and the 429 exactly as that service's reference describes them.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** The path without the query. */
  path: string;
  query: URLSearchParams;
  /** Lowercase names, as node gives them. */
  headers: IncomingHttpHeaders;
}

export interface Reply {
  status: number;
  /** Sent as JSON; a string is sent as it is (plain text). */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ServiceBehaviour {
  /** The service's refusal of these credentials, or null when they are right. */
  refuse(request: RecordedRequest): Reply | null;
  /** The service's 429, with its headers. */
  rateLimited(): Reply;
  handle(request: RecordedRequest): Reply;
}

export interface ServiceServer {
  /** Base URL, without a trailing slash: what a source takes as its `baseUrl`. */
  url: string;
  /** Every request received, in order (refused and rate-limited ones too). */
  requests: RecordedRequest[];
  /** The next `count` requests with valid credentials get the service's 429. */
  limitNext(count?: number): void;
  /** Every Nth request with valid credentials gets the service's 429 (0 stops it). */
  limitEvery(n: number): void;
  close(): Promise<void>;
}

/** Options every service's server takes, besides its fixtures. */
export interface ThrottleOptions {
  /** Every Nth request with valid credentials is answered with the service's 429. */
  rateLimitEvery?: number;
}

export async function startServiceServer(behaviour: ServiceBehaviour, throttle: ThrottleOptions = {}): Promise<ServiceServer> {
  const requests: RecordedRequest[] = [];
  let limitNext = 0;
  let limitEvery = throttle.rateLimitEvery ?? 0;
  let authorized = 0;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://service.test');
    const request: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers };
    requests.push(request);
    req.resume();
    req.on('end', () => {
      let reply = behaviour.refuse(request);
      if (reply === null) {
        authorized += 1;
        const limited = limitNext > 0 || (limitEvery > 0 && authorized % limitEvery === 0);
        if (limitNext > 0) limitNext -= 1;
        reply = limited ? behaviour.rateLimited() : behaviour.handle(request);
      }
      const text = typeof reply.body === 'string' ? reply.body : reply.body === undefined ? '' : JSON.stringify(reply.body);
      const type = typeof reply.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8';
      res.writeHead(reply.status, { 'content-type': type, ...reply.headers });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    limitNext(count = 1) {
      limitNext = count;
    },
    limitEvery(n) {
      limitEvery = n;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Pages of a list by position: the items after `after` (by key), at most `size` of them. */
export function itemsAfter<T>(items: readonly T[], keyOf: (item: T) => string, after: string | null, size: number): { page: T[]; found: boolean; rest: number } {
  const start = after === null ? 0 : items.findIndex((item) => keyOf(item) === after) + 1;
  if (start === 0 && after !== null) return { page: [], found: false, rest: 0 };
  const page = items.slice(start, start + size);
  return { page, found: true, rest: items.length - start - page.length };
}
