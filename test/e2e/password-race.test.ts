import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, type RunningApi, type RunningRedirect } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi } from '../helpers/http.ts';

const MAX_ATTEMPTS = 5;

describe('password attempts under concurrent guesses', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let redirect: RunningRedirect;
  let tenants: Tenants;
  let key: string;
  let base: string;

  before(async () => {
    mongo = await startTestMongo();
    const made = await shortLinkEnv(mongo, { PASSWORD_MAX_ATTEMPTS: String(MAX_ATTEMPTS) });
    base = made.base;
    api = await startApi(made.env);
    redirect = await startRedirect(made.env);
    tenants = await Tenants.open(mongo);
    key = (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'business' }))._id)).key;
  });

  after(async () => {
    await tenants.close();
    await redirect.stop();
    await api.stop();
    await mongo.stop();
  });

  async function aProtectedLink(password: string): Promise<string> {
    const res = await callApi(api.url, 'POST', '/links', { key, body: { url: 'https://example.com/secret', password } });
    expect(res.status).to.equal(201);
    return res.body.slug as string;
  }

  const guess = (slug: string, password: string) =>
    fetch(`${base}/${slug}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password }).toString(),
      redirect: 'manual',
    }).then(async (res) => {
      await res.arrayBuffer();
      return { status: res.status, unlocked: res.headers.getSetCookie().some((c) => c.startsWith('lp_pw_')) };
    });

  it(`checks no more than ${MAX_ATTEMPTS} of 200 concurrent wrong passwords; the rest are refused with 429`, async () => {
    const slug = await aProtectedLink('the right one');
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => guess(slug, `wrong ${i}`)));
    const checked = answers.filter((a) => a.status === 403).length;
    expect(checked, JSON.stringify(answers.map((a) => a.status))).to.be.at.most(MAX_ATTEMPTS);
    expect(answers.every((a) => a.status === 403 || a.status === 429)).to.equal(true);
    // Each checked guess took an attempt of the window: what is left of it is all a visitor gets, whatever arrives at once.
    const sequential: number[] = [];
    for (let i = 0; i < MAX_ATTEMPTS + 1; i++) sequential.push((await guess(slug, `again ${i}`)).status);
    expect(sequential.filter((s) => s === 403).length + checked).to.equal(MAX_ATTEMPTS);
    expect(sequential.at(-1)).to.equal(429);
  });

  it(`checks no more than ${MAX_ATTEMPTS} of 60 concurrent guesses, the right one at position 54 among them`, async () => {
    const slug = await aProtectedLink('open sesame');
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => guess(slug, i === 54 ? 'open sesame' : `wrong ${i}`)));
    const checked = answers.filter((a) => a.status === 403 || a.unlocked);
    expect(checked.length, JSON.stringify(answers.map((a) => a.status))).to.be.at.most(MAX_ATTEMPTS);
    // Only the right password unlocks, and only if it was one of the few checked.
    answers.forEach((a, i) => expect(a.unlocked && i !== 54, `guess ${i}`).to.equal(false));
  });

  it('still unlocks with the right password on a first try', async () => {
    const slug = await aProtectedLink('plain');
    expect(await guess(slug, 'plain')).to.deep.equal({ status: 200, unlocked: true });
  });
});
