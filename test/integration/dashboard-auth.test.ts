import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { Browser, Users, expectError } from '../helpers/users.ts';
import type { WorkspaceDoc } from '../../src/tenancy/workspace.store.ts';
import { toClickDoc } from '../../src/clicks/click.store.ts';
import { DownloadTickets } from '../../src/users/downloads.ts';
import { unseal } from '../../src/platform/sealed.ts';
import { aClickRecord } from '../helpers/click-builders.ts';

describe('dashboard sign-in, sessions and session access to /v1 (real HTTP)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let users: Users;
  let workspace: WorkspaceDoc;
  let other: WorkspaceDoc;
  let partnerId: string;
  let ipCounter = 0;
  /** Each test signs in from an address of its own, so the per-address limit of one test never meets another's. */
  const freshIp = () => `203.0.113.${++ipCounter}`;
  const browser = (ip = freshIp()) => {
    const b = new Browser(api.url);
    const request = b.request.bind(b);
    b.request = (method, path, options = {}) => request(method, path, { ...options, headers: { 'X-Forwarded-For': ip, ...options.headers } });
    return b;
  };

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(
      testEnv(mongo, { TRUSTED_PROXY_HOPS: '1', SIGN_IN_MAX_ATTEMPTS: '3', SIGN_IN_MAX_ATTEMPTS_PER_IP: '6', SIGN_IN_MAX_ATTEMPTS_PER_ACCOUNT: '8' }),
    );
    tenants = await Tenants.open(mongo);
    users = new Users(tenants.client, mongo.dbName);
    partnerId = await tenants.aPartner();
    workspace = await tenants.aWorkspace({ name: 'Acme shop', partner_id: partnerId });
    other = await tenants.aWorkspace({ name: 'Someone else' });
  });

  after(async () => {
    await tenants?.close();
    await api?.stop();
    await mongo?.stop();
  });

  it('signs in with e-mail and password: the session, an HttpOnly SameSite=Lax cookie, answers never cached', async () => {
    const owner = await users.aUser({ name: 'Olive Owner', in: [{ kind: 'workspace', id: workspace._id, role: 'owner' }, { kind: 'partner', id: partnerId, role: 'member' }] });
    const b = browser();
    const res = await b.signIn(owner.email.toUpperCase(), owner.password);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.user).to.deep.equal({ id: owner._id, email: owner.email, name: 'Olive Owner' });
    expect(res.body.memberships).to.have.deep.members([
      { kind: 'workspace', id: workspace._id, name: 'Acme shop', role: 'owner' },
      { kind: 'partner', id: partnerId, name: 'Partner Co', role: 'member' },
    ]);
    expect(res.body.csrf_token).to.be.a('string').with.length.above(30);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('lp_session='))!;
    expect(cookie).to.match(/; HttpOnly/).and.match(/; SameSite=Lax/).and.match(/; Path=\//);
    // The public API URL is http://localhost (development): no Secure attribute, or the browser would drop it.
    expect(cookie).not.to.match(/Secure/);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.headers.get('vary')).to.match(/Cookie/);

    const session = await b.request('GET', '/auth/session');
    expect(session.status).to.equal(200);
    expect(session.body.user).to.deep.equal(res.body.user);
    expect(session.body.csrf_token).to.equal(res.body.csrf_token);
  });

  it('answers a wrong password and an unknown user the same 401, and sets no cookie', async () => {
    const user = await users.aUser();
    const wrong = await browser().request('POST', '/auth/sign-in', { body: { email: user.email, password: 'not-the-password' } });
    const unknown = await browser().request('POST', '/auth/sign-in', { body: { email: 'nobody@example.com', password: 'not-the-password' } });
    expectError(wrong, 401, 'unauthorized');
    expectError(unknown, 401, 'unauthorized');
    expect(unknown.body).to.deep.equal(wrong.body);
    expect(wrong.headers.getSetCookie()).to.deep.equal([]);
    expect(unknown.headers.getSetCookie()).to.deep.equal([]);
  });

  it('answers 401 for the session without a cookie or with an unknown one', async () => {
    expectError(await browser().request('GET', '/auth/session'), 401, 'unauthorized');
    const forged = browser();
    forged.cookies.set('lp_session', 'x'.repeat(43));
    expectError(await forged.request('GET', '/auth/session'), 401, 'unauthorized');
  });

  it('validates /auth bodies with the error envelope', async () => {
    const b = browser();
    const missing = await b.request('POST', '/auth/sign-in', { body: { email: 'a@example.com' } });
    expectError(missing, 422, 'validation_failed');
    const extra = await b.request('POST', '/auth/sign-in', { body: { email: 'a@example.com', password: 'x', admin: true } });
    expectError(extra, 422, 'validation_failed');
    const notJson = await b.request('POST', '/auth/sign-in', { headers: { 'Content-Type': 'text/plain' }, body: 'x' });
    expectError(notJson, 400, 'invalid_request');
    const big = await b.request('POST', '/auth/sign-in', { body: { email: 'a@example.com', password: 'x'.repeat(2_000_000) } });
    expectError(big, 413, 'invalid_request');
    expectError(await b.request('GET', '/auth/nothing-here'), 404, 'not_found');
    expectError(await b.request('PUT', '/auth/session'), 405, 'invalid_request');
  });

  it('refuses a state-changing request without the CSRF token, with a wrong one, or from another origin (403)', async () => {
    const user = await users.aUser();
    const b = browser();
    await b.signIn(user.email, user.password);
    const missing = await b.request('POST', '/auth/sign-out', { csrf: false });
    expectError(missing, 403, 'forbidden');
    expect(missing.body.error!.message).to.match(/CSRF/);
    expectError(await b.request('POST', '/auth/sign-out', { headers: { 'X-CSRF-Token': 'x'.repeat(43) } }), 403, 'forbidden');
    const foreign = await b.request('POST', '/auth/sign-out', { origin: 'https://evil.example' });
    expectError(foreign, 403, 'forbidden');
    expect(foreign.body.error!.message).to.match(/CSRF/);
    // Sign-in has no session yet: only Origin is checked.
    expectError(await browser().request('POST', '/auth/sign-in', { body: { email: user.email, password: user.password }, origin: 'https://evil.example' }), 403, 'forbidden');
    // Still signed in after all of that.
    expect((await b.request('GET', '/auth/session')).status).to.equal(200);
  });

  it('signs out: 204, the cookie cleared, the session revoked even if its token is replayed', async () => {
    const user = await users.aUser();
    const b = browser();
    await b.signIn(user.email, user.password);
    const token = b.cookies.get('lp_session')!;
    const out = await b.request('POST', '/auth/sign-out');
    expect(out.status, out.text).to.equal(204);
    expect(b.cookies.has('lp_session')).to.equal(false);
    const replay = browser();
    replay.cookies.set('lp_session', token);
    expectError(await replay.request('GET', '/auth/session'), 401, 'unauthorized');
  });

  it('lists the user’s sessions and revokes another one: that one is then 401', async () => {
    const user = await users.aUser();
    const laptop = browser();
    const phone = browser();
    await laptop.signIn(user.email, user.password);
    await phone.request('POST', '/auth/sign-in', { body: { email: user.email, password: user.password }, headers: { 'User-Agent': 'PhoneBrowser/1.0' } });
    const list = await laptop.request('GET', '/auth/sessions');
    expect(list.status).to.equal(200);
    const sessions = list.body.data as Array<{ id: string; current: boolean; user_agent: string | null; ip: string | null; created_at: string; last_seen_at: string }>;
    expect(sessions).to.have.length(2);
    expect(sessions.filter((s) => s.current)).to.have.length(1);
    const phoneSession = sessions.find((s) => !s.current)!;
    expect(phoneSession.user_agent).to.equal('PhoneBrowser/1.0');
    expect(phoneSession.ip).to.match(/^203\.0\.113\./);
    // Another user cannot revoke it.
    const stranger = browser();
    const strangerUser = await users.aUser();
    await stranger.signIn(strangerUser.email, strangerUser.password);
    expectError(await stranger.request('DELETE', `/auth/sessions/${phoneSession.id}`), 404, 'not_found');
    expect((await laptop.request('DELETE', `/auth/sessions/${phoneSession.id}`)).status).to.equal(204);
    expectError(await phone.request('GET', '/auth/session'), 401, 'unauthorized');
    expect((await laptop.request('GET', '/auth/session')).status).to.equal(200);
  });

  it('changes the password: the old one stops working and every other session is signed out', async () => {
    const user = await users.aUser();
    const here = browser();
    const elsewhere = browser();
    await here.signIn(user.email, user.password);
    await elsewhere.signIn(user.email, user.password);
    const wrong = await here.request('POST', '/auth/password', { body: { current_password: 'nope-nope-nope', new_password: 'a-new-long-password' } });
    expectError(wrong, 422, 'validation_failed');
    const short = await here.request('POST', '/auth/password', { body: { current_password: user.password, new_password: 'short' } });
    expectError(short, 422, 'validation_failed');
    const changed = await here.request('POST', '/auth/password', { body: { current_password: user.password, new_password: 'a-new-long-password' } });
    expect(changed.status, changed.text).to.equal(204);
    expect((await here.request('GET', '/auth/session')).status).to.equal(200);
    expectError(await elsewhere.request('GET', '/auth/session'), 401, 'unauthorized');
    expectError(await browser().signIn(user.email, user.password), 401, 'unauthorized');
    expect((await browser().signIn(user.email, 'a-new-long-password')).status).to.equal(200);
  });

  /** "try again at HH:MM UTC" names the minute Retry-After ends in (rounded up), in the answer's own clock. */
  function expectLiftsAt(res: Awaited<ReturnType<Browser['signIn']>>, scope: string): void {
    const seconds = Number(res.headers.get('retry-after'));
    expect(seconds).to.be.within(1, 900);
    const answeredAt = new Date(res.headers.get('date')!).getTime();
    const match = /^Too many sign-in attempts (.+); try again at (\d\d):(\d\d) UTC\.$/.exec(res.body.error!.message);
    expect(match, res.body.error!.message).to.not.equal(null);
    expect(match![1]).to.equal(scope);
    const lifts = new Date(answeredAt);
    lifts.setUTCHours(Number(match![2]), Number(match![3]), 0, 0);
    if (lifts.getTime() < answeredAt - 60_000) lifts.setUTCDate(lifts.getUTCDate() + 1);
    // The Date header is to the second, the message to the minute (rounded up): they agree within that.
    expect(lifts.getTime() - (answeredAt + seconds * 1000)).to.be.within(-1_000, 61_000);
  }

  it('limits sign-in attempts per account and address together: 429 with when it lifts there, while the owner signs in from elsewhere', async () => {
    const user = await users.aUser();
    const guesser = freshIp();
    for (let i = 0; i < 3; i++) expectError(await browser(guesser).signIn(user.email, 'wrong-password'), 401, 'unauthorized');
    const limited = await browser(guesser).signIn(user.email, user.password);
    expectError(limited, 429, 'rate_limited');
    expectLiftsAt(limited, 'for this account from this address');
    // The owner, from their own address, is not locked out by the guesser.
    expect((await browser().signIn(user.email, user.password)).status).to.equal(200);
    // And the guesser's address may still sign in to another account (its own limit is not reached).
    const fine = await users.aUser();
    expect((await browser(guesser).signIn(fine.email, fine.password)).status).to.equal(200);
  });

  it('caps an account’s sign-in attempts from all addresses together, counting only guesses the pair and address limits let through', async () => {
    const user = await users.aUser();
    // A refused address hammering on does not spend the account's ceiling.
    const hammer = freshIp();
    for (let i = 0; i < 3; i++) expectError(await browser(hammer).signIn(user.email, 'wrong-password'), 401, 'unauthorized');
    for (let i = 0; i < 5; i++) expectError(await browser(hammer).signIn(user.email, 'wrong-password'), 429, 'rate_limited');
    // Distributed guessing: five more addresses, one guess each, fill the ceiling of 8 (3 + 5).
    for (let i = 0; i < 5; i++) expectError(await browser().signIn(user.email, 'wrong-password'), 401, 'unauthorized');
    const limited = await browser().signIn(user.email, user.password);
    expectError(limited, 429, 'rate_limited');
    expectLiftsAt(limited, 'for this account');
    // Another account is not affected.
    const fine = await users.aUser();
    expect((await browser().signIn(fine.email, fine.password)).status).to.equal(200);
  });

  it('counts wrong current passwords of POST /auth/password like sign-in attempts: past the limit even the right one is 429', async () => {
    const user = await users.aUser();
    const here = browser();
    await here.signIn(user.email, user.password);
    for (let i = 0; i < 3; i++) {
      const wrong = await here.request('POST', '/auth/password', { body: { current_password: `wrong-guess-${i}`, new_password: 'a-new-long-password' } });
      expectError(wrong, 422, 'validation_failed');
    }
    // The answer sign-in gives past its limit: 429 rate_limited with Retry-After, the password not even checked.
    const limited = await here.request('POST', '/auth/password', { body: { current_password: user.password, new_password: 'a-new-long-password' } });
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 900);
    // One window for both doors: sign-in of the account from that address is refused the same way, and the
    // password did not change.
    const signIn = await here.signIn(user.email, user.password);
    expectError(signIn, 429, 'rate_limited');
    const seconds = (message: string) => message.replace(/\d+/g, 'N');
    expect(seconds(limited.body.error!.message)).to.equal(seconds(signIn.body.error!.message));
    expect((await users.users.collection.findOne({ _id: user._id }))!.password_hash).to.equal(user.password_hash);
  });

  it('a password change from an address past its limit is 429 too, and a right guess clears only the account and address pair’s count', async () => {
    const ip = freshIp();
    const user = await users.aUser();
    const here = browser(ip);
    await here.signIn(user.email, user.password);
    // Three wrong current passwords, then the right one: changed, and the account's count starts again.
    for (let i = 0; i < 2; i++) {
      expectError(await here.request('POST', '/auth/password', { body: { current_password: `wrong-${i}`, new_password: 'another-long-password' } }), 422, 'validation_failed');
    }
    const changed = await here.request('POST', '/auth/password', { body: { current_password: user.password, new_password: 'another-long-password' } });
    expect(changed.status, changed.text).to.equal(204);
    for (let i = 0; i < 2; i++) {
      expectError(await here.request('POST', '/auth/password', { body: { current_password: `wrong-again-${i}`, new_password: 'a-third-long-password' } }), 422, 'validation_failed');
    }
    // The address has now used six attempts (one sign-in, five guesses): its window is spent for every account.
    expectError(await here.request('POST', '/auth/password', { body: { current_password: 'another-long-password', new_password: 'a-third-long-password' } }), 429, 'rate_limited');
  });

  it('limits sign-in attempts per client address across accounts', async () => {
    const ip = freshIp();
    for (let i = 0; i < 6; i++) expectError(await browser(ip).signIn(`nobody${i}@example.com`, 'wrong-password'), 401, 'unauthorized');
    const user = await users.aUser();
    const limited = await browser(ip).signIn(user.email, user.password);
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).to.be.above(0);
    expect((await browser().signIn(user.email, user.password)).status).to.equal(200);
  });

  describe('/v1 with the session cookie and Linkplane-Context', () => {
    let owner: Awaited<ReturnType<Users['aUser']>>;
    let member: Awaited<ReturnType<Users['aUser']>>;

    before(async () => {
      owner = await users.aUser({ in: [{ kind: 'workspace', id: workspace._id, role: 'owner' }, { kind: 'partner', id: partnerId, role: 'owner' }] });
      member = await users.aUser({ in: [{ kind: 'workspace', id: workspace._id, role: 'member' }] });
    });

    it('acts as the workspace in view; answers are private to the session (no-store, Vary: Cookie)', async () => {
      const b = browser();
      await b.signIn(owner.email, owner.password);
      b.context = workspace._id;
      const res = await b.request('GET', '/v1/workspace');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.id).to.equal(workspace._id);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('vary')).to.match(/Cookie/);
      expect(res.headers.get('x-ratelimit-limit')).to.be.a('string');
      const created = await b.request('POST', '/v1/links', { body: { url: 'https://example.com/from-the-dashboard' } });
      expect(created.status, created.text).to.equal(201);
    });

    it('acts as the partner in view', async () => {
      const b = browser();
      await b.signIn(owner.email, owner.password);
      b.context = partnerId;
      const res = await b.request('GET', '/v1/partner');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.id).to.equal(partnerId);
      // A workspace endpoint with a partner in view: the wrong kind, as for a partner key.
      expectError(await b.request('GET', '/v1/workspace'), 403, 'forbidden');
    });

    it('refuses a missing context, an unknown one, and a workspace the user does not belong to (403)', async () => {
      const b = browser();
      await b.signIn(owner.email, owner.password);
      expectError(await b.request('GET', '/v1/workspace'), 403, 'forbidden');
      b.context = 'not-an-id';
      expectError(await b.request('GET', '/v1/workspace'), 403, 'forbidden');
      b.context = other._id;
      expectError(await b.request('GET', '/v1/workspace'), 403, 'forbidden');
      b.context = 'ws_doesnotexist';
      expectError(await b.request('GET', '/v1/workspace'), 403, 'forbidden');
    });

    it('requires the CSRF token and our origin on every /v1 change made with the cookie', async () => {
      const b = browser();
      await b.signIn(owner.email, owner.password);
      b.context = workspace._id;
      const body = { url: 'https://example.com/csrf' };
      const missing = await b.request('POST', '/v1/links', { body, csrf: false });
      expectError(missing, 403, 'forbidden');
      expect(missing.body.error!.message).to.match(/CSRF/);
      expectError(await b.request('POST', '/v1/links', { body, headers: { 'X-CSRF-Token': 'wrong' } }), 403, 'forbidden');
      expectError(await b.request('POST', '/v1/links', { body, origin: 'https://evil.example' }), 403, 'forbidden');
    });

    it('answers 401 once the session is signed out', async () => {
      const b = browser();
      await b.signIn(owner.email, owner.password);
      const token = b.cookies.get('lp_session')!;
      b.context = workspace._id;
      expect((await b.request('GET', '/v1/workspace')).status).to.equal(200);
      await b.request('POST', '/auth/sign-out');
      b.cookies.set('lp_session', token);
      expectError(await b.request('GET', '/v1/workspace'), 401, 'unauthorized');
    });

    it('gives members everyday writes but not the owner’s (settings, webhooks)', async () => {
      const b = browser();
      await b.signIn(member.email, member.password);
      b.context = workspace._id;
      expect((await b.request('GET', '/v1/workspace')).status).to.equal(200);
      expect((await b.request('POST', '/v1/links', { body: { url: 'https://example.com/member' } })).status).to.equal(201);
      expectError(await b.request('PATCH', '/v1/workspace', { body: { conversion_tracking: true } }), 403, 'insufficient_scope');
      expectError(await b.request('POST', '/v1/webhooks', { body: { url: 'https://example.com/hook', events: ['link.created'] } }), 403, 'insufficient_scope');
      // The owner may.
      const o = browser();
      await o.signIn(owner.email, owner.password);
      o.context = workspace._id;
      expect((await o.request('PATCH', '/v1/workspace', { body: { conversion_tracking: true } })).status).to.equal(200);
    });

    it('leaves the bearer path as it was: a key wins over a cookie, and no session ever becomes a stored key', async () => {
      const key = await tenants.aWorkspaceKey(other._id);
      const b = browser();
      await b.signIn(owner.email, owner.password);
      b.context = workspace._id;
      const res = await b.request('GET', '/v1/workspace', { headers: bearer(key.key) });
      expect(res.status).to.equal(200);
      expect(res.body.id).to.equal(other._id);
      expect(res.headers.get('cache-control')).to.equal(null);
      const self = await b.request('GET', '/v1/key');
      expect(self.status).to.equal(200);
      const sessionId = self.body.id as string;
      expect(sessionId).to.match(/^ses_/);
      expect(self.body.last_used_at).to.equal(null);
      expect(await tenants.keyStore.collection.countDocuments({ _id: sessionId })).to.equal(0);
      expect(await tenants.keyStore.collection.countDocuments({ workspace_id: workspace._id })).to.equal(0);
    });
  });

  it('redirects / to the dashboard', async () => {
    const res = await fetch(`${api.url}/`, { redirect: 'manual' });
    expect(res.status).to.equal(302);
    expect(res.headers.get('location')).to.equal('/dashboard/');
  });

  it('tells the sign-in page which methods exist here', async () => {
    const res = await browser().request('GET', '/auth/config');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ password: true, link: false, password_reset: false, oidc: false, oidc_name: null, signed_in: false });
    expectError(await browser().request('GET', '/auth/oidc/start'), 404, 'not_found');
  });

  it('tells the sign-in page, without a 401, whether the browser is signed in already', async () => {
    const user = await users.aUser({ in: [{ kind: 'workspace', id: other._id, role: 'owner' }] });
    const b = browser();
    expect((await b.request('GET', '/auth/config')).body).to.include({ signed_in: false });
    expect((await b.signIn(user.email, user.password)).status).to.equal(200);
    const config = await b.request('GET', '/auth/config');
    expect(config.status).to.equal(200);
    expect(config.body).to.include({ signed_in: true });
    expect((await b.request('POST', '/auth/sign-out')).status).to.equal(204);
    expect((await b.request('GET', '/auth/config')).body).to.include({ signed_in: false });
  });

  it('without SMTP: no sign-in links (503 not_configured), and an invitation hands its link to the owner', async () => {
    expectError(await browser().request('POST', '/auth/sign-in/link', { body: { email: 'a@example.com' } }), 503, 'not_configured');
    const owner = await users.aUser({ in: [{ kind: 'workspace', id: other._id, role: 'owner' }] });
    const b = browser();
    await b.signIn(owner.email, owner.password);
    const res = await b.request('POST', '/auth/invites', { body: { context: other._id, email: 'later@example.com', role: 'member' } });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.sent).to.equal(false);
    expect(res.body.url).to.match(/\/auth\/invites\/[A-Za-z0-9_-]{43}$/);
  });

  it('lets a partner owner invite the owner of a client workspace and join it; a partner member or an outsider may not', async () => {
    const client = await tenants.aWorkspace({ name: 'New client', partner_id: partnerId });
    const partnerOwner = await users.aUser({ in: [{ kind: 'partner', id: partnerId, role: 'owner' }] });
    const b = browser();
    await b.signIn(partnerOwner.email, partnerOwner.password);
    const invite = await b.request('POST', '/auth/invites', { body: { context: client._id, email: 'client-owner@example.com', role: 'owner' } });
    expect(invite.status, invite.text).to.equal(201);
    expect(invite.body).to.include({ email: 'client-owner@example.com', role: 'owner' });
    const listed = await b.request('GET', `/auth/members?context=${client._id}`);
    expect(listed.status, listed.text).to.equal(200);
    expect((listed.body.invites as Array<{ email: string }>).map((i) => i.email)).to.deep.equal(['client-owner@example.com']);
    // Not a member yet: the workspace is not in the session until the owner joins it.
    expect(await users.memberships.find(partnerOwner._id, client._id)).to.equal(null);
    const joined = await b.request('POST', '/auth/memberships', { body: { context: client._id } });
    expect(joined.status, joined.text).to.equal(200);
    expect(joined.body).to.deep.equal({ context: client._id, role: 'owner' });
    const session = await b.request('GET', '/auth/session');
    expect((session.body.memberships as Array<{ id: string; role: string }>).find((m) => m.id === client._id)).to.include({ role: 'owner' });
    // Joining again changes nothing.
    expect((await b.request('POST', '/auth/memberships', { body: { context: client._id } })).body).to.deep.equal({ context: client._id, role: 'owner' });

    const partnerMember = await users.aUser({ in: [{ kind: 'partner', id: partnerId, role: 'member' }] });
    const m = browser();
    await m.signIn(partnerMember.email, partnerMember.password);
    expectError(await m.request('POST', '/auth/memberships', { body: { context: client._id } }), 403, 'forbidden');
    expectError(await m.request('POST', '/auth/invites', { body: { context: client._id, email: 'x@example.com', role: 'owner' } }), 403, 'forbidden');
    // A workspace of no partner this user owns.
    expectError(await b.request('POST', '/auth/memberships', { body: { context: other._id } }), 403, 'forbidden');
    expect(await users.memberships.find(partnerMember._id, client._id)).to.equal(null);
  });

  it('never lets an owner holding an invitation link into the invited address’s existing account', async () => {
    const owner = await users.aUser({ in: [{ kind: 'workspace', id: other._id, role: 'owner' }] });
    const victim = await users.aUser({ in: [{ kind: 'workspace', id: workspace._id, role: 'owner' }] });
    const b = browser();
    await b.signIn(owner.email, owner.password);
    const invite = await b.request('POST', '/auth/invites', { body: { context: other._id, email: victim.email, role: 'member' } });
    const token = String(invite.body.url).split('/').pop()!;
    const attacker = browser();
    expectError(await attacker.request('POST', '/auth/invites/accept', { body: { token } }), 401, 'unauthorized');
    expectError(await attacker.request('POST', '/auth/invites/accept', { body: { token, password: 'a-guessed-password' } }), 401, 'unauthorized');
    expect(attacker.cookies.has('lp_session')).to.equal(false);
    expect(await users.memberships.find(victim._id, other._id)).to.equal(null);
    // The address's owner, with its password, accepts.
    const accepted = await browser().request('POST', '/auth/invites/accept', { body: { token, password: victim.password } });
    expect(accepted.status, accepted.text).to.equal(200);
    expect((accepted.body.memberships as Array<{ id: string }>).map((m) => m.id)).to.have.members([workspace._id, other._id]);
  });

  describe('download links (a /v1 file saved by following a plain link)', () => {
    let owner: Awaited<ReturnType<Users['aUser']>>;
    const query = 'interval=7d&bots=include';

    before(async () => {
      owner = await users.aUser({ in: [{ kind: 'workspace', id: workspace._id, role: 'owner' }] });
      // A click with a comma, a quote and a non-ASCII letter in its cells, so that the file is compared byte for byte.
      const click = aClickRecord('clk_download1', { workspace_id: workspace._id, link_id: 'lnk_download', ts: new Date(Date.now() - 3_600_000).toISOString() });
      click.visitor.city = 'Zürich, "old town"';
      await tenants.client.db(mongo.dbName).collection('clicks').insertOne(toClickDoc(click) as never);
    });

    it('answers the ticket’s GET as the session’s /v1 call answers it, as an attachment, for one session only', async () => {
      const b = browser();
      await b.signIn(owner.email, owner.password);
      const ticket = await b.request('POST', '/auth/downloads', { body: { context: workspace._id, path: '/v1/analytics/export.csv', query } });
      expect(ticket.status, ticket.text).to.equal(201);
      const url = ticket.body.url as string;
      expect(url).to.match(/^\/auth\/downloads\/[\w-]+\.[\w-]+$/);
      expect(Date.parse(ticket.body.expires_at as string) - Date.now()).to.be.within(50_000, 61_000);

      const file = await b.request('GET', url);
      expect(file.status, file.text).to.equal(200);
      expect(file.headers.get('content-type')).to.match(/^text\/csv/);
      expect(file.headers.get('content-disposition')).to.match(/^attachment; filename="clicks-\d{4}-\d{2}-\d{2}\.csv"$/);
      expect(file.headers.get('cache-control')).to.equal('no-store');
      b.context = workspace._id;
      const direct = await b.request('GET', `/v1/analytics/export.csv?${query}`);
      expect(direct.status, direct.text).to.equal(200);
      expect(file.text).to.equal(direct.text);
      expect(file.text).to.include('clk_download1').and.include('"Zürich, ""old town"""');

      // Without the session, in another session, or changed by one character: nothing.
      expectError(await browser().request('GET', url), 401, 'unauthorized');
      const someoneElse = browser();
      await someoneElse.signIn(owner.email, owner.password);
      expectError(await someoneElse.request('GET', url), 404, 'not_found');
      const changed = `${url.slice(0, -1)}${url.endsWith('A') ? 'B' : 'A'}`;
      expectError(await b.request('GET', changed), 404, 'not_found');
      // A key sent along is not what the ticket stands for: the session still answers.
      const withKey = await b.request('GET', url, { headers: { Authorization: 'Bearer not-a-key' } });
      expect(withKey.status, withKey.text).to.equal(200);
    });

    it('issues tickets only to a session, with its CSRF token, in a context it belongs to, for a downloadable path', async () => {
      const body = { context: workspace._id, path: '/v1/analytics/export.csv', query };
      expectError(await browser().request('POST', '/auth/downloads', { body }), 401, 'unauthorized');
      const b = browser();
      await b.signIn(owner.email, owner.password);
      expect((await b.request('POST', '/auth/downloads', { body, csrf: false })).status).to.equal(403);
      expectError(await b.request('POST', '/auth/downloads', { body: { ...body, context: other._id } }), 403, 'forbidden');
      expectError(await b.request('POST', '/auth/downloads', { body: { ...body, path: '/v1/links' } }), 422, 'validation_failed');
      expectError(await b.request('POST', '/auth/downloads', { body: { ...body, query: 'x'.repeat(4097) } }), 422, 'validation_failed');
      expectError(await b.request('POST', '/auth/downloads', { body: { ...body, extra: 1 } }), 422, 'validation_failed');
      // The export's own checks still apply when the link is followed.
      const bad = await b.request('POST', '/auth/downloads', { body: { ...body, query: 'timezone=Mars/Olympus' } });
      expectError(await b.request('GET', bad.body.url as string), 422, 'validation_failed');
    });

    it('opens a ticket for its minute and its session only (sealed with the server secret)', () => {
      const tickets = new DownloadTickets('k'.repeat(32));
      const { ticket, expires } = tickets.issue('ses_1', { context: workspace._id, path: '/v1/analytics/export.csv', query }, 1_000_000);
      expect(expires).to.equal(1_060_000);
      expect(tickets.open(ticket, 'ses_1', 1_059_999)).to.include({ c: workspace._id, p: '/v1/analytics/export.csv', q: query });
      expect(tickets.open(ticket, 'ses_1', 1_060_000)).to.equal(null);
      expect(tickets.open(ticket, 'ses_2', 1_000_001)).to.equal(null);
      expect(new DownloadTickets('j'.repeat(32)).open(ticket, 'ses_1', 1_000_001)).to.equal(null);
      expect(tickets.open(`${ticket}.x`, 'ses_1', 1_000_001)).to.equal(null);
      expect(tickets.open('', 'ses_1', 1_000_001)).to.equal(null);
      // Sealed for downloads, it opens for nothing else sealed with the same secret (a sign-in in progress).
      expect(unseal('k'.repeat(32), 'download', ticket)).to.be.an('object');
      expect(unseal('k'.repeat(32), 'oidc', ticket)).to.equal(null);
    });
  });
});
