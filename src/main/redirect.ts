import Koa from 'koa';
import type { Infra } from './infra.ts';
import type { Service } from './service.ts';
import type { ApiContext, ApiState } from '../http/context.ts';
import { observe } from '../http/observe.ts';
import { opsEndpoints } from '../http/ops.ts';
import { InFlight, listen, type HttpServer } from '../platform/http-server.ts';
import { notFoundPage, errorPage } from '../redirect/pages.ts';

export interface RedirectService extends Service {
  port(): number;
}

/**
 * The redirect process: serves short links on every active domain. Until a host and slug resolve to a link it
 * answers the same 404 page a blocked link shows, so probing cannot tell the two apart.
 */
export function buildRedirect(infra: Infra): RedirectService {
  const { config, logger, metrics, mongo } = infra;
  const app = new Koa<ApiState>();
  app.silent = true;
  const inFlight = new InFlight();
  app.use(
    observe(
      infra.access,
      metrics,
      (ctx, error) => {
      logger.error({ err: error, req_id: ctx.state.requestId }, 'unexpected error');
      ctx.status = 500;
      ctx.set('Cache-Control', 'no-store');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = errorPage();
      },
      inFlight,
    ),
  );
  app.use(opsEndpoints(metrics.registry, async () => ({ mongodb: await mongo.ping() })));
  app.use((ctx: ApiContext) => {
    ctx.status = 404;
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = notFoundPage();
  });

  let server: HttpServer | null = null;
  return {
    name: 'redirect',
    port: () => server?.port ?? config.redirectPort,
    async start() {
      server = await listen(app.callback(), config.redirectPort, config.host, inFlight);
      logger.info({ port: server.port }, `redirect listening on http://${config.host}:${server.port}`);
    },
    async stop() {
      await server?.close(config.shutdownTimeoutMs);
    },
  };
}
