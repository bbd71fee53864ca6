import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../src/platform/logger.ts';

function capture(level: string): { lines: () => Array<Record<string, unknown>>; log: ReturnType<typeof createLogger> } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  const log = createLogger({ level, name: 'api', destination: stream });
  return {
    log,
    lines: () =>
      text
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('logger', () => {
  it('writes the request line in the same JSON shape as pino lines, escaping what the client controls', async () => {
    const { log, lines } = capture('info');
    log.logger.info({ port: 1 }, 'listening');
    log.access('abc-1', 'GET', '/v1/"odd"\npath', 404, 1.25);
    await new Promise((r) => setImmediate(r));
    const [pinoLine, request] = lines();
    expect(Object.keys(pinoLine!)).to.include.members(['level', 'time', 'process', 'msg']);
    expect(request).to.deep.include({ level: 30, process: 'api', req_id: 'abc-1', method: 'GET', route: '/v1/"odd"\npath', status: 404, ms: 1.25, msg: 'request' });
    expect(request!.time).to.be.a('number');
  });

  it('keeps request lines and other lines of one turn in the order they were logged, and hands them over by the next turn', async () => {
    const { log, lines } = capture('info');
    log.access('r-1', 'GET', '/v1/key', 200, 0.5);
    log.access('r-2', 'GET', '/v1/key', 200, 0.5);
    log.logger.warn('between');
    log.access('r-3', 'POST', '/v1/links', 201, 3);
    await new Promise((r) => setImmediate(r));
    expect(lines().map((l) => l.req_id ?? l.msg)).to.deep.equal(['r-1', 'r-2', 'between', 'r-3']);
  });

  it('writes no request line above the info level', async () => {
    const { log, lines } = capture('warn');
    log.access('abc-2', 'GET', '/v1/key', 200, 0.5);
    log.logger.warn('kept');
    await new Promise((r) => setImmediate(r));
    expect(lines().map((l) => l.msg)).to.deep.equal(['kept']);
  });

  it('never logs secrets passed in an object', async () => {
    const { log, lines } = capture('info');
    log.logger.info({ authorization: 'Bearer lp_live_x', secret: 's3' }, 'x');
    await new Promise((r) => setImmediate(r));
    expect(JSON.stringify(lines())).not.to.contain('lp_live_x').and.not.to.contain('s3');
  });
});
