import type { Next } from 'koa';
import { RateLimitedError } from '../platform/errors.ts';
import type { RateLimiter } from '../platform/rate-limiter.ts';
import type { ApiContext } from './context.ts';

/** Counts every authenticated request (rejected ones too, as the spec says) and sets the X-RateLimit-* headers. */
export function rateLimit(limiter: RateLimiter) {
  return async function limitRate(ctx: ApiContext, next: Next): Promise<void> {
    const principal = ctx.state.principal;
    if (!principal) {
      await next();
      return;
    }
    const pending = limiter.check(principal.key._id, principal.rateLimitPerMinute);
    // Far from the limit the decision is immediate; awaiting only when needed keeps a microtask off the hot path.
    const decision = pending instanceof Promise ? await pending : pending;
    ctx.set('X-RateLimit-Limit', String(decision.limit));
    ctx.set('X-RateLimit-Remaining', String(decision.remaining));
    ctx.set('X-RateLimit-Reset', String(decision.resetAt));
    if (!decision.allowed) throw new RateLimitedError(decision.retryAfter);
    await next();
  };
}
