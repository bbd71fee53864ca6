import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Json, type Reply } from '../helpers/http.ts';
import { SecretBox } from '../../src/webhooks/secret-box.ts';
import { signPayload, verifySignature } from '../../src/webhooks/signature.ts';
import { WebhookService } from '../../src/webhooks/webhook.service.ts';
import type { WebhookDoc } from '../../src/webhooks/webhook.store.ts';
import type { WebhookDeliveryDoc } from '../../src/webhooks/delivery.store.ts';
import { WebhookDeliveryListSchema, WebhookListSchema, WebhookSchema, WebhookWithSecretSchema } from '../../src/webhooks/webhook.schemas.ts';

// ajv-formats is CommonJS with a default export; under NodeNext its callable sits on `.default`.
const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv2020) => Ajv2020 };


// A public IP literal: accepted by the SSRF guard without any DNS lookup.
const PUBLIC_URL = 'https://93.184.215.14/hooks/linkplane';

describe('Webhook endpoints API over HTTP', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let permissive: RunningApi;
  let tenants: Tenants;
  let key: string;
  let otherKey: string;
  let partnerKey: string;
  let workspaceId: string;

  before(async () => {
    mongo = await startTestMongo();
    // The api process refuses private targets by default; a second api on the same database allows them.
    running = await startApi(testEnv(mongo));
    permissive = await startApi(testEnv(mongo, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }));
    tenants = await Tenants.open(mongo);
    workspaceId = (await tenants.aWorkspace())._id;
    key = (await tenants.aWorkspaceKey(workspaceId)).key;
    otherKey = (await tenants.aWorkspaceKey((await tenants.aWorkspace())._id)).key;
    partnerKey = (await tenants.aPartnerKey(await tenants.aPartner())).key;
  });

  after(async () => {
    await tenants.close();
    await permissive.stop();
    await running.stop();
    await mongo.stop();
  });

  const call = (method: string, path: string, body?: unknown, as: string = key, api: RunningApi = running): Promise<Reply> =>
    callApi(api.url, method, path, { key: as, body });

  const create = (body: Json = {}, as = key) => call('POST', '/webhooks', { url: PUBLIC_URL, events: ['link.created'], ...body }, as);
  const webhooks = () => tenants.client.db(mongo.dbName).collection<WebhookDoc>('webhooks');
  const box = () => new SecretBox(running.infra.config.secretKey);

  describe('create, read, list, update, delete', () => {
    it('answers 201 with the secret once, and never shows it again in GET or the list', async () => {
      const res = await create({ name: 'Orders', events: ['link.created', 'link.deleted'] });
      expect(res.status).to.equal(201);
      const wh = res.body;
      expect(wh.id).to.match(/^wh_/);
      expect(wh.secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
      expect(wh).to.deep.include({ url: PUBLIC_URL, events: ['link.created', 'link.deleted'], name: 'Orders', status: 'active', secret_rotated_at: null, previous_secret_expires_at: null });
      expect(res.headers.get('location')).to.equal(`/v1/webhooks/${String(wh.id)}`);
      const got = await call('GET', `/webhooks/${String(wh.id)}`);
      expect(got.status).to.equal(200);
      expect(got.body).not.to.have.property('secret');
      const { secret: _secret, ...view } = wh;
      expect(got.body).to.deep.equal(view);
      const list = await call('GET', '/webhooks');
      expect(list.body.pagination).to.deep.equal({ next_cursor: null, has_more: false });
      expect((list.body.data as Json[]).map((w) => w.id)).to.include(wh.id);
      expect(JSON.stringify(list.body)).not.to.contain(String(wh.secret));
    });

    it('stores the secret only encrypted, and SECRET_KEY opens it', async () => {
      const res = await create();
      const stored = (await webhooks().findOne({ _id: res.body.id as string }))!;
      const secret = String(res.body.secret);
      expect(JSON.stringify(stored)).not.to.contain(secret);
      expect(JSON.stringify(stored)).not.to.contain(secret.slice('whsec_'.length));
      expect(stored).to.deep.include({ tenant_kind: 'workspace', workspace_id: workspaceId, partner_id: null, failure_streak: 0, previous_secret_enc: null });
      expect(box().open(stored.secret_enc, stored._id)).to.equal(secret);
    });

    it('updates url, events and name, and clears the name with null', async () => {
      const id = String((await create({ name: 'Before' })).body.id);
      const res = await call('PATCH', `/webhooks/${id}`, { url: 'https://93.184.215.14/v2', events: ['domain.activated'], name: 'After' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ url: 'https://93.184.215.14/v2', events: ['domain.activated'], name: 'After' });
      expect(Date.parse(String(res.body.updated_at))).to.be.at.least(Date.parse(String(res.body.created_at)));
      expect((await call('PATCH', `/webhooks/${id}`, { name: null })).body.name).to.equal(null);
    });

    it('re-enables a failing endpoint with status active and resets its failure streak', async () => {
      const id = String((await create()).body.id);
      await webhooks().updateOne({ _id: id }, { $set: { status: 'failing', failure_streak: 3 } });
      expect((await call('GET', `/webhooks/${id}`)).body.status).to.equal('failing');
      const res = await call('PATCH', `/webhooks/${id}`, { status: 'active' });
      expect(res.body.status).to.equal('active');
      expect(await webhooks().findOne({ _id: id })).to.deep.include({ status: 'active', failure_streak: 0 });
    });

    it('refuses an empty patch, status failing, and unknown fields with 422', async () => {
      const id = String((await create()).body.id);
      for (const body of [{}, { status: 'failing' }, { secret: 'x' }]) {
        const res = await call('PATCH', `/webhooks/${id}`, body);
        expect(res.status, JSON.stringify(body)).to.equal(422);
        expect(res.body.error!.code).to.equal('validation_failed');
      }
    });

    it('deletes an endpoint with 204, after which it is 404', async () => {
      const id = String((await create()).body.id);
      expect((await call('DELETE', `/webhooks/${id}`)).status).to.equal(204);
      expect((await call('GET', `/webhooks/${id}`)).status).to.equal(404);
      expect((await call('DELETE', `/webhooks/${id}`)).status).to.equal(404);
    });

    it('validates the body: http(s) URL, 1 to 13 known unique events, name length', async () => {
      const cases: Array<[Json, string]> = [
        [{ url: 'ftp://93.184.215.14/x' }, 'url'],
        [{ url: `https://93.184.215.14/${'a'.repeat(2048)}` }, 'url'],
        [{ events: [] }, 'events'],
        [{ events: ['link.created', 'link.created'] }, 'events'],
        [{ events: ['link.exploded'] }, 'events[0]'],
        [{ name: '' }, 'name'],
      ];
      for (const [body, path] of cases) {
        const res = await create(body);
        expect(res.status, JSON.stringify(body)).to.equal(422);
        expect(res.body.error!.details!.map((d) => d.path), JSON.stringify(body)).to.include(path);
      }
    });

    it('needs webhooks:write to create and webhooks:read to list', async () => {
      const readOnly = (await tenants.aWorkspaceKey(workspaceId, ['webhooks:read'])).key;
      const res = await create({}, readOnly);
      expect(res.status).to.equal(403);
      expect(res.body.error!.code).to.equal('insufficient_scope');
      expect(res.body.error!.message).to.contain('webhooks:write');
      expect((await call('GET', '/webhooks', undefined, readOnly)).status).to.equal(200);
      const noScope = (await tenants.aWorkspaceKey(workspaceId, ['links:read'])).key;
      expect((await call('GET', '/webhooks', undefined, noScope)).body.error!.message).to.contain('webhooks:read');
    });
  });

  describe('secret rotation', () => {
    it('returns a new secret once, keeps the previous one signing until its expiry, and both verify', async () => {
      const created = await create();
      const id = String(created.body.id);
      const before = Date.now();
      const res = await call('POST', `/webhooks/${id}/rotate-secret`);
      expect(res.status).to.equal(200);
      expect(res.body.secret).to.match(/^whsec_/);
      expect(res.body.secret).not.to.equal(created.body.secret);
      expect(Date.parse(String(res.body.secret_rotated_at))).to.be.at.least(before - 1000);
      const expires = Date.parse(String(res.body.previous_secret_expires_at));
      expect(expires - Date.parse(String(res.body.secret_rotated_at))).to.equal(24 * 3_600_000);
      expect((await call('GET', `/webhooks/${id}`)).body).not.to.have.property('secret');

      const stored = (await webhooks().findOne({ _id: id }))!;
      const service = new WebhookService({
        webhooks: running.infra.stores.webhooks,
        deliveries: running.infra.stores.webhookDeliveries,
        box: box(),
        targets: { allowPrivate: false },
        secretGraceHours: 24,
      });
      const secrets = service.signingSecrets(stored);
      expect(secrets).to.deep.equal([res.body.secret, created.body.secret]);
      const header = signPayload('{"id":"dlv_x"}', secrets, 1_800_000_000);
      expect(verifySignature('{"id":"dlv_x"}', header, String(created.body.secret), { now: 1_800_000_000 }).valid).to.equal(true);
      expect(verifySignature('{"id":"dlv_x"}', header, String(res.body.secret), { now: 1_800_000_000 }).valid).to.equal(true);

      // Past the grace period only the new secret signs, and the view stops announcing a previous one.
      await webhooks().updateOne({ _id: id }, { $set: { previous_secret_expires_at: new Date(Date.now() - 1000) } });
      expect(service.signingSecrets((await webhooks().findOne({ _id: id }))!)).to.deep.equal([res.body.secret]);
      expect((await call('GET', `/webhooks/${id}`)).body.previous_secret_expires_at).to.equal(null);
    });

    it('drops a previous secret sealed under a former SECRET_KEY instead of carrying it into the grace period', async () => {
      const id = String((await create()).body.id);
      const foreign = new SecretBox('a-former-secret-key-of-32-characters-or-more').seal('whsec_old', id);
      await webhooks().updateOne({ _id: id }, { $set: { secret_enc: foreign } });
      const res = await call('POST', `/webhooks/${id}/rotate-secret`);
      expect(res.status).to.equal(200);
      expect(res.body.previous_secret_expires_at).to.equal(null);
      expect(await webhooks().findOne({ _id: id })).to.deep.include({ previous_secret_enc: null, previous_secret_expires_at: null });
    });
  });

  describe('delivery log', () => {
    it('answers an empty page for an endpoint without deliveries', async () => {
      const id = String((await create()).body.id);
      const res = await call('GET', `/webhooks/${id}/deliveries`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ data: [], pagination: { next_cursor: null, has_more: false } });
    });

    it('pages newest first with a cursor, showing only this endpoint\'s attempts', async () => {
      const id = String((await create()).body.id);
      const other = String((await create()).body.id);
      const attempt = (n: number, webhookId: string): WebhookDeliveryDoc => ({
        _id: `dlv_${webhookId}_${n}`,
        delivery_id: `dlv_${webhookId}_${n}`,
        webhook_id: webhookId,
        tenant_kind: 'workspace',
        workspace_id: workspaceId,
        partner_id: null,
        event_id: 'evt_1',
        event_type: 'link.created',
        attempt: n,
        created_at: new Date(Date.UTC(2026, 0, 1, 0, n)),
        request: { headers: { 'X-Service-Event': 'link.created' }, body: '{}' },
        response: { status: 500, headers: {}, body: 'x'.repeat(5000) },
        duration_ms: 12,
        outcome: 'failed',
        next_retry_at: null,
      });
      for (const n of [1, 2, 3]) await running.infra.stores.webhookDeliveries.record(attempt(n, id));
      await running.infra.stores.webhookDeliveries.record(attempt(9, other));
      const first = await call('GET', `/webhooks/${id}/deliveries?limit=2`);
      expect((first.body.data as Json[]).map((d) => d.attempt)).to.deep.equal([3, 2]);
      expect(((first.body.data as Json[])[0]!.response as Json).body).to.have.length(4096);
      const pagination = first.body.pagination as { next_cursor: string; has_more: boolean };
      expect(pagination.has_more).to.equal(true);
      const second = await call('GET', `/webhooks/${id}/deliveries?limit=2&cursor=${pagination.next_cursor}`);
      expect((second.body.data as Json[]).map((d) => d.attempt)).to.deep.equal([1]);
      expect(second.body.pagination).to.deep.equal({ next_cursor: null, has_more: false });
      expect((await call('GET', `/webhooks/${id}/deliveries?cursor=not-a-cursor!`)).status).to.equal(400);
    });
  });

  describe('event types by key kind', () => {
    it('refuses partner-only events for a workspace key, naming events[i]', async () => {
      const res = await create({ events: ['link.created', 'payment.succeeded', 'workspace.suspended'] });
      expect(res.status).to.equal(422);
      expect(res.body.error!.code).to.equal('validation_failed');
      expect(res.body.error!.details!.map((d) => d.path)).to.deep.equal(['events[1]', 'events[2]']);
      const id = String((await create()).body.id);
      const patch = await call('PATCH', `/webhooks/${id}`, { events: ['payment.refunded'] });
      expect(patch.status).to.equal(422);
      expect(patch.body.error!.details![0]!.path).to.equal('events[0]');
    });

    it('accepts them for a partner key, on an endpoint belonging to the partner', async () => {
      const res = await create({ events: ['payment.succeeded', 'workspace.past_due', 'link.created'] }, partnerKey);
      expect(res.status).to.equal(201);
      const stored = (await webhooks().findOne({ _id: res.body.id as string }))!;
      expect(stored.tenant_kind).to.equal('partner');
      expect(stored.workspace_id).to.equal(null);
      expect((await call('GET', '/webhooks', undefined, partnerKey)).body.data).to.have.length(1);
      expect((await call('GET', `/webhooks/${String(res.body.id)}`)).status).to.equal(404);
    });
  });

  describe('SSRF guard at registration', () => {
    it('refuses a loopback target with 422 naming url when private targets are not allowed', async () => {
      for (const url of ['http://127.0.0.1:9/x', 'http://169.254.169.254/latest', 'http://[::ffff:10.0.0.1]/x', 'http://localhost:9/x']) {
        const res = await create({ url });
        expect(res.status, url).to.equal(422);
        expect(res.body.error!.code).to.equal('validation_failed');
        expect(res.body.error!.details![0]!.path).to.equal('url');
        expect(res.body.error!.details![0]!.message).to.contain('public addresses');
      }
      const id = String((await create()).body.id);
      expect((await call('PATCH', `/webhooks/${id}`, { url: 'http://192.168.0.10/x' })).status).to.equal(422);
    });

    it('accepts it when WEBHOOK_ALLOW_PRIVATE_TARGETS is true', async () => {
      const res = await call('POST', '/webhooks', { url: 'http://127.0.0.1:9/x', events: ['link.created'] }, key, permissive);
      expect(res.status).to.equal(201);
    });
  });

  describe('contract', () => {
    it('answers exactly the documented response schemas (closed objects, no extra field)', async () => {
      const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
      const check = (schema: TSchema, reply: Reply) => {
        const validate = ajv.getSchema(String(schema.$id)) ?? ajv.compile(schema);
        expect(validate(reply.body), JSON.stringify(validate.errors)).to.equal(true);
      };
      const created = await create({ name: 'Contract' });
      check(WebhookWithSecretSchema, created);
      const id = String(created.body.id);
      await running.infra.stores.webhookDeliveries.record({
        _id: `dlv_contract_${id}`, delivery_id: `dlv_contract_${id}`, webhook_id: id, tenant_kind: 'workspace', workspace_id: workspaceId, partner_id: null,
        event_id: 'evt_c', event_type: 'link.updated', attempt: 1, created_at: new Date(), request: { headers: {}, body: '{}' },
        response: null, duration_ms: 0, outcome: 'pending', next_retry_at: null,
      });
      check(WebhookSchema, await call('GET', `/webhooks/${id}`));
      check(WebhookSchema, await call('PATCH', `/webhooks/${id}`, { name: null }));
      check(WebhookWithSecretSchema, await call('POST', `/webhooks/${id}/rotate-secret`));
      check(WebhookListSchema, await call('GET', '/webhooks'));
      check(WebhookDeliveryListSchema, await call('GET', `/webhooks/${id}/deliveries`));
    });
  });

  describe('tenant isolation', () => {
    it('answers 404 on every {id} route for an endpoint of another workspace', async () => {
      const id = String((await create()).body.id);
      const attempts: Array<[string, string, unknown?]> = [
        ['GET', `/webhooks/${id}`],
        ['PATCH', `/webhooks/${id}`, { name: 'mine now' }],
        ['DELETE', `/webhooks/${id}`],
        ['POST', `/webhooks/${id}/rotate-secret`],
        ['GET', `/webhooks/${id}/deliveries`],
      ];
      for (const [method, path, body] of attempts) {
        const res = await call(method, path, body, otherKey);
        expect(res.status, `${method} ${path}`).to.equal(404);
        expect(res.body.error!.code).to.equal('not_found');
      }
      expect((await call('GET', '/webhooks', undefined, otherKey)).body.data).to.deep.equal([]);
      const untouched = (await webhooks().findOne({ _id: id }))!;
      expect(untouched.name).to.equal(null);
      expect(untouched.secret_rotated_at).to.equal(null);
    });
  });

  describe('quota', () => {
    it('allows 20 endpoints per workspace and answers the 21st with 422 quota_exceeded', async () => {
      const ws = await tenants.aWorkspace();
      const fresh = (await tenants.aWorkspaceKey(ws._id)).key;
      for (let i = 0; i < 20; i++) expect((await create({}, fresh)).status).to.equal(201);
      const res = await create({}, fresh);
      expect(res.status).to.equal(422);
      expect(res.body.error!.code).to.equal('quota_exceeded');
      expect(await webhooks().countDocuments({ workspace_id: ws._id })).to.equal(20);
      const first = ((await call('GET', '/webhooks', undefined, fresh)).body.data as Json[])[0]!;
      expect((await call('DELETE', `/webhooks/${String(first.id)}`, undefined, fresh)).status).to.equal(204);
      expect((await create({}, fresh)).status).to.equal(201);
    });
  });
});
