// The physical baseline of a redirect: node:http answering 302 from a Map, nothing else.
import { createServer } from 'node:http';

const links = new Map<string, string>([['/plain', 'https://example.com/landing']]);
createServer((req, res) => {
  const location = links.get(req.url ?? '');
  if (location !== undefined) {
    res.writeHead(302, { Location: location, 'Cache-Control': 'no-store', 'Content-Length': '0' });
    res.end();
    return;
  }
  res.writeHead(404).end();
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
