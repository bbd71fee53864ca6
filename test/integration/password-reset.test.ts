import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { Browser, Users, expectError } from '../helpers/users.ts';
import { Inbox } from '../helpers/smtp.ts';
import { until } from '../helpers/wait.ts';

describe('dashboard password reset by e-mail (real HTTP, real SMTP server)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let users: Users;
  let inbox: Inbox;
  let ipCounter = 0;
  const freshIp = () => `198.51.100.${++ipCounter}`;
  /** A browser whose requests come from `ip` (behind one trusted proxy). */
  const browser = (ip = freshIp()) => {
    const b = new Browser(api.url);
    const request = b.request.bind(b);
    b.request = (method, path, options = {}) => request(method, path, { ...options, headers: { 'X-Forwarded-For': ip, ...options.headers } });
    return b;
  };
  const RESET = /\/auth\/password\/reset\/([A-Za-z0-9_-]{43})/;
  const ask = (email: string, b = browser()) => b.request('POST', '/auth/password/reset', { body: { email } });

  before(async () => {
    mongo = await startTestMongo();
    inbox = await new Inbox().start();
    api = await startApi(
      testEnv(mongo, {
        SMTP_URL: inbox.url,
        MAIL_FROM: 'Linkplane <no-reply@linkplane.test>',
        TRUSTED_PROXY_HOPS: '1',
        PASSWORD_RESETS_PER_ACCOUNT: '2',
        PASSWORD_RESETS_PER_IP: '4',
        PASSWORD_RESET_TTL_MS: '600000',
      }),
    );
    tenants = await Tenants.open(mongo);
    users = new Users(tenants.client, mongo.dbName);
  });

  after(async () => {
    await tenants?.close();
    await api?.stop();
    await inbox?.stop();
    await mongo?.stop();
  });

  it('offers a password reset when SMTP is configured', async () => {
    expect((await browser().request('GET', '/auth/config')).body.password_reset).to.equal(true);
  });

  it('answers the same for an account and for no account, and e-mails a link only to the account', async () => {
    const user = await users.aUser();
    const known = await ask(user.email.toUpperCase());
    const unknown = await ask('nobody-here@example.com');
    for (const res of [known, unknown]) {
      expect(res.status, res.text).to.equal(202);
      expect(res.body).to.deep.equal({});
      expect(res.headers.getSetCookie()).to.deep.equal([]);
    }
    expect(known.text).to.equal(unknown.text);
    const [, token] = await inbox.waitFor(user.email, RESET);
    expect(inbox.to('nobody-here@example.com')).to.deep.equal([]);
    // Only the token's hash is stored, with its short lifetime.
    const stored = await tenants.client.db(mongo.dbName).collection('password_resets').find({ user_id: user._id }).toArray();
    expect(stored).to.have.length(1);
    expect(stored[0]!._id).to.equal(createHash('sha256').update(token!).digest('hex'));
    expect(JSON.stringify(stored)).not.to.contain(token);
    const lifetime = (stored[0]!.expires_at as Date).getTime() - (stored[0]!.created_at as Date).getTime();
    expect(lifetime).to.equal(600_000);
  });

  it('sets the new password once, ends every session of the user, and signs the resetter in', async () => {
    const ws = await tenants.aWorkspace();
    const user = await users.aUser({ in: [{ kind: 'workspace', id: ws._id, role: 'owner' }] });
    const elsewhere = browser();
    expect((await elsewhere.signIn(user.email, user.password)).status).to.equal(200);
    // The session's calls to /v1 are answered from the api's session cache from here on.
    elsewhere.context = ws._id;
    expect((await elsewhere.request('GET', '/v1/workspace')).status).to.equal(200);
    const before = inbox.to(user.email).length;
    expect((await ask(user.email)).status).to.equal(202);
    await until(() => inbox.to(user.email).length > before, 10_000, 'the reset mail');
    const [, token] = RESET.exec(inbox.to(user.email)[before]!.raw)!;

    // Opening the link (a mail scanner, or the person) uses nothing and leads to the reset page.
    const scanner = browser();
    const followed = await scanner.request('GET', `/auth/password/reset/${token}`);
    expect(followed.status).to.equal(303);
    const page = new URL(followed.headers.get('location')!, api.url);
    expect(page.pathname).to.equal('/dashboard/reset-password');
    expect(page.searchParams.get('token')).to.equal(token);
    expect(page.searchParams.get('email')).to.equal(user.email);
    expect(scanner.cookies.has('lp_session')).to.equal(false);

    // A weak password is refused and leaves the link usable.
    const resetter = browser();
    expectError(await resetter.request('POST', '/auth/password/reset/consume', { body: { token, new_password: 'short' } }), 422, 'validation_failed');
    const done = await resetter.request('POST', '/auth/password/reset/consume', { body: { token, new_password: 'a-brand-new-password' } });
    expect(done.status, done.text).to.equal(200);
    expect((done.body.user as { id: string }).id).to.equal(user._id);
    expect(resetter.cookies.has('lp_session')).to.equal(true);
    expect((await resetter.request('GET', '/auth/session')).status).to.equal(200);

    // The session signed in before the reset is over; the old password no longer works, the new one does.
    expectError(await elsewhere.request('GET', '/auth/session'), 401, 'unauthorized');
    expectError(await elsewhere.request('GET', '/v1/workspace'), 401, 'unauthorized');
    expectError(await browser().signIn(user.email, user.password), 401, 'unauthorized');
    expect((await browser().signIn(user.email, 'a-brand-new-password')).status).to.equal(200);

    // Used once: posting it again is refused and changes nothing; following it again leads to the sign-in page.
    expectError(await browser().request('POST', '/auth/password/reset/consume', { body: { token, new_password: 'yet-another-password' } }), 401, 'unauthorized');
    expect((await browser().signIn(user.email, 'a-brand-new-password')).status).to.equal(200);
    const reused = await browser().request('GET', `/auth/password/reset/${token}`);
    expect(reused.status).to.equal(303);
    expect(reused.headers.get('location')).to.equal('/dashboard/sign-in?error=reset_expired');
  });

  it('ends the other reset links of the user once one is used, and refuses an expired link', async () => {
    const user = await users.aUser();
    const b = browser();
    const before = inbox.to(user.email).length;
    expect((await ask(user.email, b)).status).to.equal(202);
    expect((await ask(user.email, b)).status).to.equal(202);
    await until(() => inbox.to(user.email).length >= before + 2, 10_000, 'two reset mails');
    const [first, second] = inbox
      .to(user.email)
      .slice(before)
      .map((mail) => RESET.exec(mail.raw)![1]!);
    expect(first).to.not.equal(second);
    expect((await browser().request('POST', '/auth/password/reset/consume', { body: { token: second, new_password: 'the-second-link-won' } })).status).to.equal(200);
    expectError(await browser().request('POST', '/auth/password/reset/consume', { body: { token: first, new_password: 'the-first-link-lost' } }), 401, 'unauthorized');

    // An expired link (its stored expiry moved into the past) is refused too.
    const other = await users.aUser();
    const count = inbox.to(other.email).length;
    expect((await ask(other.email)).status).to.equal(202);
    await until(() => inbox.to(other.email).length > count, 10_000, 'the reset mail');
    const [, token] = RESET.exec(inbox.to(other.email)[count]!.raw)!;
    await tenants.client
      .db(mongo.dbName)
      .collection('password_resets')
      .updateOne({ _id: createHash('sha256').update(token!).digest('hex') as never }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    expectError(await browser().request('POST', '/auth/password/reset/consume', { body: { token, new_password: 'too-late-for-this' } }), 401, 'unauthorized');
    expect((await browser().signIn(other.email, other.password)).status).to.equal(200);
  });

  it('limits reset e-mails per account silently, and per address with 429 and when it lifts', async () => {
    const user = await users.aUser();
    const before = inbox.to(user.email).length;
    // Three asks from three addresses: the account's limit is two an hour, the third answers the same and sends nothing.
    for (let i = 0; i < 3; i++) expect((await ask(user.email)).status).to.equal(202);
    await until(() => inbox.to(user.email).length >= before + 2, 10_000, 'two reset mails');
    // A marker mail to another account, asked after the third: once it arrived, the third would have too.
    const marker = await users.aUser();
    expect((await ask(marker.email)).status).to.equal(202);
    await inbox.waitFor(marker.email, RESET);
    expect(inbox.to(user.email).length).to.equal(before + 2);

    // One address asking about many accounts, existing or not: four an hour, then 429 whatever the account.
    const ip = freshIp();
    for (let i = 0; i < 4; i++) expect((await ask(`someone${i}@example.com`, browser(ip))).status).to.equal(202);
    for (const email of ['someone9@example.com', marker.email]) {
      const limited = await ask(email, browser(ip));
      expectError(limited, 429, 'rate_limited');
      expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 3600);
      expect(limited.body.error!.message).to.match(/^Too many password reset requests from this address; try again at \d\d:\d\d UTC\.$/);
    }
  });

  it('validates the bodies', async () => {
    expectError(await ask('not-an-email'), 422, 'validation_failed');
    expectError(await browser().request('POST', '/auth/password/reset/consume', { body: { token: 'x' } }), 422, 'validation_failed');
    expectError(await browser().request('POST', '/auth/password/reset/consume', { body: { token: 'no-such-token', new_password: 'long-enough-password' } }), 401, 'unauthorized');
  });
});

describe('dashboard password reset without SMTP', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo));
  });

  after(async () => {
    await api?.stop();
    await mongo?.stop();
  });

  it('is not offered, and asking for it is 503 not_configured', async () => {
    const b = new Browser(api.url);
    expect((await b.request('GET', '/auth/config')).body.password_reset).to.equal(false);
    expectError(await b.request('POST', '/auth/password/reset', { body: { email: 'someone@example.com' } }), 503, 'not_configured');
  });
});
