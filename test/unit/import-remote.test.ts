import { expect } from 'chai';
import { callRemote, callRemoteJson, retryAfterMs } from '../../src/imports/sources/remote.ts';
import { SourceError, type SourceDeps, type SourceHttpAnswer, type SourceHttpRequest } from '../../src/imports/source.ts';

function anAnswer(status: number, headers: Record<string, string> = {}, body = '{}'): SourceHttpAnswer {
  return { status, headers, body };
}

/** A service that gives the answers in order (the last one again when they run out), and records the waits asked. */
function aService(...answers: Array<SourceHttpAnswer | Error>) {
  const sent: SourceHttpRequest[] = [];
  const waits: number[] = [];
  const deps: SourceDeps = {
    http: (request) => {
      sent.push(request);
      const next = answers.length > 1 ? answers.shift()! : answers[0]!;
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  };
  return { deps, sent, waits };
}

const request: SourceHttpRequest = { method: 'GET', url: 'https://api.example.com/v1/links' };
const signal = new AbortController().signal;

describe('import sources: calling a service', () => {
  it('waits as long as a 429 Retry-After says, then returns the answer', async () => {
    const { deps, waits, sent } = aService(anAnswer(429, { 'retry-after': '7' }), anAnswer(200));
    const answer = await callRemote(deps, request, signal);
    expect(answer.status).to.equal(200);
    expect(sent).to.have.length(2);
    expect(waits).to.deep.equal([7000]);
  });

  it('reads a Retry-After given as an HTTP date against the clock', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(anAnswer(429, { 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).to.equal(30_000);
    expect(retryAfterMs(anAnswer(429, { 'retry-after': 'soon' }), now)).to.equal(null);
    expect(retryAfterMs(anAnswer(429), now)).to.equal(null);
  });

  it('backs off exponentially on server errors and network failures, bounded by the policy', async () => {
    const { deps, waits } = aService(anAnswer(503), new Error('ECONNRESET'), anAnswer(502), anAnswer(200));
    await callRemote(deps, request, signal, { retry: { attempts: 5, baseDelayMs: 100, maxDelayMs: 250 } });
    expect(waits).to.have.length(3);
    expect(waits[0]).to.be.within(75, 125);
    expect(waits[1]).to.be.within(150, 250);
    expect(waits[2]).to.equal(250);
  });

  it('caps a long Retry-After at the policy maximum', async () => {
    const { deps, waits } = aService(anAnswer(429, { 'retry-after': '3600' }), anAnswer(200));
    await callRemote(deps, request, signal, { retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 60_000 } });
    expect(waits).to.deep.equal([60_000]);
  });

  it('fails as remote once the attempts run out, naming the host and the last problem', async () => {
    const { deps, sent } = aService(anAnswer(429));
    const error = await callRemote(deps, request, signal, { retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 1 } }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SourceError);
    expect((error as SourceError).kind).to.equal('remote');
    expect((error as SourceError).message).to.contain('api.example.com').and.contain('rate limited');
    expect(sent).to.have.length(3);
  });

  it('fails as auth at once on 401 and 403, without retrying', async () => {
    for (const status of [401, 403]) {
      const { deps, sent } = aService(anAnswer(status));
      const error = await callRemote(deps, request, signal).catch((e: unknown) => e);
      expect((error as SourceError).kind).to.equal('auth');
      expect(sent).to.have.length(1);
    }
  });

  it('lets a service say that its 403 is a rate limit and where its wait is written', async () => {
    const { deps, waits } = aService(anAnswer(403, { 'x-ratelimit-reset': '1767225605' }), anAnswer(200));
    const now = Date.parse('2026-01-01T00:00:00Z');
    await callRemote(deps, request, signal, {
      isRateLimited: (a) => a.status === 403 && 'x-ratelimit-reset' in a.headers,
      waitOf: (a, at) => Number(a.headers['x-ratelimit-reset']) * 1000 - at,
      now: () => now,
    });
    expect(waits).to.deep.equal([5000]);
  });

  it('lets a service say that its 403 is not about credentials, and returns that answer to it', async () => {
    const body = '{"code":"InvalidFormat","property":"limit"}';
    const { deps, sent } = aService(anAnswer(403, {}, body));
    const answer = await callRemote(deps, request, signal, { isAuthFailure: (a) => a.status === 401 });
    expect(answer).to.deep.include({ status: 403, body });
    expect(sent).to.have.length(1);
    const refused = await callRemote(aService(anAnswer(401)).deps, request, signal, { isAuthFailure: (a) => a.status === 401 }).catch((e: unknown) => e);
    expect((refused as SourceError).kind).to.equal('auth');
  });

  it('returns other 4xx answers to the source, which knows what its service means by them', async () => {
    const { deps } = aService(anAnswer(404, {}, '{"message":"NOT_FOUND"}'));
    expect((await callRemote(deps, request, signal)).status).to.equal(404);
  });

  it('parses JSON, and calls a 2xx that is not JSON the service failing', async () => {
    expect((await callRemoteJson(aService(anAnswer(200, {}, '{"a":1}')).deps, request, signal)).json).to.deep.equal({ a: 1 });
    const error = await callRemoteJson(aService(anAnswer(200, {}, '<html>')).deps, request, signal).catch((e: unknown) => e);
    expect((error as SourceError).kind).to.equal('remote');
  });

  it('stops when the job is cancelled while a request fails', async () => {
    const controller = new AbortController();
    const deps: SourceDeps = {
      http: () => {
        controller.abort();
        return Promise.reject(new Error('aborted'));
      },
      sleep: () => Promise.resolve(),
    };
    const error = await callRemote(deps, request, controller.signal).catch((e: unknown) => e);
    expect((error as Error).message).to.equal('aborted');
  });
});
