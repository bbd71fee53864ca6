import { expect } from 'chai';
import { connect } from 'node:net';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** Writes raw bytes to the api and reads everything until the server closes the connection. */
function raw(port: number, ...chunks: string[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (d: Buffer) => (data += d.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    for (const chunk of chunks) socket.write(chunk);
  });
}

function expectEnvelope(answer: RawAnswer, status: number): void {
  expect(answer.status, answer.body).to.equal(status);
  expect(answer.headers.get('content-type')).to.match(/^application\/json/);
  expect(answer.headers.get('x-request-id')).to.match(/^[A-Za-z0-9._:-]{1,128}$/);
  const body = JSON.parse(answer.body) as { error: { code: string; message: string; doc_url: string } };
  expect(Object.keys(body)).to.deep.equal(['error']);
  expect(body.error.code).to.equal('invalid_request');
  expect(body.error.message).to.be.a('string').and.not.equal('');
  expect(body.error.doc_url).to.match(/^https?:\/\//);
}

describe('answers Node gives before any middleware, in the error envelope', function () {
  this.timeout(30_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let port: number;

  before(async () => {
    mongo = await startTestMongo();
    running = await startApi(testEnv(mongo, { HTTP_REQUEST_TIMEOUT_MS: '1000' }));
    port = Number(new URL(running.url).port);
  });
  after(async () => {
    await running.stop();
    await mongo.stop();
  });

  it('431 for a request head over 16 KiB', async () => {
    const answer = await raw(port, `GET /v1/links HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectEnvelope(answer, 431);
  });

  it('408 for a request not received within HTTP_REQUEST_TIMEOUT_MS', async () => {
    // The head never ends: the client stalls.
    const answer = await raw(port, 'GET /v1/links HTTP/1.1\r\nHost: x\r\n');
    expectEnvelope(answer, 408);
  });

  it('400 for bytes that are not HTTP', async () => {
    const answer = await raw(port, 'HELLO THERE\r\n\r\n');
    expectEnvelope(answer, 400);
  });

  it('documents the 431 and the 408 on every operation, in the envelope and without rate-limit headers', async () => {
    type Response = { $ref?: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> };
    const doc = (await (await fetch(`${running.url}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
      components: { responses: Record<string, Response> };
    };
    const resolve = (r: Response) => (r.$ref ? doc.components.responses[r.$ref.split('/').pop()!]! : r);
    let operations = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        // A path item's own `servers` (the /auth routes outside /v1) is not an operation.
        if (method === 'servers') continue;
        if (!path.startsWith('/auth/')) operations++;
        for (const status of ['431', '408']) {
          const response = op.responses[status];
          expect(response, `${method.toUpperCase()} ${path} documents ${status}`).to.not.equal(undefined);
          const resolved = resolve(response!);
          expect(resolved.content!['application/json']!.schema).to.deep.include({ allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { error: { properties: { code: { enum: ['invalid_request'] } } } } }] });
          expect(Object.keys(resolved.headers!)).to.deep.equal(['X-Request-Id']);
        }
      }
    }
    expect(operations).to.equal(running.api.routes.length);
  });
});
