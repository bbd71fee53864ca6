import type { Next } from 'koa';
import { RateLimitedError } from '../platform/errors.ts';
import type { RateLimiter, RateDecision } from '../platform/rate-limiter.ts';
import type { KeyService, Principal } from '../keys/key.service.ts';
import type { ApiContext } from './context.ts';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The door of every /v1 request, before routing: the bearer key (401 unless valid), then the key's rate limit
 * (every request counted, rejected ones too; the X-RateLimit-* headers on every answer, 429 with Retry-After).
 * A cached key far from its limit passes without a promise or a database round trip: this runs on every request.
 */
export function gate(keys: KeyService, limiter: RateLimiter) {
  function pass(ctx: ApiContext, decision: RateDecision, next: Next): Promise<void> {
    ctx.set('X-RateLimit-Limit', String(decision.limit));
    ctx.set('X-RateLimit-Remaining', String(decision.remaining));
    ctx.set('X-RateLimit-Reset', String(decision.resetAt));
    if (!decision.allowed) throw new RateLimitedError(decision.retryAfter);
    return next() as Promise<void>;
  }

  function limit(ctx: ApiContext, principal: Principal, next: Next): Promise<void> {
    ctx.state.principal = principal;
    const decision = limiter.check(principal.key._id, principal.rateLimitPerMinute);
    return decision instanceof Promise ? decision.then((d) => pass(ctx, d, next)) : pass(ctx, decision, next);
  }

  return function gateRequest(ctx: ApiContext, next: Next): Promise<void> {
    const principal = keys.authenticate(BEARER.exec(ctx.get('Authorization'))?.[1]);
    return principal instanceof Promise ? principal.then((p) => limit(ctx, p, next)) : limit(ctx, principal, next);
  };
}
