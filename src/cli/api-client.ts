// The CLI's client of a running Linkplane's API: LINKPLANE_API_URL (default http://127.0.0.1:8080) and
// LINKPLANE_API_KEY, a Bearer key. Refusals keep the API's own error envelope; an unreachable API says where it looked.

/** An answer of the API in its error envelope. */
export class ApiRefusal extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    super(`the API answered ${status}`);
    this.status = status;
    this.body = body;
  }
}

/** The API could not be reached at all (nothing listening, a wrong LINKPLANE_API_URL, DNS). */
export class ApiUnreachable extends Error {}

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

export function apiBase(env: Record<string, string | undefined>): string {
  return (env.LINKPLANE_API_URL || DEFAULT_API_URL).replace(/\/+$/, '');
}

export class ApiClient {
  readonly base: string;
  private readonly key: string;

  constructor(base: string, key: string) {
    this.base = base;
    this.key = key;
  }

  /** A request under /v1 whose answer is JSON; a non-2xx answer throws ApiRefusal with the body as it came. */
  async json(method: string, path: string, payload?: unknown): Promise<unknown> {
    const res = await this.send(method, path, payload);
    const text = await res.text();
    const json: unknown = text === '' ? null : JSON.parse(text);
    if (!res.ok) throw new ApiRefusal(res.status, json);
    return json;
  }

  /** A GET under /v1 whose 2xx answer is read as a stream by the caller; a refusal throws ApiRefusal. */
  async stream(path: string): Promise<Response> {
    const res = await this.send('GET', path, undefined);
    if (!res.ok) {
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not the envelope (a proxy's page): printed as it came
      }
      throw new ApiRefusal(res.status, body);
    }
    return res;
  }

  private async send(method: string, path: string, payload: unknown): Promise<Response> {
    try {
      return await fetch(`${this.base}/v1${path}`, {
        method,
        headers: { Authorization: `Bearer ${this.key}`, ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      });
    } catch (error) {
      const cause = (error as Error & { cause?: Error }).cause;
      throw new ApiUnreachable(
        `cannot reach the Linkplane API at ${this.base} (is it running, or LINKPLANE_API_URL set?): ${cause?.message ?? (error as Error).message}`,
        { cause: error },
      );
    }
  }
}
