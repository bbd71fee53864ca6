import { createHash } from 'node:crypto';
import type { Next } from 'koa';
import { IdempotencyInProgressError, IdempotencyKeyReusedError, InvalidRequestError } from '../platform/errors.ts';
import type { ApiContext } from './context.ts';
import { toErrorResponse } from './error-response.ts';
import type { IdempotencyStore, StoredResponse } from './idempotency.store.ts';

const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
const REPLAYED_HEADERS = ['location', 'content-type'];

export interface IdempotencyOptions {
  store: IdempotencyStore;
  docsBaseUrl: string;
  /** How long a duplicate waits for the first attempt to finish before answering 409. */
  waitMs?: number;
  pollMs?: number;
}

/**
 * `Idempotency-Key` on any mutation: scoped to the tenant, bound to the method, path and exact body. The first
 * attempt's answer (success or client error) is replayed for the retention time; a server error is not stored, so
 * the retry runs again. A duplicate that arrives while the first is running waits for its answer.
 */
export function idempotency(options: IdempotencyOptions) {
  const waitMs = options.waitMs ?? 10_000;
  const pollMs = options.pollMs ?? 20;
  return function idempotencyIfMutation(ctx: ApiContext, next: Next): Promise<void> {
    return MUTATIONS.has(ctx.method) && ctx.get('Idempotency-Key') !== '' ? applyIdempotency(ctx, next) : (next() as Promise<void>);
  };

  async function applyIdempotency(ctx: ApiContext, next: Next): Promise<void> {
    const key = ctx.get('Idempotency-Key');
    if (!KEY_FORMAT.test(key)) {
      throw new InvalidRequestError('Idempotency-Key must be 1 to 255 printable ASCII characters.');
    }
    const principal = ctx.state.principal;
    if (!principal) {
      await next();
      return;
    }
    const tenant = principal.kind === 'workspace' ? principal.workspace._id : principal.partner._id;
    const id = sha256(`${tenant}\n${key}`);
    const fingerprint = sha256(`${ctx.method} ${ctx.path}?${ctx.querystring}\n`, ctx.state.rawBody);

    const deadline = Date.now() + waitMs;
    for (;;) {
      const claim = await options.store.claim(id, fingerprint, new Date());
      if (claim.outcome === 'mismatch') throw new IdempotencyKeyReusedError();
      if (claim.outcome === 'replay') return replay(ctx, claim.response);
      if (claim.outcome === 'claimed') break;
      if (Date.now() >= deadline) throw new IdempotencyInProgressError();
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }

    try {
      await next();
    } catch (error) {
      const response = toErrorResponse(error, options.docsBaseUrl);
      if (response.status >= 500) await options.store.release(id);
      else await options.store.complete(id, { status: response.status, body: JSON.stringify(response.body), headers: response.headers });
      throw error;
    }
    if (ctx.status >= 500) {
      await options.store.release(id);
      return;
    }
    await options.store.complete(id, snapshot(ctx));
  }
}

function snapshot(ctx: ApiContext): StoredResponse {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = ctx.response.get(name);
    if (value) headers[name] = value;
  }
  // A body already written as text (a JSON-RPC answer passed through as it came) is kept as that text.
  const body = ctx.body === undefined || ctx.body === null ? null : typeof ctx.body === 'string' ? ctx.body : JSON.stringify(ctx.body);
  return { status: ctx.status, body, headers };
}

function replay(ctx: ApiContext, response: StoredResponse): void {
  for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
  ctx.set('Idempotent-Replayed', 'true');
  ctx.status = response.status;
  if (response.body !== null) {
    if (!response.headers['content-type']) ctx.type = 'application/json';
    ctx.body = response.body;
  }
}

function sha256(text: string, extra?: Buffer): string {
  const hash = createHash('sha256').update(text);
  if (extra) hash.update(extra);
  return hash.digest('hex');
}
