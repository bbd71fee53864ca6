// The framework floor: Koa + @koa/router with one route, no middleware of ours.
import Koa from 'koa';
import Router from '@koa/router';

const app = new Koa();
const router = new Router();
// The same document our api answers (the bench passes it in), serialised per request as Koa does for ours.
const document = JSON.parse(process.env.BODY ?? '{}') as unknown;
// The path answered; the foundation bench's `/v1/key` unless ROUTE says otherwise.
router.get(process.env.ROUTE ?? '/v1/key', (ctx) => {
  ctx.body = document;
});
app.use(router.routes());
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
