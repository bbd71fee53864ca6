import type { Next } from 'koa';
import { RateLimitedError, UnauthorizedError } from '../platform/errors.ts';
import type { RateLimiter, RateDecision } from '../platform/rate-limiter.ts';
import { KEY_PREFIX, type KeyService } from '../tenancy/key.service.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { ApiContext } from './context.ts';
import { readSessionToken } from './session-cookie.ts';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** A dashboard session cookie standing for a key (src/users/session-gate.ts makes one): its principal, or it throws. */
export type SessionPrincipal = (ctx: ApiContext, token: string) => Promise<Principal>;

/** An OAuth access token (any bearer token that is not an API key): its principal, or it throws `unauthorized`. */
export type TokenPrincipal = (ctx: ApiContext, token: string) => Promise<Principal>;

const KEY_PREFIXES = Object.values(KEY_PREFIX);

/**
 * The door of every /v1 request, before routing: the bearer key (401 unless valid), then the key's rate limit
 * (every request counted, rejected ones too; the X-RateLimit-* headers on every answer, 429 with Retry-After).
 * A cached key far from its limit passes without a promise or a database round trip: this runs on every request.
 * Without an Authorization header, the dashboard's session cookie (with Linkplane-Context) may stand for a key;
 * a request with the header never looks at cookies, so the bearer path costs what it did. A bearer token that is
 * not an API key is an OAuth access token (an app a person authorised), resolved by `tokens`.
 */
export function gate(keys: KeyService, limiter: RateLimiter, sessions?: SessionPrincipal, tokens?: TokenPrincipal) {
  function pass(ctx: ApiContext, decision: RateDecision, next: Next): Promise<void> {
    answer(ctx, decision);
    return next() as Promise<void>;
  }

  function limit(ctx: ApiContext, principal: Principal, next: Next): Promise<void> {
    ctx.state.principal = principal;
    const decision = limiter.check(principal.key._id, principal.rateLimitPerMinute);
    return decision instanceof Promise ? decision.then((d) => pass(ctx, d, next)) : pass(ctx, decision, next);
  }

  return function gateRequest(ctx: ApiContext, next: Next): Promise<void> {
    const authorization = ctx.get('Authorization');
    if (authorization === '' && sessions) {
      const token = readSessionToken(ctx.get('Cookie'));
      if (token !== undefined) return sessions(ctx, token).then((p) => limit(ctx, p, next));
    }
    const bearer = BEARER.exec(authorization)?.[1];
    if (bearer !== undefined && tokens && !KEY_PREFIXES.some((prefix) => bearer.startsWith(prefix))) return tokens(ctx, bearer).then((p) => limit(ctx, p, next));
    const principal = keys.authenticate(bearer);
    return principal instanceof Promise ? principal.then((p) => limit(ctx, p, next)) : limit(ctx, principal, next);
  };
}

/** The window's headers on the answer, and 429 when the decision refused. */
function answer(ctx: ApiContext, decision: RateDecision): void {
  ctx.set('X-RateLimit-Limit', String(decision.limit));
  ctx.set('X-RateLimit-Remaining', String(decision.remaining));
  ctx.set('X-RateLimit-Reset', String(decision.resetAt));
  if (!decision.allowed) throw new RateLimitedError(decision.retryAfter);
}

/** Counts more requests against the window of the key a request acts with (the door counted the first). */
export type ChargeMore = (ctx: ApiContext, units: number) => Promise<void>;

/**
 * For one HTTP request that stands for several API calls (a JSON-RPC batch of tool calls): each further call is
 * counted in the key's window as a request of its own, the headers then tell the window after all of them, and
 * when any does not fit the whole request is 429 (the refused units count, as a refused request does).
 */
export function chargeMore(limiter: RateLimiter): ChargeMore {
  return async (ctx, units) => {
    const principal = ctx.state.principal;
    if (!principal || units <= 0) return;
    const decisions = await Promise.all(Array.from({ length: units }, () => Promise.resolve(limiter.check(principal.key._id, principal.rateLimitPerMinute))));
    const refused = decisions.find((d) => !d.allowed);
    answer(ctx, refused ?? decisions.reduce((low, d) => (d.remaining < low.remaining ? d : low)));
  };
}

/**
 * A 401 answered through `door` carries `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728): where a client
 * that holds no usable credential finds the authorization server to get one from.
 */
export function challengeOnUnauthorized(door: (ctx: ApiContext, next: Next) => Promise<void>, metadataUrl: (ctx: ApiContext) => string | null) {
  const challenge = (ctx: ApiContext, error: unknown): never => {
    const url = error instanceof UnauthorizedError ? metadataUrl(ctx) : null;
    if (url !== null) ctx.set('WWW-Authenticate', `Bearer resource_metadata="${url}"`);
    throw error;
  };
  return function challenged(ctx: ApiContext, next: Next): Promise<void> {
    try {
      return door(ctx, next).catch((error: unknown) => challenge(ctx, error));
    } catch (error) {
      return challenge(ctx, error);
    }
  };
}
