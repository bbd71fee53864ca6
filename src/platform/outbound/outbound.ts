// HTTP requests to URLs our customers choose (webhook deliveries, rotator destination health checks). The SSRF
// guard lives in the sockets themselves: each connection resolves the host once, checks every address (ssrf.ts) and
// connects to one of the checked addresses. Checking first and letting the HTTP client resolve again would leave a
// DNS-rebinding window: a name answering a public address to the check and 127.0.0.1 to the connection.
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { checkedAddresses, refusalOf, UnsafeTargetError, type TargetOptions } from './ssrf.ts';

/** A `lookup` for sockets: one resolution, every address checked, only checked addresses handed to the connection. */
export function checkedLookup(targets: TargetOptions): LookupFunction {
  return (hostname, options, callback) => {
    checkedAddresses(hostname, targets).then(
      (resolved) => {
        const wanted = options.family === 4 || options.family === 6 ? resolved.filter((a) => a.family === options.family) : resolved;
        const addresses: LookupAddress[] = (wanted.length > 0 ? wanted : resolved).map(({ address, family }) => ({ address, family }));
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, ''),
    );
  };
}

export interface OutboundAgents {
  http: http.Agent;
  https: https.Agent;
}

/** Keep-alive connections, at most `maxSocketsPerOrigin` open to one origin at a time (further requests queue). */
export interface ConnectionReuse {
  maxSocketsPerOrigin: number;
}

/**
 * The one place the agents for customer-chosen URLs are built: every connection they open goes through
 * `checkedLookup`. With `reuse`, connections are kept alive and reused per origin: a reused connection is one that
 * was made to a checked address, so reuse keeps the guard.
 */
export function outboundAgents(targets: TargetOptions, reuse?: ConnectionReuse): OutboundAgents {
  const lookup = checkedLookup(targets);
  const options = reuse ? { lookup, keepAlive: true, maxSockets: reuse.maxSocketsPerOrigin, maxFreeSockets: reuse.maxSocketsPerOrigin, scheduling: 'lifo' as const } : { lookup };
  return { http: new http.Agent(options), https: new https.Agent(options) };
}

export interface OutboundRequest {
  method: 'GET' | 'HEAD' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Bytes of the answer's body kept; the rest is not read. */
  maxBodyBytes?: number;
}

export interface OutboundAnswer {
  status: number;
  /** Lowercase names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

/** Why a request got no answer: the target was refused (SSRF), the time ran out, or the network failed. */
export class OutboundError extends Error {
  readonly kind: 'refused' | 'timeout' | 'network';
  constructor(kind: 'refused' | 'timeout' | 'network', message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.kind = kind;
  }
}

/**
 * One request, redirects not followed (their targets were never checked). An IP literal is checked here, since a
 * socket connects to a literal without any lookup; a name is checked by the agent's lookup at connect time.
 */
export function send(agents: OutboundAgents, targets: TargetOptions, request: OutboundRequest): Promise<OutboundAnswer> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.reject(new OutboundError('refused', 'not a valid absolute URL'));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new OutboundError('refused', 'only http and https URLs are accepted'));
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!targets.allowPrivate && isIP(host) !== 0) {
    const reason = refusalOf(host);
    if (reason !== null) return Promise.reject(new OutboundError('refused', `${host} is ${reason}`));
  }
  const cap = request.maxBodyBytes ?? 0;
  const signal = AbortSignal.timeout(request.timeoutMs);
  const client = url.protocol === 'https:' ? https : http;
  const agent = url.protocol === 'https:' ? agents.https : agents.http;
  return new Promise((resolve, reject) => {
    const failed = (error: unknown) => {
      if (error instanceof UnsafeTargetError) reject(new OutboundError('refused', error.message, error));
      else if (signal.aborted) reject(new OutboundError('timeout', `no answer within ${request.timeoutMs} ms`, error));
      else reject(new OutboundError('network', describe(error), error));
    };
    const req = client.request(url, { method: request.method, headers: request.headers ?? {}, agent, signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const done = () => {
        if (settled) return;
        settled = true;
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).subarray(0, cap) });
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        if (size < cap) {
          chunks.push(chunk);
          size += chunk.byteLength;
        }
        if (size >= cap) done();
      });
      res.on('end', done);
      // The status and headers are in hand: a body cut short (or timed out) still leaves a complete answer.
      res.on('error', done);
      res.on('close', done);
    });
    req.on('error', failed);
    req.end(request.body);
  });
}

function describe(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  return code ?? message ?? String(error);
}
