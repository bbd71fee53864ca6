import type { Next } from 'koa';
import type { Registry } from 'prom-client';
import type { ApiContext } from './context.ts';
import { renderErrorDocs } from './docs-page.ts';
import { REFERENCE_PATH, REFERENCE_SCRIPT_PATH, serveReference } from './reference.ts';

/** The paths `opsEndpoints` answers: a fixed set, so each may name its own metric series. */
export const OPS_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics', '/docs/errors', REFERENCE_PATH, REFERENCE_SCRIPT_PATH]);

export type ReadinessCheck = () => Promise<Record<string, boolean>>;

/**
 * /healthz (the process is alive), /readyz (its dependencies answer: 503 otherwise, so Kubernetes stops routing
 * to it), /metrics, and on the api the API reference (/docs) and the error documentation every `doc_url` points into. Answered before
 * authentication and routing; any other request passes straight through.
 */
export function opsEndpoints(registry: Registry, ready: ReadinessCheck, options: { errorDocs?: boolean } = {}) {
  const docs = options.errorDocs ? renderErrorDocs() : null;
  return function serveOps(ctx: ApiContext, next: Next): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next() as Promise<void>;
    switch (ctx.path) {
      case '/healthz':
        ctx.body = { status: 'ok' };
        return Promise.resolve();
      case '/readyz':
        return ready().then((checks) => {
          const ok = Object.values(checks).every(Boolean);
          ctx.status = ok ? 200 : 503;
          ctx.body = { status: ok ? 'ready' : 'not_ready', checks };
        });
      case '/metrics':
        return registry.metrics().then((text) => {
          ctx.type = registry.contentType;
          ctx.body = text;
        });
      case '/docs/errors':
        if (!docs) return next() as Promise<void>;
        ctx.type = 'text/html; charset=utf-8';
        ctx.set('Cache-Control', 'public, max-age=3600');
        ctx.body = docs;
        return Promise.resolve();
      case REFERENCE_PATH:
      case `${REFERENCE_PATH}/`:
      case REFERENCE_SCRIPT_PATH:
        // The API reference (reference.ts), served with the error documentation.
        if (!docs || !serveReference(ctx)) return next() as Promise<void>;
        return Promise.resolve();
      default:
        return next() as Promise<void>;
    }
  };
}
