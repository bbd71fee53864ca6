import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { freePort } from '../helpers/processes.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { Browser, Users } from '../helpers/users.ts';
import type { WorkspaceDoc } from '../../src/tenancy/workspace.store.ts';

interface Account {
  email: string;
  email_verified: boolean;
  name: string;
}

/**
 * OpenID Connect sign-in against a real provider (oidc-provider) over HTTP: the browser is played by hand, each
 * redirect followed with the cookies of the site it goes to, and the provider's login is answered by the test
 * as the account it chose.
 */
describe('dashboard sign-in with OpenID Connect (real provider over HTTP)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let users: Users;
  let idp: Server;
  let issuer: string;
  let workspace: WorkspaceDoc;
  const accounts = new Map<string, Account>();
  let loginAs = '';

  before(async () => {
    mongo = await startTestMongo();
    const apiPort = await freePort();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    idp = createServer();
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    const provider = new Provider(issuer, {
      clients: [
        { client_id: 'linkplane', client_secret: 'a-client-secret-for-tests', redirect_uris: [`${apiUrl}/auth/oidc/callback`], grant_types: ['authorization_code'], response_types: ['code'] },
      ],
      findAccount: (_ctx: unknown, id: string) => {
        const account = accounts.get(id);
        return account ? { accountId: id, claims: () => ({ sub: id, ...account }) } : undefined;
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      cookies: { keys: ['oidc-test-cookie-key'] },
      // Its own signing key and lifetimes, so the provider runs without its development defaults (and their warnings).
      jwks: { keys: [{ ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'test', use: 'sig', alg: 'RS256' }] },
      ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    });
    // The provider's login and consent screens: the test answers them as `loginAs`, at once.
    provider.use(async (ctx, next) => {
      if (!ctx.path.startsWith('/interaction/')) {
        await next();
        return;
      }
      const grant = new provider.Grant({ accountId: loginAs, clientId: 'linkplane' });
      grant.addOIDCScope('openid email profile');
      const grantId = await grant.save();
      ctx.respond = false;
      await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: loginAs }, consent: { grantId } }, { mergeWithLastSubmission: false });
    });
    const answer = provider.callback();
    idp.on('request', (req, res) => void answer(req, res));

    api = await startApi(
      testEnv(mongo, {
        API_PORT: String(apiPort),
        PUBLIC_API_URL: apiUrl,
        OIDC_ISSUER: issuer,
        OIDC_CLIENT_ID: 'linkplane',
        OIDC_CLIENT_SECRET: 'a-client-secret-for-tests',
        OIDC_NAME: 'Test IdP',
      }),
    );
    tenants = await Tenants.open(mongo);
    users = new Users(tenants.client, mongo.dbName);
    workspace = await tenants.aWorkspace({ name: 'SSO Co' });
  });

  after(async () => {
    await tenants?.close();
    await api?.stop();
    idp?.closeAllConnections();
    await new Promise((resolve) => idp?.close(resolve));
    await mongo?.stop();
  });

  /** Starts at /auth/oidc/start and follows every redirect, as a browser would, until it lands back on the api. */
  async function signInThroughProvider(b: Browser): Promise<string> {
    const idpCookies = new Map<string, string>();
    const res = await b.request('GET', '/auth/oidc/start');
    expect(res.status, res.text).to.equal(302);
    let location = res.headers.get('location')!;
    expect(location.startsWith(`${issuer}/`)).to.equal(true);
    for (let hop = 0; hop < 10; hop++) {
      const url = new URL(location, issuer);
      if (url.origin !== issuer) {
        const back = await b.request('GET', url.pathname + url.search);
        expect(back.status, back.text).to.equal(303);
        return back.headers.get('location')!;
      }
      const answer = await fetch(url, { redirect: 'manual', headers: { Cookie: [...idpCookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      for (const line of answer.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        idpCookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      await answer.text();
      expect([302, 303], `${url.href} answered ${answer.status}`).to.include(answer.status);
      location = answer.headers.get('location')!;
    }
    throw new Error('too many redirects');
  }

  it('announces itself to the sign-in page', async () => {
    const res = await new Browser(api.url).request('GET', '/auth/config');
    expect(res.body).to.deep.include({ oidc: true, oidc_name: 'Test IdP' });
  });

  it('signs in an existing user matched by verified e-mail', async () => {
    const user = await users.aUser({ email: 'ada@sso.example', in: [{ kind: 'workspace', id: workspace._id, role: 'owner' }] });
    accounts.set('idp-ada', { email: 'Ada@SSO.example', email_verified: true, name: 'Ada' });
    loginAs = 'idp-ada';
    const b = new Browser(api.url);
    expect(await signInThroughProvider(b)).to.equal('/dashboard/');
    const session = await b.request('GET', '/auth/session');
    expect(session.status).to.equal(200);
    expect((session.body.user as { id: string }).id).to.equal(user._id);
    expect(b.cookies.has('lp_oidc')).to.equal(false);
  });

  it('lets a first-time user in through an invitation to their address, creating the account', async () => {
    const owner = await users.aUser({ in: [{ kind: 'workspace', id: workspace._id, role: 'owner' }] });
    const ob = new Browser(api.url);
    await ob.signIn(owner.email, owner.password);
    expect((await ob.request('POST', '/auth/invites', { body: { context: workspace._id, email: 'grace@sso.example', role: 'member' } })).status).to.equal(201);
    accounts.set('idp-grace', { email: 'grace@sso.example', email_verified: true, name: 'Grace Hopper' });
    loginAs = 'idp-grace';
    const b = new Browser(api.url);
    expect(await signInThroughProvider(b)).to.equal('/dashboard/');
    const session = await b.request('GET', '/auth/session');
    expect(session.body.user).to.deep.include({ email: 'grace@sso.example', name: 'Grace Hopper' });
    expect(session.body.memberships).to.deep.equal([{ kind: 'workspace', id: workspace._id, name: 'SSO Co', role: 'member' }]);
  });

  it('gives a first-time user without an invitation no access, and creates nothing', async () => {
    accounts.set('idp-eve', { email: 'eve@sso.example', email_verified: true, name: 'Eve' });
    loginAs = 'idp-eve';
    const b = new Browser(api.url);
    expect(await signInThroughProvider(b)).to.equal('/dashboard/sign-in?error=oidc_no_access');
    expect(b.cookies.has('lp_session')).to.equal(false);
    expect(await users.users.findByEmail('eve@sso.example')).to.equal(null);
  });

  it('refuses an address the provider has not verified', async () => {
    await users.aUser({ email: 'mallory@sso.example' });
    accounts.set('idp-mallory', { email: 'mallory@sso.example', email_verified: false, name: 'Mallory' });
    loginAs = 'idp-mallory';
    const b = new Browser(api.url);
    expect(await signInThroughProvider(b)).to.equal('/dashboard/sign-in?error=oidc_failed');
    expect(b.cookies.has('lp_session')).to.equal(false);
  });

  it('refuses a callback without the pending attempt’s cookie, or with a forged state', async () => {
    const b = new Browser(api.url);
    const bare = await b.request('GET', '/auth/oidc/callback?code=x&state=y');
    expect(bare.headers.get('location')).to.equal('/dashboard/sign-in?error=oidc_failed');
    await b.request('GET', '/auth/oidc/start');
    expect(b.cookies.has('lp_oidc')).to.equal(true);
    const forged = await b.request('GET', `/auth/oidc/callback?code=x&state=not-the-state&iss=${encodeURIComponent(issuer)}`);
    expect(forged.status).to.equal(303);
    expect(forged.headers.get('location')).to.equal('/dashboard/sign-in?error=oidc_failed');
    expect(b.cookies.has('lp_session')).to.equal(false);
    const tampered = new Browser(api.url);
    tampered.cookies.set('lp_oidc', 'eyJzdGF0ZSI6IngifQ.forged');
    expect((await tampered.request('GET', '/auth/oidc/callback?code=x&state=x')).headers.get('location')).to.equal('/dashboard/sign-in?error=oidc_failed');
  });
});
