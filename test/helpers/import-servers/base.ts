// What every outside service's test server shares: a real node:http server on a free loopback port that records each
// request and, on demand, answers the next ones with the service's rate limit (429 with its own headers and body) or a
// server error, before the service's own handling, as its limiter or a proxy in front of it would.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

export interface ServiceServer {
  /** Base URL, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  requests: RecordedRequest[];
  /** The next `times` requests get the service's 429, asking to wait `retryAfterSeconds`. */
  throttleNext(times: number, retryAfterSeconds: number): void;
  /** The next `times` requests get `status` (default 503) with an empty body. */
  failNext(times: number, status?: number): void;
  close(): Promise<void>;
}

export function jsonReply(status: number, body: unknown, contentType = 'application/json'): Reply {
  return { status, headers: { 'content-type': contentType }, body: JSON.stringify(body) };
}

type Intervention = { kind: 'throttle'; retryAfterSeconds: number } | { kind: 'fail'; status: number };

export async function startServiceServer(
  handle: (request: RecordedRequest, url: string) => Reply,
  tooManyRequests: (retryAfterSeconds: number) => Reply,
): Promise<ServiceServer> {
  const requests: RecordedRequest[] = [];
  const interventions: Intervention[] = [];
  let url = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = new URL(req.url ?? '/', 'http://test.invalid');
      const request: RecordedRequest = { method: req.method ?? 'GET', path: target.pathname, query: target.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      const intervention = interventions.shift();
      let reply: Reply;
      try {
        reply =
          intervention?.kind === 'throttle' ? tooManyRequests(intervention.retryAfterSeconds)
          : intervention?.kind === 'fail' ? { status: intervention.status, body: '' }
          : handle(request, url);
      } catch (error) {
        reply = { status: 500, headers: { 'content-type': 'text/plain' }, body: `test server failed: ${String(error)}` };
      }
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    throttleNext(times, retryAfterSeconds) {
      for (let i = 0; i < times; i++) interventions.push({ kind: 'throttle', retryAfterSeconds });
    },
    failNext(times, status = 503) {
      for (let i = 0; i < times; i++) interventions.push({ kind: 'fail', status });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * Sorts as a SQL `ORDER BY key` does: rows that share a key come in no defined order, and a database may give them in
 * a different order for each query (MySQL's sort for LIMIT does). Ties are ordered by a hash of `seed` (pass the
 * request's paging parameters) so a source that relies on the order of a tie fails its test.
 */
export function sortWithLooseTies<T>(rows: readonly T[], keyOf: (row: T) => string | number, idOf: (row: T) => string, direction: 'asc' | 'desc', seed: string): T[] {
  const sign = direction === 'asc' ? 1 : -1;
  return rows
    .map((row) => ({ row, key: keyOf(row), tie: hash(`${seed}|${idOf(row)}`) }))
    .sort((a, b) => (a.key < b.key ? -sign : a.key > b.key ? sign : a.tie - b.tie))
    .map(({ row }) => row);
}

function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) value = Math.imul(value ^ text.charCodeAt(i), 0x01000193);
  return value >>> 0;
}
