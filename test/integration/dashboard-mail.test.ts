import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { Browser, Users, expectError } from '../helpers/users.ts';
import { Inbox } from '../helpers/smtp.ts';
import type { WorkspaceDoc } from '../../src/tenancy/workspace.store.ts';

describe('dashboard sign-in links and invitations by e-mail (real SMTP server)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let users: Users;
  let inbox: Inbox;
  let workspace: WorkspaceDoc;

  before(async () => {
    mongo = await startTestMongo();
    inbox = await new Inbox().start();
    api = await startApi(testEnv(mongo, { SMTP_URL: inbox.url, MAIL_FROM: 'Linkplane <no-reply@linkplane.test>' }));
    tenants = await Tenants.open(mongo);
    users = new Users(tenants.client, mongo.dbName);
    workspace = await tenants.aWorkspace({ name: 'Invite Co' });
  });

  after(async () => {
    await tenants?.close();
    await api?.stop();
    await inbox?.stop();
    await mongo?.stop();
  });

  const LINK = /\/auth\/sign-in\/link\/([A-Za-z0-9_-]{43})/;
  const INVITE = /\/auth\/invites\/([A-Za-z0-9_-]{43})/;

  it('offers sign-in by link when SMTP is configured', async () => {
    expect((await new Browser(api.url).request('GET', '/auth/config')).body.link).to.equal(true);
  });

  it('e-mails a link whose opening uses nothing (mail scanners open links too); the page’s POST signs in once', async () => {
    const user = await users.aUser({ password: null });
    const b = new Browser(api.url);
    const res = await b.request('POST', '/auth/sign-in/link', { body: { email: user.email } });
    expect(res.status, res.text).to.equal(202);
    expect(res.body).to.deep.equal({});
    const [, token] = await inbox.waitFor(user.email, LINK);

    // A scanner follows the link first, twice: no cookie, and the link still works for the person.
    for (let i = 0; i < 2; i += 1) {
      const scanner = new Browser(api.url);
      const scanned = await scanner.request('GET', `/auth/sign-in/link/${token}`);
      expect(scanned.status).to.equal(303);
      expect(scanner.cookies.has('lp_session')).to.equal(false);
    }
    const followed = await b.request('GET', `/auth/sign-in/link/${token}`);
    expect(followed.status).to.equal(303);
    const page = new URL(followed.headers.get('location')!, api.url);
    expect(page.pathname).to.equal('/dashboard/sign-in/link');
    expect(page.searchParams.get('token')).to.equal(token);
    expect(page.searchParams.get('email')).to.equal(user.email);
    expect(b.cookies.has('lp_session')).to.equal(false);

    const used = await b.request('POST', '/auth/sign-in/link/consume', { body: { token } });
    expect(used.status, used.text).to.equal(200);
    expect(used.body.user).to.deep.equal({ id: user._id, email: user.email, name: user.name });
    expect(b.cookies.has('lp_session')).to.equal(true);
    const session = await b.request('GET', '/auth/session');
    expect(session.status).to.equal(200);
    expect((session.body.user as { id: string }).id).to.equal(user._id);

    // Used once: posting it again is refused, following it again leads to the sign-in page.
    const again = new Browser(api.url);
    expectError(await again.request('POST', '/auth/sign-in/link/consume', { body: { token } }), 401, 'unauthorized');
    expect(again.cookies.has('lp_session')).to.equal(false);
    const reused = await again.request('GET', `/auth/sign-in/link/${token}`);
    expect(reused.status).to.equal(303);
    expect(reused.headers.get('location')).to.equal('/dashboard/sign-in?error=link_expired');
  });

  it('signs in exactly once when the link’s button is pressed twice at once', async () => {
    const user = await users.aUser();
    await new Browser(api.url).request('POST', '/auth/sign-in/link', { body: { email: user.email } });
    const [, token] = await inbox.waitFor(user.email, LINK);
    const browsers = [new Browser(api.url), new Browser(api.url), new Browser(api.url)];
    const answers = await Promise.all(browsers.map((b) => b.request('POST', '/auth/sign-in/link/consume', { body: { token } })));
    expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 401, 401]);
    expect(browsers.filter((b) => b.cookies.has('lp_session'))).to.have.length(1);
  });

  it('checks the Origin of the link’s POST, and refuses a malformed body', async () => {
    const b = new Browser(api.url);
    expectError(await b.request('POST', '/auth/sign-in/link/consume', { body: { token: 'x' }, origin: 'https://evil.example' }), 403, 'forbidden');
    expectError(await b.request('POST', '/auth/sign-in/link/consume', { body: { token: 'x', email: 'a@example.com' } }), 422, 'validation_failed');
    expectError(await b.request('POST', '/auth/sign-in/link/consume', { body: {} }), 422, 'validation_failed');
  });

  it('answers 202 for an unknown address too, and sends nothing', async () => {
    const res = await new Browser(api.url).request('POST', '/auth/sign-in/link', { body: { email: 'stranger@example.com' } });
    expect(res.status).to.equal(202);
    expect(res.body).to.deep.equal({});
    // A known address asked right after gets its mail: by then the stranger's would have arrived as well.
    const user = await users.aUser();
    await new Browser(api.url).request('POST', '/auth/sign-in/link', { body: { email: user.email } });
    await inbox.waitFor(user.email, LINK);
    expect(inbox.to('stranger@example.com')).to.deep.equal([]);
  });

  it('refuses an expired link and a made-up one', async () => {
    const user = await users.aUser();
    const b = new Browser(api.url);
    await b.request('POST', '/auth/sign-in/link', { body: { email: user.email } });
    const [, token] = await inbox.waitFor(user.email, LINK);
    await tenants.client.db(mongo.dbName).collection('sign_in_links').updateMany({ user_id: user._id }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    const expired = await b.request('GET', `/auth/sign-in/link/${token}`);
    expect(expired.headers.get('location')).to.equal('/dashboard/sign-in?error=link_expired');
    expectError(await b.request('POST', '/auth/sign-in/link/consume', { body: { token } }), 401, 'unauthorized');
    expect(b.cookies.has('lp_session')).to.equal(false);
    const madeUp = await b.request('GET', `/auth/sign-in/link/${'A'.repeat(43)}`);
    expect(madeUp.headers.get('location')).to.equal('/dashboard/sign-in?error=link_expired');
    expectError(await b.request('POST', '/auth/sign-in/link/consume', { body: { token: 'A'.repeat(43) } }), 401, 'unauthorized');
  });

  describe('members and invitations', () => {
    let owner: Awaited<ReturnType<Users['aUser']>>;
    let ownerBrowser: Browser;

    before(async () => {
      owner = await users.aUser({ name: 'Olga Owner', in: [{ kind: 'workspace', id: workspace._id, role: 'owner' }] });
      ownerBrowser = new Browser(api.url);
      await ownerBrowser.signIn(owner.email, owner.password);
    });

    it('invites a new address by e-mail; the accept page creates the account and signs it in as a member', async () => {
      const res = await ownerBrowser.request('POST', '/auth/invites', { body: { context: workspace._id, email: 'New.Person@example.com', role: 'member' } });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ email: 'new.person@example.com', role: 'member', sent: true });
      expect(res.body).not.to.have.property('url');
      const [, token] = await inbox.waitFor('new.person@example.com', INVITE);
      const mail = inbox.to('new.person@example.com')[0]!.raw;
      expect(mail).to.contain('Invite Co').and.contain('Olga Owner');

      const listed = await ownerBrowser.request('GET', `/auth/members?context=${workspace._id}`);
      expect(listed.body.invites).to.deep.equal([{ id: res.body.id, email: 'new.person@example.com', role: 'member', expires_at: res.body.expires_at }]);

      const invitee = new Browser(api.url);
      const follow = await invitee.request('GET', `/auth/invites/${token}`);
      expect(follow.status).to.equal(303);
      expect(follow.headers.get('location')).to.equal(`/dashboard/accept-invite?token=${token}&email=new.person%40example.com`);
      const accepted = await invitee.request('POST', '/auth/invites/accept', { body: { token, name: 'Nina New', password: 'nina-long-password' } });
      expect(accepted.status, accepted.text).to.equal(200);
      expect(accepted.body.user).to.include({ email: 'new.person@example.com', name: 'Nina New' });
      expect(accepted.body.memberships).to.deep.equal([{ kind: 'workspace', id: workspace._id, name: 'Invite Co', role: 'member' }]);
      expect(invitee.cookies.has('lp_session')).to.equal(true);

      const members = await ownerBrowser.request('GET', `/auth/members?context=${workspace._id}`);
      expect((members.body.data as Array<{ email: string; role: string }>).map((m) => [m.email, m.role])).to.deep.equal([
        [owner.email, 'owner'],
        ['new.person@example.com', 'member'],
      ]);
      expect(members.body.invites).to.deep.equal([]);
      // Used once.
      expectError(await new Browser(api.url).request('POST', '/auth/invites/accept', { body: { token } }), 404, 'not_found');
      expect((await new Browser(api.url).request('GET', `/auth/invites/${token}`)).headers.get('location')).to.equal('/dashboard/sign-in?error=invite_expired');
      expect((await new Browser(api.url).signIn('new.person@example.com', 'nina-long-password')).status).to.equal(200);
    });

    it('joins only by the accept page’s button when the invited user follows the link signed in (opening it uses nothing)', async () => {
      const existing = await users.aUser();
      const b = new Browser(api.url);
      await b.signIn(existing.email, existing.password);
      await ownerBrowser.request('POST', '/auth/invites', { body: { context: workspace._id, email: existing.email, role: 'owner' } });
      const [, token] = await inbox.waitFor(existing.email, INVITE);
      // Opening the link, signed in (a scanner in the person's own browser) or not, joins nobody.
      for (const opener of [b, new Browser(api.url)]) {
        const follow = await opener.request('GET', `/auth/invites/${token}`);
        expect(follow.status).to.equal(303);
        expect(follow.headers.get('location')).to.equal(`/dashboard/accept-invite?${new URLSearchParams({ token: token!, email: existing.email }).toString()}`);
      }
      expect((await b.request('GET', '/auth/session')).body.memberships).to.deep.equal([]);

      // The button: the session's own CSRF token is required, then it joins as the signed-in account.
      expectError(await b.request('POST', '/auth/invites/accept', { body: { token }, csrf: false }), 403, 'forbidden');
      const joined = await b.request('POST', '/auth/invites/accept', { body: { token } });
      expect(joined.status, joined.text).to.equal(200);
      expect(joined.body.memberships).to.deep.equal([{ kind: 'workspace', id: workspace._id, name: 'Invite Co', role: 'owner' }]);
      const session = await b.request('GET', '/auth/session');
      expect(session.body.memberships).to.deep.equal([{ kind: 'workspace', id: workspace._id, name: 'Invite Co', role: 'owner' }]);
      expectError(await b.request('POST', '/auth/invites/accept', { body: { token } }), 404, 'not_found');
    });

    it('does not let someone else signed in take another address’s invitation', async () => {
      const intruder = await users.aUser();
      const b = new Browser(api.url);
      await b.signIn(intruder.email, intruder.password);
      await ownerBrowser.request('POST', '/auth/invites', { body: { context: workspace._id, email: 'meant-for@example.com', role: 'member' } });
      const [, token] = await inbox.waitFor('meant-for@example.com', INVITE);
      const follow = await b.request('GET', `/auth/invites/${token}`);
      expect(follow.headers.get('location')).to.equal(`/dashboard/accept-invite?token=${token}&email=meant-for%40example.com`);
      expect((await b.request('GET', '/auth/session')).body.memberships).to.deep.equal([]);
    });

    it('keeps owner things to owners: members cannot invite or remove, and the last owner stays', async () => {
      const member = await users.aUser({ in: [{ kind: 'workspace', id: workspace._id, role: 'member' }] });
      const mb = new Browser(api.url);
      await mb.signIn(member.email, member.password);
      expect((await mb.request('GET', `/auth/members?context=${workspace._id}`)).status).to.equal(200);
      expectError(await mb.request('POST', '/auth/invites', { body: { context: workspace._id, email: 'x@example.com', role: 'member' } }), 403, 'forbidden');
      expectError(await mb.request('DELETE', `/auth/members?context=${workspace._id}&user_id=${owner._id}`), 403, 'forbidden');

      const solo = await tenants.aWorkspace({ name: 'Solo' });
      const soloOwner = await users.aUser({ in: [{ kind: 'workspace', id: solo._id, role: 'owner' }] });
      const sb = new Browser(api.url);
      await sb.signIn(soloOwner.email, soloOwner.password);
      expectError(await sb.request('DELETE', `/auth/members?context=${solo._id}&user_id=${soloOwner._id}`), 409, 'conflict');
      // Another workspace's members are not for this owner to see.
      expectError(await sb.request('GET', `/auth/members?context=${workspace._id}`), 403, 'forbidden');
      expectError(await sb.request('GET', '/auth/members?context=bogus'), 422, 'validation_failed');
    });

    it('removes a member: their session no longer reaches that workspace in /v1', async () => {
      const member = await users.aUser({ in: [{ kind: 'workspace', id: workspace._id, role: 'member' }] });
      const mb = new Browser(api.url);
      await mb.signIn(member.email, member.password);
      mb.context = workspace._id;
      expect((await mb.request('GET', '/v1/workspace')).status).to.equal(200);
      expect((await ownerBrowser.request('DELETE', `/auth/members?context=${workspace._id}&user_id=${member._id}`)).status).to.equal(204);
      expectError(await mb.request('GET', '/v1/workspace'), 403, 'forbidden');
      expectError(await ownerBrowser.request('DELETE', `/auth/members?context=${workspace._id}&user_id=${member._id}`), 404, 'not_found');
    });

    it('withdraws an invitation, refuses to invite someone already in, and needs the CSRF token', async () => {
      const created = await ownerBrowser.request('POST', '/auth/invites', { body: { context: workspace._id, email: 'withdrawn@example.com', role: 'member' } });
      const [, token] = await inbox.waitFor('withdrawn@example.com', INVITE);
      expectError(await ownerBrowser.request('DELETE', `/auth/invites/${String(created.body.id)}`, { csrf: false }), 403, 'forbidden');
      expect((await ownerBrowser.request('DELETE', `/auth/invites/${String(created.body.id)}`)).status).to.equal(204);
      expect((await new Browser(api.url).request('GET', `/auth/invites/${token}`)).headers.get('location')).to.equal('/dashboard/sign-in?error=invite_expired');
      expectError(await ownerBrowser.request('POST', '/auth/invites', { body: { context: workspace._id, email: owner.email, role: 'member' } }), 409, 'conflict');
      expectError(await ownerBrowser.request('POST', '/auth/invites', { body: { context: workspace._id, email: 'x@example.com', role: 'admin' } }), 422, 'validation_failed');
    });
  });
});
