// What a source test hands a source: real HTTP (Node's fetch, to the test server of the service on loopback) and a
// sleep that records the waits asked for and returns at once, so a 429's Retry-After is checked, not waited out.
import type { SourceDeps, SourceHttp } from '../../src/imports/source.ts';

export const plainHttp: SourceHttp = async (request, signal) => {
  const response = await fetch(request.url, {
    method: request.method,
    ...(request.headers ? { headers: request.headers } : {}),
    ...(request.body !== undefined ? { body: request.body } : {}),
    redirect: 'manual',
    signal,
  });
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: response.status, headers, body: await response.text() };
};

/**
 * Source deps over real HTTP; `waits` lists every sleep the source asked for, in milliseconds. `now` fixes the clock a
 * source reads reset times against, so a wait computed from it is exact.
 */
export function sourceDeps(options: { now?: () => number } = {}): SourceDeps & { waits: number[] } {
  const waits: number[] = [];
  return {
    http: plainHttp,
    waits,
    ...(options.now ? { now: options.now } : {}),
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  };
}
