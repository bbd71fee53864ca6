// The physical baseline: node:http answering the same JSON our api answers, nothing else.
import { createServer } from 'node:http';

// The same bytes our api answers (the bench passes them in), so every server does the same output work.
const body = process.env.BODY ?? '{}';
// The path answered (query string ignored); the foundation bench's `/v1/key` unless ROUTE says otherwise.
const route = process.env.ROUTE ?? '/v1/key';
createServer((req, res) => {
  if ((req.url ?? '').split('?')[0] === route) {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  res.writeHead(404).end();
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
