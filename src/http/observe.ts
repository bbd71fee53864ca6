import { randomBase62 } from '../platform/ids.ts';
import type { Next } from 'koa';
import type { AccessLog } from '../platform/logger.ts';
import type { HttpMetrics } from '../platform/metrics.ts';
import type { InFlight } from '../platform/http-server.ts';
import type { ApiContext } from './context.ts';
import { OPS_PATHS } from './ops.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request ids: a random prefix per process and a counter, unique across replicas and restarts without drawing
 * random bytes for every request.
 */
function requestIds(): () => string {
  const prefix = randomBase62(10);
  let counter = 0;
  return () => `${prefix}-${(++counter).toString(36)}`;
}

export type ErrorResponder = (ctx: ApiContext, error: unknown) => void;

/** The route template of a request the router did not reach (answered before routing), if it names one. */
export type RouteOf = (ctx: ApiContext) => string | undefined;

/**
 * The outermost middleware: a request id (the caller's if it sent a sane one), the one place a thrown error
 * becomes a response (`respond`), then one log line and one histogram sample per request. Routes are labelled by
 * their template (`/v1/links/:id`), never the raw path, so neither the log index nor the metric cardinality grows
 * with traffic. A request answered before routing (401, 400, 413, 409, a replay) is labelled by the template its
 * path would have matched (`routeOf`), an operations endpoint by its fixed path, anything else `unmatched`: every
 * label comes from a bounded set, whatever paths clients make up. One layer, not three: every Koa layer is a promise
 * per request on the hot path.
 */
export function observe(access: AccessLog, metrics: HttpMetrics, respond: ErrorResponder, inFlight?: InFlight, routeOf?: RouteOf) {
  const nextId = requestIds();
  return async function observeRequest(ctx: ApiContext, next: Next): Promise<void> {
    const start = performance.now();
    const incoming = ctx.get('X-Request-Id');
    const requestId = incoming !== '' && REQUEST_ID.test(incoming) ? incoming : nextId();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    if (inFlight) inFlight.active += 1;
    try {
      await next();
    } catch (error) {
      respond(ctx, error);
    } finally {
      if (inFlight) inFlight.active -= 1;
    }
    const ms = performance.now() - start;
    const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? routeOf?.(ctx) ?? (OPS_PATHS.has(ctx.path) ? ctx.path : 'unmatched');
    const status = ctx.status;
    metrics.requestDuration.observe(ctx.method, route, status, ms / 1000);
    access(requestId, ctx.method, route, status, Math.round(ms * 100) / 100);
  };
}
