import type Router from '@koa/router';
import { MethodNotAllowedError, NotFoundError } from '../platform/errors.ts';
import type { ApiContext } from './context.ts';

/** After the router: a known path with another method is 405 (with Allow), anything else 404 `not_found`. */
export function fallback(router: Router<ApiContext['state']>) {
  return function unmatched(ctx: ApiContext): void {
    const match = router.match(ctx.path, ctx.method);
    const allowed = new Set(match.path.flatMap((layer) => layer.methods));
    if (allowed.size > 0) throw new MethodNotAllowedError(ctx.method, [...allowed]);
    throw new NotFoundError('route');
  };
}
