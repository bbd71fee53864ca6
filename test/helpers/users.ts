import { expect } from 'chai';
import type { MongoClient } from 'mongodb';
import { UserStore, type UserDoc } from '../../src/tenancy/user.store.ts';
import { MembershipStore, type MembershipKind, type Role } from '../../src/tenancy/membership.store.ts';
import { createUser, grant } from '../../src/users/accounts.ts';
import { randomBase62 } from '../../src/platform/ids.ts';

/** Dashboard accounts written straight to the database the api under test reads. */
export class Users {
  readonly users: UserStore;
  readonly memberships: MembershipStore;

  constructor(client: MongoClient, dbName: string) {
    const db = client.db(dbName);
    this.users = new UserStore(db);
    this.memberships = new MembershipStore(db);
  }

  async aUser(
    overrides: { email?: string; name?: string; password?: string | null; in?: Array<{ kind: MembershipKind; id: string; role: Role }> } = {},
  ): Promise<UserDoc & { password: string }> {
    const password = overrides.password === undefined ? `pw-${randomBase62(16)}` : overrides.password;
    const user = await createUser(this.users, { email: overrides.email ?? `u${randomBase62(8).toLowerCase()}@example.com`, name: overrides.name ?? null, password });
    for (const m of overrides.in ?? []) {
      await grant(this.memberships, { exists: () => Promise.resolve(true) }, { userId: user._id, kind: m.kind, targetId: m.id, role: m.role });
    }
    return { ...user, password: password ?? '' };
  }
}

export interface BrowserReply {
  status: number;
  headers: Headers;
  text: string;
  body: { error?: { code: string; message: string }; [key: string]: unknown };
}

/**
 * A browser's view of the api, over real HTTP: it keeps the cookies the api sets, sends the session's CSRF token
 * and our Origin on state-changing requests (unless told otherwise), and never follows redirects.
 */
export class Browser {
  readonly base: string;
  readonly cookies = new Map<string, string>();
  csrf: string | null = null;
  context: string | null = null;

  constructor(base: string) {
    this.base = base;
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; csrf?: boolean; origin?: string | null } = {},
  ): Promise<BrowserReply> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.Cookie = this.cookieHeader();
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    const mutation = !['GET', 'HEAD'].includes(method);
    if (mutation && options.origin !== null) headers.Origin = options.origin ?? this.base;
    if (mutation && options.csrf !== false && this.csrf) headers['X-CSRF-Token'] = this.csrf;
    if (this.context && path.startsWith('/v1/')) headers['Linkplane-Context'] = this.context;
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { ...headers, ...options.headers },
      redirect: 'manual',
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || attrs.some((a) => a.trim().toLowerCase() === 'max-age=0')) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    const json = text !== '' && (res.headers.get('content-type') ?? '').includes('json');
    return { status: res.status, headers: res.headers, text, body: json ? JSON.parse(text) : {} };
  }

  async signIn(email: string, password: string): Promise<BrowserReply> {
    const res = await this.request('POST', '/auth/sign-in', { body: { email, password } });
    if (res.status === 200) this.csrf = res.body.csrf_token as string;
    return res;
  }
}

export function expectError(res: BrowserReply, status: number, code: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body.error?.code, res.text).to.equal(code);
}
