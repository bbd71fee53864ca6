import { EVENT_PAYLOADS } from '../../src/main/event-payloads.ts';
import { EVENT_TYPES } from '../../src/events/event-types.ts';
import { expect } from 'chai';
import Koa from 'koa';
import Router from '@koa/router';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Type } from '@sinclair/typebox';
import { PNG } from 'pngjs';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { buildOpenApi, type Json, type JsonObject, type OpenApiDocument } from '../../src/http/openapi.ts';
import { openApiRoutes } from '../../src/http/openapi.routes.ts';
import { mount, route, type RouteSpec } from '../../src/http/route-table.ts';
import type { ApiState } from '../../src/http/context.ts';
import { listen } from '../../src/platform/http-server.ts';
import { ERROR_CATALOGUE, ERROR_CODES } from '../../src/http/error-catalogue.ts';
import { ALL_SCOPES } from '../../src/tenancy/scopes.ts';

// ajv-formats is CommonJS with a default export; under NodeNext its callable sits on `.default`.
const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv2020) => Ajv2020 };
const OPTIONS = { serverUrl: 'http://api.example.test', version: '1.2.3', idempotencyTtlHours: 24, events: EVENT_PAYLOADS };

/** Follows a local `$ref` (`#/components/...`) through the document; undefined when it leads nowhere. */
function resolvePointer(doc: OpenApiDocument, ref: string): Json | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let node: Json | undefined = doc as unknown as Json;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = node !== null && typeof node === 'object' && !Array.isArray(node) ? node[key] : undefined;
  }
  return node;
}

function deref(doc: OpenApiDocument, node: Json | undefined): JsonObject {
  const object = node as JsonObject;
  return typeof object.$ref === 'string' ? deref(doc, resolvePointer(doc, object.$ref)) : object;
}

function refsIn(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => refsIn(item, found));
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else refsIn(value, found);
    }
  }
  return found;
}

function keysIn(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((item) => keysIn(item, found));
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      found.add(key);
      keysIn(value, found);
    }
  }
  return found;
}

function operation(doc: OpenApiDocument, operationId: string): JsonObject {
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) if (op.operationId === operationId) return op;
  }
  throw new Error(`no operation ${operationId}`);
}

/** The documented response of an operation for a status, with `$ref`s followed. */
function documented(doc: OpenApiDocument, operationId: string, status: number): JsonObject {
  const responses = operation(doc, operationId).responses as JsonObject;
  expect(responses, `${operationId} documents ${status}`).to.have.property(String(status));
  return deref(doc, responses[String(status)]);
}

function headerNames(doc: OpenApiDocument, response: JsonObject, onlyRequired = true): string[] {
  const headers = (response.headers ?? {}) as JsonObject;
  return Object.keys(headers).filter((name) => !onlyRequired || deref(doc, headers[name]).required === true);
}

/**
 * Checks a real HTTP answer against a documented response: every required header present and of its schema, the
 * media type documented, the body valid against its schema (ajv 2020-12, the components in scope for `$ref`s).
 */
async function expectMatches(doc: OpenApiDocument, res: Response, response: JsonObject): Promise<void> {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const validate = (schema: Json, value: unknown): string => {
    const check = ajv.compile({ allOf: [schema], components: { schemas: doc.components.schemas } });
    return check(value) ? '' : ajv.errorsText(check.errors);
  };
  for (const name of headerNames(doc, response)) {
    const value = res.headers.get(name);
    expect(value, `header ${name}`).to.be.a('string');
    const schema = deref(doc, (response.headers as JsonObject)[name]).schema as JsonObject;
    expect(validate(schema, schema.type === 'integer' ? Number(value) : value), `header ${name}: ${value}`).to.equal('');
  }
  // An event stream stays open (GET /clicks/stream): its media type is the answer; its events are tested on their own.
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel();
    expect(response.content, 'documented media types').to.have.property('text/event-stream');
    return;
  }
  const text = await res.text();
  const content = response.content as JsonObject | undefined;
  if (!content) {
    expect(text).to.equal('');
    return;
  }
  const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  expect(content, `documented media types`).to.have.property(mediaType);
  const schema = (content[mediaType] as JsonObject).schema!;
  // Text bodies (a CSV export) are checked as the string the schema describes.
  const value = mediaType === 'application/json' ? (JSON.parse(text) as unknown) : text;
  expect(validate(schema, value), `${res.status} ${text}`).to.equal('');
}

describe('OpenAPI document (spec part 9)', () => {
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let doc: OpenApiDocument;
  let wsKey: string;
  let partnerId: string;
  let partnerKey: string;

  before(async () => {
    mongo = await startTestMongo();
    running = await startApi(testEnv(mongo, { BODY_LIMIT_BYTES: '2048' }));
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace();
    wsKey = (await tenants.aWorkspaceKey(ws._id)).key;
    partnerId = await tenants.aPartner();
    partnerKey = (await tenants.aPartnerKey(partnerId)).key;
    doc = buildOpenApi(running.api.routes, { ...OPTIONS, outsideV1: running.api.outsideV1 });
  });

  after(async () => {
    await tenants.close();
    await running.stop();
    await mongo.stop();
  });

  describe('the document', () => {
    it('is a valid OpenAPI 3.1 document', async () => {
      const validator = new Validator();
      const result = await validator.validate(JSON.parse(JSON.stringify(doc)) as Record<string, unknown>);
      expect(result.errors).to.equal(undefined);
      expect(result.valid).to.equal(true);
      expect(validator.version).to.equal('3.1');
      expect(doc.openapi).to.equal('3.1.0');
      expect(doc.servers).to.deep.equal([{ url: 'http://api.example.test/v1' }]);
    });

    it('describes every route of the api under its operationId, method, path and key requirement', () => {
      expect(running.api.routes.length).to.be.greaterThan(0);
      for (const r of running.api.routes) {
        const op = doc.paths[r.path.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()];
        expect(op?.operationId, `${r.method} ${r.path}`).to.equal(r.operationId);
        expect(op?.tags).to.deep.equal([r.tag]);
        expect(op?.security).to.deep.equal(r.auth ? [{ bearerAuth: [] }] : []);
        expect(op?.['x-key-kind']).to.equal(r.auth?.kind);
        expect(op?.['x-required-scope']).to.equal(r.auth?.scope);
      }
      // Besides /v1: the password reset routes of /auth, each path item with the API's origin as its server.
      const v1 = Object.entries(doc.paths).filter(([path]) => !path.startsWith('/auth/'));
      expect(v1.flatMap(([, item]) => Object.values(item))).to.have.length(running.api.routes.length);
      const outside = Object.entries(doc.paths).filter(([path]) => path.startsWith('/auth/'));
      expect(outside.map(([path]) => path).sort()).to.deep.equal(['/auth/password/reset', '/auth/password/reset/consume']);
      for (const [path, item] of outside) {
        expect((item as unknown as { servers: Array<{ url: string }> }).servers.map((s) => s.url), path).to.deep.equal(['/']);
        for (const [method, op] of Object.entries(item)) {
          if (method === 'servers') continue;
          expect(op.security, path).to.deep.equal([]);
          expect(JSON.stringify(op.parameters ?? []), path).not.to.contain('IdempotencyKey');
        }
      }
    });

    it('lists every event type of the catalogue under webhooks, with its operationId, no API key and its payload schema', () => {
      expect(Object.keys(doc.webhooks ?? {}).sort()).to.deep.equal([...EVENT_TYPES].sort());
      const operationIds = new Set<string>();
      for (const type of EVENT_TYPES) {
        const post = doc.webhooks![type]!.post as JsonObject;
        expect(post.operationId, type).to.be.a('string');
        operationIds.add(post.operationId as string);
        expect(post.security, type).to.deep.equal([]);
        expect(post.tags).to.deep.equal(['Webhooks']);
        const body = ((post.requestBody as JsonObject).content as JsonObject)['application/json'] as JsonObject;
        const properties = (body.schema as JsonObject).properties as JsonObject;
        expect((properties.type as JsonObject).const).to.equal(type);
        const data = properties.data as JsonObject;
        const ref = data.$ref as string;
        expect(ref, `${type} data is a component`).to.match(/^#\/components\/schemas\//);
        expect(doc.components.schemas[ref.split('/').pop()!], ref).to.be.an('object');
      }
      expect(operationIds.size, 'operationIds are unique').to.equal(EVENT_TYPES.length);
      const dataOf = (type: string) => ((((doc.webhooks![type]!.post as JsonObject).requestBody as JsonObject).content as JsonObject)['application/json'] as JsonObject);
      expect(JSON.stringify(dataOf('link.created'))).to.contain('LinkEventData');
      expect(JSON.stringify(dataOf('conversion.created'))).to.contain('"#/components/schemas/Conversion"');
      expect(JSON.stringify(dataOf('alert.fired'))).to.contain('AlertFiring');
    });

    it('describes every tag', () => {
      for (const tag of doc.tags) expect(tag.description, tag.name as string).to.be.a('string').and.not.equal('');
    });

    it('resolves every $ref and makes each response schema with a $id a component, nested ones too', () => {
      const refs = refsIn(doc);
      expect(refs).to.include('#/components/schemas/Client');
      for (const ref of refs) expect(resolvePointer(doc, ref), ref).to.not.equal(undefined);
      // ClientList holds Client in its items: one component, referenced, not copied.
      const list = doc.components.schemas.ClientList as { properties: { data: { items: JsonObject } } };
      expect(list.properties.data.items).to.deep.equal({ $ref: '#/components/schemas/Client' });
      // Request bodies are inlined under their operation (see the contract-agreement test), responses are not.
      const ids = running.api.routes.flatMap((r) => r.responses.map((s) => s.schema)).map((s) => s?.$id);
      for (const id of ids) if (id) expect(doc.components.schemas, id).to.have.property(id);
      expect(keysIn(doc).has('$id')).to.equal(false);
    });

    it('publishes every scope and both key prefixes in the bearer security scheme', () => {
      const scheme = doc.components.securitySchemes.bearerAuth!;
      expect(scheme).to.include({ type: 'http', scheme: 'bearer' });
      const description = scheme.description as string;
      expect(description).to.contain('`lp_live_`').and.contain('`lpp_live_`');
      for (const scope of ALL_SCOPES) expect(description).to.contain(`| \`${scope}\` |`);
      expect(Object.keys(scheme['x-scopes'] as JsonObject)).to.deep.equal([...ALL_SCOPES]);
    });

    it('lists every error code with its statuses, as the catalogue and the Error schema do', () => {
      expect(Object.keys(doc['x-error-codes'])).to.deep.equal(ERROR_CODES);
      for (const code of ERROR_CODES) {
        const { status, otherStatuses = [] } = ERROR_CATALOGUE[code];
        expect(doc['x-error-codes'][code]).to.include({ status });
        expect(doc.info.description).to.contain(`| \`${code}\` | ${[status, ...otherStatuses].join(', ')} |`);
      }
      const envelope = doc.components.schemas.Error as { properties: { error: { properties: { code: { enum: string[] } } } } };
      expect(envelope.properties.error.properties.code.enum).to.deep.equal(ERROR_CODES);
      expect(documented(doc, 'getWorkspace', 403).content).to.have.nested.property('application/json.schema.allOf[1].properties.error.properties.code.enum').that.deep.equals(['forbidden', 'insufficient_scope', 'plan_restricted']);
    });

    it('documents the failures the layers in front of each route produce', () => {
      const statuses = (id: string) => Object.keys(operation(doc, id).responses as JsonObject);
      // 408 and 431 are answered before any middleware, for every operation.
      expect(statuses('getWorkspace')).to.deep.equal(['200', '401', '403', '408', '429', '431', '500']);
      expect(statuses('getCurrentKey')).to.deep.equal(['200', '401', '408', '429', '431', '500']); // any key, no scope: no 403
      expect(statuses('listPartnerClients')).to.deep.equal(['200', '400', '401', '403', '408', '422', '429', '431', '500']);
      expect(statuses('createPartnerClient')).to.deep.equal(['201', '400', '401', '403', '408', '409', '413', '422', '429', '431', '500']);

      const limits = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
      expect(headerNames(doc, documented(doc, 'getWorkspace', 200))).to.include.members(['X-Request-Id', ...limits]);
      expect(headerNames(doc, documented(doc, 'getWorkspace', 429))).to.include.members([...limits, 'Retry-After']);
      // A 401 has no recognised key, hence no window to report.
      expect(headerNames(doc, documented(doc, 'getWorkspace', 401))).to.deep.equal(['X-Request-Id']);

      const query = operation(doc, 'listPartnerClients').parameters as JsonObject[];
      expect(query.map((p) => [p.name, p.in, p.required])).to.deep.equal([['cursor', 'query', false], ['limit', 'query', false]]);
      expect(operation(doc, 'getWorkspace')).to.not.have.property('parameters');
      const idempotencyKey = deref(doc, (operation(doc, 'createPartnerClient').parameters as JsonObject[])[0]);
      expect(idempotencyKey).to.include({ name: 'Idempotency-Key', in: 'header', required: false });
      expect(idempotencyKey.description).to.contain('24 hours');
      expect(idempotencyKey.schema).to.include({ minLength: 1, maxLength: 255 });
    });

    it('is deterministic and leaves the route schemas untouched', () => {
      const schemas = () => JSON.stringify(running.api.routes.map((r) => [r.query, r.body, r.responses]));
      const before = schemas();
      const again = buildOpenApi(running.api.routes, { ...OPTIONS, outsideV1: running.api.outsideV1 });
      expect(again).to.deep.equal(doc);
      expect(JSON.stringify(again)).to.equal(JSON.stringify(doc));
      expect(schemas()).to.equal(before);
    });
  });

  describe('routes beyond the current table', () => {
    const Thing = Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false, $id: 'Thing' });
    const thingRoute = (overrides: Partial<RouteSpec> = {}): RouteSpec =>
      route({
        method: 'PATCH',
        path: '/things/:id',
        operationId: 'updateThing',
        tag: 'Things',
        summary: 'Update a thing',
        auth: { kind: 'workspace', scope: 'links:write' },
        body: Type.Object({ name: Type.String() }, { additionalProperties: false }),
        responses: [{ status: 200, description: 'The thing', schema: Type.Object({ thing: Thing, related: Type.Array(Type.Ref('Thing')) }) }],
        errors: ['quota_exceeded', 'not_configured'],
        handler: () => undefined,
        ...overrides,
      });

    it('turns :id into a path parameter with a 404, and $id schemas nested in inline ones into components', async () => {
      const built = buildOpenApi([thingRoute()], OPTIONS);
      expect((await new Validator().validate(JSON.parse(JSON.stringify(built)) as Record<string, unknown>)).valid).to.equal(true);
      const op = built.paths['/things/{id}']!.patch!;
      expect((op.parameters as JsonObject[])[0]).to.include({ name: 'id', in: 'path', required: true });
      expect(Object.keys(op.responses as JsonObject)).to.include.members(['404', '409', '413', '503']);
      expect(built.components.schemas.Thing).to.deep.equal({ additionalProperties: false, type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } });
      const schema = ((((op.responses as JsonObject)['200'] as JsonObject).content as JsonObject)['application/json'] as JsonObject).schema as { properties: JsonObject };
      expect(schema.properties.thing).to.deep.equal({ $ref: '#/components/schemas/Thing' });
      expect(schema.properties.related).to.deep.equal({ type: 'array', items: { $ref: '#/components/schemas/Thing' } });
    });

    it('merges the media types one status is answered in', () => {
      const picture = thingRoute({
        method: 'GET',
        path: '/things/:id/picture',
        operationId: 'getThingPicture',
        body: undefined,
        responses: [
          { status: 200, description: 'PNG', contentType: 'image/png' },
          { status: 200, description: 'SVG', contentType: 'image/svg+xml' },
          { status: 304, description: 'Not modified' },
        ],
      });
      const responses = buildOpenApi([picture], OPTIONS).paths['/things/{id}/picture']!.get!.responses as Record<string, JsonObject>;
      expect(responses['200']).to.include({ description: 'PNG; SVG' });
      expect(responses['200']!.content).to.deep.equal({ 'image/png': {}, 'image/svg+xml': {} });
      expect(responses['304']).to.not.have.property('content');
      const twice = thingRoute({ responses: [{ status: 200, description: 'a' }, { status: 200, description: 'b' }] });
      expect(() => buildOpenApi([twice], OPTIONS)).to.not.throw();
      const clash = thingRoute({ responses: [{ status: 200, description: 'a', schema: Thing }, { status: 200, description: 'b', schema: Thing }] });
      expect(() => buildOpenApi([clash], OPTIONS)).to.throw(/same media type/);
    });

    it('refuses two different schemas under one $id, and an unknown error code', () => {
      const other = Type.Object({ id: Type.Integer() }, { $id: 'Thing' });
      const clash = thingRoute({ operationId: 'getThing', method: 'GET', body: undefined, responses: [{ status: 200, description: 'x', schema: other }] });
      expect(() => buildOpenApi([thingRoute(), clash], OPTIONS)).to.throw(/two different schemas share the \$id "Thing"/);
      expect(() => buildOpenApi([thingRoute({ errors: ['teapot'] })], OPTIONS)).to.throw(/unknown error code teapot/);
      expect(() => buildOpenApi([thingRoute({ errors: ['toString'] })], OPTIONS)).to.throw(/unknown error code toString/);
    });
  });

  describe('real answers match the document', () => {
    const call = (path: string, init: RequestInit = {}) => fetch(`${running.url}${path}`, init);
    const json = (key: string, idempotencyKey: string) => ({ ...bearer(key), 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey });

    it('successful answers of every GET endpoint without a path parameter', async () => {
      await tenants.aWorkspace({ partner_id: partnerId, name: 'Client Co' });
      const gets = running.api.routes.filter((r) => r.method === 'GET' && r.auth && !r.path.includes(':'));
      expect(gets.map((r) => r.operationId)).to.include.members(['getWorkspace', 'getCurrentKey', 'listPartnerClients', 'getPartnerAnalyticsBreakdown']);
      for (const id of ['getPartnerAnalyticsSummary', 'getPartnerAnalyticsTimeseries', 'getPartnerAnalyticsBreakdown']) expect(operation(doc, id).tags).to.deep.equal(['Partner']);
      // Required query parameters of the endpoints that have some.
      const required: Record<string, string> = { '/analytics/breakdown': '?dimension=country', '/partner/analytics/breakdown': '?dimension=client' };
      // GET /workspace/qr-logo answers 200 once the workspace has a logo.
      const logo = PNG.sync.write(new PNG({ width: 16, height: 16 }));
      const uploaded = await call('/v1/workspace/qr-logo', { method: 'PUT', headers: json(wsKey, 'openapi-qr-logo'), body: JSON.stringify({ content_type: 'image/png', data: logo.toString('base64') }) });
      expect(uploaded.status).to.equal(200);
      await expectMatches(doc, uploaded, documented(doc, 'putQrLogo', 200));
      for (const r of gets) {
        const keys = r.auth!.kind === 'any' ? [wsKey, partnerKey] : [r.auth!.kind === 'workspace' ? wsKey : partnerKey];
        for (const key of keys) {
          const res = await call(`/v1${r.path}${required[r.path] ?? ''}`, { headers: bearer(key) });
          expect(res.status, r.path).to.equal(200);
          await expectMatches(doc, res, documented(doc, r.operationId, 200));
        }
      }
    });

    it('error answers: 401, 403, 404, 400 and 422', async () => {
      const scopeless = (await tenants.aWorkspaceKey((await tenants.aWorkspace())._id, ['links:read'])).key;
      const cases: Array<[string, Record<string, string>, number, string | null]> = [
        ['/v1/workspace', {}, 401, 'getWorkspace'],
        ['/v1/workspace', bearer(partnerKey), 403, 'getWorkspace'],
        ['/v1/workspace', bearer(scopeless), 403, 'getWorkspace'],
        ['/v1/partner/clients?limit=0', bearer(partnerKey), 422, 'listPartnerClients'],
        ['/v1/partner/clients?cursor=not-a-cursor', bearer(partnerKey), 400, 'listPartnerClients'],
        ['/v1/nothing-here', bearer(wsKey), 404, null],
      ];
      for (const [path, headers, status, operationId] of cases) {
        const res = await call(path, { headers });
        expect(res.status, path).to.equal(status);
        // An unknown route has no operation: its answer is the shared NotFound response.
        await expectMatches(doc, res, operationId ? documented(doc, operationId, status) : doc.components.responses.NotFound!);
      }
    });

    it('mutations: 201, then 409 for an Idempotency-Key reused with another body, and 413', async () => {
      const created = await call('/v1/partner/clients', { method: 'POST', headers: json(partnerKey, 'openapi-1'), body: JSON.stringify({ name: 'Beta' }) });
      expect(created.status).to.equal(201);
      await expectMatches(doc, created, documented(doc, 'createPartnerClient', 201));
      const reused = await call('/v1/partner/clients', { method: 'POST', headers: json(partnerKey, 'openapi-1'), body: JSON.stringify({ name: 'Gamma' }) });
      expect(reused.status).to.equal(409);
      await expectMatches(doc, reused, documented(doc, 'createPartnerClient', 409));
      const large = await call('/v1/partner/clients', { method: 'POST', headers: json(partnerKey, 'openapi-2'), body: JSON.stringify({ name: 'x'.repeat(4000) }) });
      expect(large.status).to.equal(413);
      await expectMatches(doc, large, documented(doc, 'createPartnerClient', 413));
    });

    it('429 with Retry-After and the rate-limit headers', async () => {
      const key = (await tenants.aPartnerKey(await tenants.aPartner({ rate_limit_per_minute: 1 }))).key;
      expect((await call('/v1/key', { headers: bearer(key) })).status).to.equal(200);
      const limited = await call('/v1/key', { headers: bearer(key) });
      expect(limited.status).to.equal(429);
      await expectMatches(doc, limited, documented(doc, 'getCurrentKey', 429));
    });
  });

  describe('GET /v1/openapi.json', () => {
    it('answers the document once built, as JSON cached for a day, and 304 for its ETag', async () => {
      let builds = 0;
      const router = new Router<ApiState>({ prefix: '/v1' });
      const counted = () => {
        builds += 1;
        return doc;
      };
      mount(router, openApiRoutes(counted));
      const app = new Koa<ApiState>();
      app.use(router.routes());
      const server = await listen(app.callback(), 0, '127.0.0.1');
      const url = `http://127.0.0.1:${server.port}/v1/openapi.json`;
      try {
        const first = await fetch(url);
        expect(first.status).to.equal(200);
        expect(first.headers.get('content-type')).to.match(/^application\/json/);
        expect(first.headers.get('cache-control')).to.equal('public, max-age=86400');
        expect(await first.json()).to.deep.equal(doc);
        const etag = first.headers.get('etag')!;
        // fetch() adds Cache-Control: no-cache to a conditional request (which forbids a 304) unless one is given.
        const second = await fetch(url, { headers: { 'If-None-Match': etag, 'Cache-Control': 'max-age=0' } });
        expect(second.status).to.equal(304);
        expect(builds).to.equal(1);
      } finally {
        await server.close(1000);
      }
    });

    it('is served by the api without a key and matches its own operation', async () => {
      expect(running.api.routes.map((r) => r.operationId)).to.include('getOpenApi');
      const res = await fetch(`${running.url}/v1/openapi.json`);
      expect(res.status).to.equal(200);
      const served = (await res.clone().json()) as OpenApiDocument;
      // Server and version come from the api's config; everything else is the route table's.
      expect(served.paths).to.deep.equal(doc.paths);
      expect(served.components).to.deep.equal(doc.components);
      await expectMatches(doc, res, documented(doc, 'getOpenApi', 200));
    });
  });
});
