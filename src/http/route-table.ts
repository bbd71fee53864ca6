import type Router from '@koa/router';
import type { Static, TSchema } from '@sinclair/typebox';
import type { ApiContext } from './context.ts';
import { authorize, principalOf, type Requirement } from './auth.ts';
import { bodyValidator, queryValidator } from './validation.ts';
import { bodyOf } from './body.ts';
import { Lru } from '../platform/lru.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ResponseSpec {
  status: number;
  description: string;
  schema?: TSchema;
  contentType?: string;
}

/**
 * One declaration per endpoint: the router mounts it, the validators come from its schemas, and the OpenAPI
 * document is generated from the same list, so the published contract cannot drift from what is enforced.
 */
export interface RouteSpec<Q extends TSchema = TSchema, B extends TSchema = TSchema> {
  method: Method;
  /** Koa path relative to /v1, e.g. `/links/:id`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** Null: public, no key (the OpenAPI document itself). */
  auth: Requirement | null;
  /** Requirements the handler checks itself beyond `auth` (the tool server's `tools:write` for a tool that changes something). */
  alsoChecks?: Requirement[];
  query?: Q;
  body?: B;
  responses: ResponseSpec[];
  /** Documented error codes beyond the ones every authenticated endpoint can answer. */
  errors?: string[];
  /** Statuses besides each code's own that the route answers in the envelope (the tool server's 406 `invalid_request`). */
  errorStatuses?: number[];
  /** The route depends on a platform service (the Kubernetes API) whose failure answers 502 `internal`. */
  upstream?: boolean;
  handler: (ctx: ApiContext, input: { query: Static<Q>; body: Static<B>; params: Record<string, string> }) => Promise<void> | void;
}

export function route<Q extends TSchema = TSchema, B extends TSchema = TSchema>(spec: RouteSpec<Q, B>): RouteSpec {
  return spec as unknown as RouteSpec;
}

export function mount(router: Router<ApiContext['state']>, routes: readonly RouteSpec[]): void {
  for (const spec of routes) {
    const validateQuery = spec.query ? queryValidator(spec.query) : null;
    const validateBody = spec.body ? bodyValidator(spec.body) : null;
    const method = spec.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    // Not async: a handler that answers without waiting (GET /key) costs no promise of ours; what it (or a check
    // here) throws reaches the error envelope all the same, through the router's dispatch.
    router[method](spec.path, (ctx) => {
      const c = ctx as unknown as ApiContext;
      if (spec.auth) authorize(principalOf(c), spec.auth);
      // Query strings arrive as strings (or arrays when repeated); validators coerce and bound them.
      const query = validateQuery ? validateQuery({ ...c.query }) : {};
      const body = validateBody ? validateBody(bodyOf(c)) : undefined;
      return spec.handler(c, { query, body, params: c.params });
    });
  }
}

/** Paths (with their method) whose match `memoizeMatches` keeps. */
const MATCHES_KEPT = 4096;

/**
 * Keeps the router's answer to "which layers match this path and method", so that a path asked again (`/v1/key`,
 * `/v1/links`, a link read often) is not tested against every route's regular expression (over a hundred) each
 * time. The answer depends on nothing else once the table is mounted (call this after the last `mount`); each caller
 * gets arrays of its own, since the router stores them on the context. Bounded: paths made up by clients only churn
 * the least recently used entries out.
 */
export function memoizeMatches(router: Router<ApiContext['state']>, maxEntries = MATCHES_KEPT): void {
  const match = router.match.bind(router);
  const kept = new Lru<ReturnType<typeof match>>(maxEntries);
  router.match = (path: string, method: string) => {
    const key = `${method} ${path}`;
    let result = kept.get(key);
    if (result === undefined) {
      result = match(path, method);
      kept.set(key, result);
    }
    return { path: [...result.path], pathAndMethod: [...result.pathAndMethod], route: result.route };
  };
}
