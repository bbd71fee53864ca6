// The framework floor of a redirect: a Koa app answering 302 from a Map, no middleware of ours.
import Koa from 'koa';

const links = new Map<string, string>([['/plain', 'https://example.com/landing']]);
const app = new Koa();
app.use((ctx) => {
  const location = links.get(ctx.path);
  if (location === undefined) return;
  ctx.status = 302;
  ctx.set('Location', location);
  ctx.set('Cache-Control', 'no-store');
});
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
