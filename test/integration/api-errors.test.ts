import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';

interface ErrorBody {
  error: { code: string; message: string; doc_url: string; details?: Array<{ path: string; message: string }> };
}

describe('api errors over HTTP (spec parts 5, 7, 8)', () => {
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let wsKey: string;
  let partnerKey: string;

  before(async () => {
    mongo = await startTestMongo();
    running = await startApi(testEnv(mongo, { BODY_LIMIT_BYTES: '2048' }));
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace();
    wsKey = (await tenants.aWorkspaceKey(ws._id)).key;
    partnerKey = (await tenants.aPartnerKey(await tenants.aPartner())).key;
  });

  after(async () => {
    await tenants.close();
    await running.stop();
    await mongo.stop();
  });

  async function call(path: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: ErrorBody & Record<string, unknown> }> {
    const res = await fetch(`${running.url}${path}`, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as ErrorBody & Record<string, unknown> };
  }

  function expectEnvelope(body: ErrorBody, code: string): void {
    expect(body.error.code).to.equal(code);
    expect(body.error.message).to.be.a('string').and.not.empty;
    expect(body.error.doc_url).to.match(new RegExp(`/docs/errors#${code}$`));
  }

  describe('401 unauthorized', () => {
    it('answers a request without Authorization', async () => {
      const res = await call('/v1/workspace');
      expect(res.status).to.equal(401);
      expectEnvelope(res.body, 'unauthorized');
    });

    it('answers an unknown key of the right shape', async () => {
      const res = await call('/v1/workspace', { headers: bearer('lp_live_' + 'x'.repeat(40)) });
      expect(res.status).to.equal(401);
      expectEnvelope(res.body, 'unauthorized');
    });

    it('answers a key that is not a Linkplane key at all', async () => {
      const res = await call('/v1/workspace', { headers: { Authorization: 'Basic Zm9vOmJhcg==' } });
      expect(res.status).to.equal(401);
    });

    it('answers an expired key', async () => {
      const ws = await tenants.aWorkspace();
      const { id, key } = await tenants.aWorkspaceKey(ws._id);
      await tenants.keyStore.collection.updateOne({ _id: id }, { $set: { expires_at: new Date(Date.now() - 1000) } });
      const res = await call('/v1/workspace', { headers: bearer(key) });
      expect(res.status).to.equal(401);
      expect(res.body.error.message).to.match(/expired/);
    });

    it('answers a revoked key', async () => {
      const ws = await tenants.aWorkspace();
      const { id, key } = await tenants.aWorkspaceKey(ws._id);
      expect((await call('/v1/workspace', { headers: bearer(key) })).status).to.equal(200);
      await running.api.keys.revoke(id, running.infra.bus);
      const res = await call('/v1/workspace', { headers: bearer(key) });
      expect(res.status).to.equal(401);
      expectEnvelope(res.body, 'unauthorized');
    });
  });

  describe('403', () => {
    it('forbidden: a partner key on a workspace endpoint', async () => {
      const res = await call('/v1/workspace', { headers: bearer(partnerKey) });
      expect(res.status).to.equal(403);
      expectEnvelope(res.body, 'forbidden');
    });

    it('forbidden: a workspace key on a partner endpoint', async () => {
      const res = await call('/v1/partner/clients', { headers: bearer(wsKey) });
      expect(res.status).to.equal(403);
      expectEnvelope(res.body, 'forbidden');
    });

    it('insufficient_scope names the missing scope', async () => {
      const ws = await tenants.aWorkspace();
      const { key } = await tenants.aWorkspaceKey(ws._id, ['links:read']);
      const res = await call('/v1/workspace', { headers: bearer(key) });
      expect(res.status).to.equal(403);
      expectEnvelope(res.body, 'insufficient_scope');
      expect(res.body.error.message).to.contain('workspace:read');
    });
  });

  describe('routing', () => {
    it('answers 404 not_found for an unknown route, with rate-limit headers', async () => {
      const res = await call('/v1/nothing-here', { headers: bearer(wsKey) });
      expect(res.status).to.equal(404);
      expectEnvelope(res.body, 'not_found');
      expect(res.headers.get('x-ratelimit-limit')).to.equal('600');
    });

    it('answers 404 not_found outside /v1', async () => {
      const res = await call('/v2/workspace', { headers: bearer(wsKey) });
      expect(res.status).to.equal(404);
      expectEnvelope(res.body, 'not_found');
    });

    it('answers 405 with Allow for a method the path does not support', async () => {
      const res = await call('/v1/workspace', { method: 'DELETE', headers: bearer(wsKey) });
      expect(res.status).to.equal(405);
      expectEnvelope(res.body, 'invalid_request');
      expect(res.headers.get('allow')).to.contain('GET');
    });
  });

  describe('bodies', () => {
    const json = (key: string) => ({ ...bearer(key), 'Content-Type': 'application/json' });

    it('answers 400 invalid_request for malformed JSON', async () => {
      const res = await call('/v1/partner/clients', { method: 'POST', headers: json(partnerKey), body: '{"name": "a",' });
      expect(res.status).to.equal(400);
      expectEnvelope(res.body, 'invalid_request');
    });

    it('answers 400 invalid_request for a body that is not JSON', async () => {
      const res = await call('/v1/partner/clients', { method: 'POST', headers: { ...bearer(partnerKey), 'Content-Type': 'text/plain' }, body: 'name=a' });
      expect(res.status).to.equal(400);
      expectEnvelope(res.body, 'invalid_request');
    });

    it('answers 413 invalid_request for a body over the size limit', async () => {
      const res = await call('/v1/partner/clients', { method: 'POST', headers: json(partnerKey), body: JSON.stringify({ name: 'x'.repeat(4000) }) });
      expect(res.status).to.equal(413);
      expectEnvelope(res.body, 'invalid_request');
    });

    it('answers 422 validation_failed with a detail per field', async () => {
      const res = await call('/v1/partner/clients', { method: 'POST', headers: json(partnerKey), body: JSON.stringify({ name: '', plan: 'gold', extra: 1 }) });
      expect(res.status).to.equal(422);
      expectEnvelope(res.body, 'validation_failed');
      const paths = res.body.error.details!.map((d) => d.path);
      expect(paths).to.include.members(['name', 'plan', 'extra']);
    });

    it('answers 422 for a missing body, naming the required field', async () => {
      const res = await call('/v1/partner/clients', { method: 'POST', headers: json(partnerKey), body: '{}' });
      expect(res.status).to.equal(422);
      expect(res.body.error.details).to.deep.include({ path: 'name', message: 'is required' });
    });

    it('answers 422 for a bad query value and 400 for a malformed cursor', async () => {
      const bad = await call('/v1/partner/clients?limit=0', { headers: bearer(partnerKey) });
      expect(bad.status).to.equal(422);
      expect(bad.body.error.details![0]!.path).to.equal('limit');
      const cursor = await call('/v1/partner/clients?cursor=not-a-cursor', { headers: bearer(partnerKey) });
      expect(cursor.status).to.equal(400);
      expectEnvelope(cursor.body, 'invalid_request');
    });

    it('answers 422 for an integer query value with leading zeros, as for any other non-literal', async () => {
      for (const limit of ['010', '00', '-01']) {
        const res = await call(`/v1/links?limit=${limit}`, { headers: bearer(wsKey) });
        expect(res.status, limit).to.equal(422);
        expect(res.body.error.details![0]!.path).to.equal('limit');
      }
      expect((await call('/v1/links?limit=10', { headers: bearer(wsKey) })).status).to.equal(200);
    });
  });

  describe('docs and operations', () => {
    it('doc_url points at a real anchor of the error page', async () => {
      const res = await call('/v1/workspace');
      const page = await fetch(res.body.error.doc_url.replace(/^https?:\/\/[^/]+/, running.url));
      expect(page.status).to.equal(200);
      expect(await page.text()).to.contain('id="unauthorized"');
    });

    it('serves /healthz, /readyz and /metrics with the request histogram by route and status', async () => {
      expect((await fetch(`${running.url}/healthz`)).status).to.equal(200);
      const ready = await fetch(`${running.url}/readyz`);
      expect(ready.status).to.equal(200);
      await call('/v1/workspace', { headers: bearer(wsKey) });
      const metrics = await (await fetch(`${running.url}/metrics`)).text();
      expect(metrics).to.match(/http_request_duration_seconds_count\{[^}]*route="\/v1\/workspace"[^}]*status="200"/);
      expect(metrics).to.contain('process_cpu_seconds_total');
    });

    it('echoes a request id, or makes one', async () => {
      const mine = await fetch(`${running.url}/v1/workspace`, { headers: { 'X-Request-Id': 'trace-123' } });
      expect(mine.headers.get('x-request-id')).to.equal('trace-123');
      const made = await fetch(`${running.url}/v1/workspace`);
      expect(made.headers.get('x-request-id')).to.match(/^[0-9A-Za-z]{10}-[0-9a-z]+$/);
    });
  });

  describe('GET /workspace', () => {
    it('answers the plan limits and the consumption', async () => {
      const res = await call('/v1/workspace', { headers: bearer(wsKey) });
      expect(res.status).to.equal(200);
      const body = res.body as unknown as { plan: { id: string; limits: Record<string, number>; capabilities: string[] }; usage: Record<string, unknown> };
      expect(body.plan.id).to.equal('pro');
      expect(body.plan.limits).to.include({ links: 50_000, domains: 10, rate_limit_per_minute: 600 });
      expect(body.plan.capabilities).to.include('ab_test');
      expect(body.usage).to.include({ links: 0, domains: 0, tracked_clicks: 0 });
      expect(res.headers.get('x-ratelimit-remaining')).to.match(/^\d+$/);
    });

    it('records the last-used date of a key', async () => {
      const ws = await tenants.aWorkspace();
      const { id, key } = await tenants.aWorkspaceKey(ws._id);
      await call('/v1/workspace', { headers: bearer(key) });
      let doc = await tenants.keyStore.findById(id);
      for (let i = 0; i < 50 && !doc?.last_used_at; i++) {
        await new Promise((r) => setTimeout(r, 20));
        doc = await tenants.keyStore.findById(id);
      }
      expect(doc?.last_used_at).to.be.instanceOf(Date);
    });
  });
});
