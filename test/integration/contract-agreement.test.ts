import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { callApi, expectInvalid, type Reply } from '../helpers/http.ts';
import type { Json, JsonObject, OpenApiDocument } from '../../src/http/openapi.ts';

const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv2020) => Ajv2020 };

/** Every object schema under `node`, with the path that leads to it. */
function objectSchemas(node: unknown, path: string, found: Array<{ path: string; schema: JsonObject }> = []) {
  if (Array.isArray(node)) node.forEach((item, i) => objectSchemas(item, `${path}/${i}`, found));
  else if (node !== null && typeof node === 'object') {
    const object = node as JsonObject;
    if (object.properties && typeof object.properties === 'object') found.push({ path, schema: object });
    for (const [key, value] of Object.entries(object)) objectSchemas(value, `${path}/${key}`, found);
  }
  return found;
}

/** The server and the published document give one verdict on the same request (spec part 9: one schema source). */
describe('the server and its OpenAPI document agree', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let doc: OpenApiDocument;
  let wsKey: string;
  let partnerKey: string;
  let ajv: Ajv2020;

  before(async () => {
    mongo = await startTestMongo();
    running = await startApi(testEnv(mongo));
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    wsKey = (await tenants.aWorkspaceKey(ws._id)).key;
    partnerKey = (await tenants.aPartnerKey(await tenants.aPartner())).key;
    doc = (await (await fetch(`${running.url}/v1/openapi.json`)).json()) as OpenApiDocument;
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
  });

  after(async () => {
    await tenants.close();
    await running.stop();
    await mongo.stop();
  });

  const requestSchema = (path: string, method: string): Json => {
    const op = doc.paths[path]![method] as { requestBody: { content: { 'application/json': { schema: Json } } } };
    return op.requestBody.content['application/json'].schema;
  };
  const documentAccepts = (path: string, method: string, body: unknown): boolean =>
    ajv.compile({ allOf: [requestSchema(path, method)], components: { schemas: doc.components.schemas } })(body);
  const accepted = (res: Reply) => res.status >= 200 && res.status < 300;

  describe('integer query values', () => {
    for (const text of ['%205', '5%20', '1e2', '0x10', '+5', '5.0', '']) {
      it(`refuses limit=${text} as the integer the document declares (422 naming limit)`, async () => {
        expectInvalid(await callApi(running.url, 'GET', `/links?limit=${text}`, { key: wsKey }), 'limit');
      });
    }

    it('accepts plain decimal digits', async () => {
      const res = await callApi(running.url, 'GET', '/links?limit=5', { key: wsKey });
      expect(res.status).to.equal(200);
    });
  });

  describe('Unicode text', () => {
    it('refuses a lone UTF-16 surrogate in a JSON string with 422 naming the field', async () => {
      // JSON can spell a lone surrogate as an escape; it is not Unicode text.
      const res = await fetch(`${running.url}/v1/tags`, {
        method: 'POST',
        headers: { ...bearer(wsKey), 'Content-Type': 'application/json' },
        body: '{"name":"tag\\ud800"}',
      });
      const body = (await res.json()) as { error: { code: string; details: Array<{ path: string }> } };
      expect(res.status).to.equal(422);
      expect(body.error.code).to.equal('validation_failed');
      expect(body.error.details.map((d) => d.path)).to.deep.equal(['name']);
    });

    it('accepts a well-formed surrogate pair (an emoji) there', async () => {
      const res = await callApi(running.url, 'POST', '/tags', { key: wsKey, body: { name: 'tag 😀' } });
      expect(res.status).to.equal(201);
    });

    it('states the rule in the document', () => {
      expect(doc.info.description).to.contain('lone UTF-16 surrogate');
    });
  });

  describe('PATCH /links/{id} with mobile: {}', () => {
    it('is accepted by both, and means a mobile block with every default', async () => {
      const link = await callApi(running.url, 'POST', '/links', { key: wsKey, body: { url: 'https://example.com/m' } });
      expect(link.status).to.equal(201);
      const body = { mobile: {} };
      expect(documentAccepts('/links/{id}', 'patch', body), 'the document accepts it').to.equal(true);
      const res = await callApi(running.url, 'PATCH', `/links/${String(link.body.id)}`, { key: wsKey, body });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.mobile).to.deep.equal({ enabled: false, tablet: 'mobile', in_app: 'attempt', delay_ms: 1600, deferred: false });
    });
  });

  describe('POST /partner/clients name', () => {
    const names: Array<[string, string]> = [
      ['61 emoji (122 UTF-16 units, 61 characters)', '😀'.repeat(61)],
      ['120 emoji', '🎉'.repeat(120)],
      ['121 emoji', '🎉'.repeat(121)],
      ['blank', '   '],
      ['empty', ''],
      ['padded', '  Acme  '],
      ['a tab and a newline only', '\t\n'],
    ];
    for (const [label, name] of names) {
      it(`gives one verdict for a name that is ${label}`, async () => {
        const body = { name };
        const res = await callApi(running.url, 'POST', '/partner/clients', { key: partnerKey, body });
        expect(accepted(res), `server answered ${res.status} ${JSON.stringify(res.body)}`).to.equal(documentAccepts('/partner/clients', 'post', body));
        if (accepted(res)) expect(res.body.name).to.equal(name.trim());
        else expectInvalid(res, 'name');
      });
    }
  });

  describe('request types that code generators can use', () => {
    it('lists no request-body property that has a default in `required`', () => {
      const offenders: string[] = [];
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          const content = (op.requestBody as { content?: Record<string, { schema: Json }> } | undefined)?.content;
          for (const { path: at, schema } of objectSchemas(content, `${method.toUpperCase()} ${path}`)) {
            const properties = schema.properties as Record<string, Json>;
            for (const name of (schema.required as string[] | undefined) ?? []) {
              // A property schema may also be a boolean (`true`: anything), which has no default.
              const property = properties[name];
              if (property !== null && typeof property === 'object' && !Array.isArray(property) && 'default' in property) offenders.push(`${at}: ${name}`);
            }
          }
        }
      }
      expect(offenders).to.deep.equal([]);
    });

    it('keeps request bodies under requestBody, where generators treat defaulted fields as optional', () => {
      const refs: string[] = [];
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          const text = JSON.stringify(op.requestBody ?? {});
          for (const match of text.matchAll(/"\$ref":"([^"]+)"/g)) refs.push(`${method} ${path}: ${match[1]}`);
        }
      }
      expect(refs).to.deep.equal([]);
    });

    it('accepts the smallest valid POST /links body, { url }, against the published schema and on the server', async () => {
      const body = { url: 'https://example.com/smallest' };
      expect(documentAccepts('/links', 'post', body)).to.equal(true);
      expect(documentAccepts('/links/bulk', 'post', [body])).to.equal(true);
      const res = await callApi(running.url, 'POST', '/links', { key: wsKey, body });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ redirect_type: 302, workspace_rules_off: false });
    });
  });
});
