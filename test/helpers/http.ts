import { expect } from 'chai';
import { bearer } from './tenants.ts';

export interface Json {
  [key: string]: unknown;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: Json & { error?: { code: string; message: string; details?: Array<{ path: string; message: string }> } };
}

/** One request to the api under test (`/v1` + path): the bearer key, a JSON body if any, the answer parsed if JSON. */
export async function callApi(
  baseUrl: string,
  method: string,
  path: string,
  options: { key: string; body?: unknown; headers?: Record<string, string> },
): Promise<Reply> {
  const { key, body, headers = {} } = options;
  const res = await fetch(`${baseUrl}/v1${path}`, {
    method,
    headers: { ...bearer(key), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const json = text !== '' && (res.headers.get('content-type') ?? '').includes('json');
  return { status: res.status, headers: res.headers, body: (json ? JSON.parse(text) : {}) as Reply['body'] };
}

/** The answer is the spec's error envelope with this status and code. */
export function expectRefused(res: Reply, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.error!.code).to.equal(code);
}

/** A 422 `validation_failed` naming `path` among its details. */
export function expectInvalid(res: Reply, path: string): void {
  expectRefused(res, 422, 'validation_failed');
  expect(res.body.error!.details!.map((d) => d.path)).to.include(path);
}
