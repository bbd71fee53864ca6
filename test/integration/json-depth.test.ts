import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { MAX_JSON_DEPTH } from '../../src/http/json-depth.ts';

/** `levels` arrays inside one another around `inner`, as JSON text (built as text: the value is never walked here). */
function nested(levels: number, inner = '1'): string {
  return '['.repeat(levels) + inner + ']'.repeat(levels);
}

describe('JSON bodies nested beyond the bound (real HTTP)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let wsKey: string;

  before(async () => {
    mongo = await startTestMongo();
    running = await startApi(testEnv(mongo));
    tenants = await Tenants.open(mongo);
    wsKey = (await tenants.aWorkspaceKey((await tenants.aWorkspace())._id)).key;
  });

  after(async () => {
    await tenants?.close();
    await running?.stop();
    await mongo?.stop();
  });

  async function post(path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
    const res = await fetch(`${running.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: running.url, ...headers }, body });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as { error?: { code: string; message: string } } };
  }

  const deepBodies: Array<[string, string]> = [
    ['arrays 10,000 deep', nested(10_000)],
    ['objects 10,000 deep', '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)],
    ['one level past the bound inside a field', `{"email":"a@example.com","password":${nested(MAX_JSON_DEPTH)}}`],
  ];

  for (const [what, body] of deepBodies) {
    it(`answers 400 invalid_request without a key on /auth/sign-in: ${what}`, async () => {
      const res = await post('/auth/sign-in', body);
      expect(res.status).to.equal(400);
      expect(res.body.error!.code).to.equal('invalid_request');
      expect(res.body.error!.message).to.contain(String(MAX_JSON_DEPTH));
    });

    it(`answers 400 invalid_request without a key on the public report form: ${what}`, async () => {
      const res = await post('/v1/public/reports', body);
      expect(res.status).to.equal(400);
      expect(res.body.error!.code).to.equal('invalid_request');
    });

    it(`answers 400 invalid_request with a key on POST /v1/links and /v1/mcp: ${what}`, async () => {
      const links = await post('/v1/links', body, bearer(wsKey));
      expect(links.status).to.equal(400);
      expect(links.body.error!.code).to.equal('invalid_request');
      const mcp = await post('/v1/mcp', body, { ...bearer(wsKey), Accept: 'application/json, text/event-stream' });
      expect(mcp.status).to.equal(400);
      expect(mcp.body.error!.code).to.equal('invalid_request');
    });
  }

  it('answers /auth/invites/accept nested past the bound with 400 invalid_request', async () => {
    const res = await post('/auth/invites/accept', nested(10_000));
    expect(res.status).to.equal(400);
    expect(res.body.error!.code).to.equal('invalid_request');
  });

  it('takes a body nested exactly to the bound to validation (its fields are judged, not its depth)', async () => {
    // The object is one level; the password value adds MAX_JSON_DEPTH - 1 arrays: MAX_JSON_DEPTH in all.
    const res = await post('/auth/sign-in', `{"email":"a@example.com","password":${nested(MAX_JSON_DEPTH - 1)}}`);
    expect(res.status).to.equal(422);
    expect(res.body.error!.code).to.equal('validation_failed');
  });

  it('counts brackets inside strings as text, not as nesting', async () => {
    const res = await post('/auth/sign-in', JSON.stringify({ email: 'nobody@example.com', password: '['.repeat(500) + '"\\{' + '{'.repeat(500) }));
    expect(res.status).to.equal(401);
  });

  it('states the bound in the OpenAPI description', async () => {
    const doc = (await (await fetch(`${running.url}/v1/openapi.json`)).json()) as { info: { description: string } };
    expect(doc.info.description).to.contain(`deeper than ${MAX_JSON_DEPTH} levels`);
  });
});
