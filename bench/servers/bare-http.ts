// The physical baseline: node:http answering the same JSON our api answers, nothing else.
import { createServer } from 'node:http';

// The same bytes our api answers (the bench passes them in), so every server does the same output work.
const body = process.env.BODY ?? '{}';
createServer((req, res) => {
  if (req.url === '/v1/key') {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  res.writeHead(404).end();
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
