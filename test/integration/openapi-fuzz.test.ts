// Property-based fuzzing of every operation of the live OpenAPI document: requests generated from its schemas
// (valid, at and past the bounds, wrong types, garbage, malformed JSON, foreign and made-up ids, every key kind).
// Every answer must be below 500 (a documented 503 not_configured aside), every 4xx the error envelope of its
// documented status, every 2xx valid against its documented schema. Beside it: bodies nested past the depth bound on
// every operation that takes JSON (400), coherent analytics ranges (start/end or interval) whose 2xx must validate,
// and MCP messages and batches, answered in JSON-RPC and never with an internal error.
//
// `make test` runs it with a fixed seed and FUZZ_RUNS (20) runs per operation; `npm run fuzz` with a random seed and
// more runs. The seed is printed: FUZZ_SEED=<seed> npm run fuzz replays a failure.
import { expect } from 'chai';
import fc from 'fast-check';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { callApi } from '../helpers/http.ts';
import { garbage, SchemaArbitraries, type Schema } from '../helpers/schema-arbitrary.ts';
import type { JsonObject, OpenApiDocument } from '../../src/http/openapi.ts';
import { MAX_JSON_DEPTH } from '../../src/http/json-depth.ts';

const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv2020) => Ajv2020 };

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : process.env.FUZZ_RANDOM ? Math.floor(Math.random() * 2 ** 31) : 20261124;
const RUNS = Number(process.env.FUZZ_RUNS ?? 20);

/**
 * JSON text nested past the bound (MAX_JSON_DEPTH), up to the depth that overflowed the stack before the bound
 * existed: arrays and objects mixed, sometimes inside a field of an object.
 */
const deepBody: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: MAX_JSON_DEPTH + 1, max: 12_000 }), fc.constantFrom('[', '{"a":', '{"url":', '[{"x":'), fc.boolean())
  .map(([levels, opener, inField]) => {
    const closer = opener === '[' ? ']' : opener === '[{"x":' ? '}]' : '}';
    const nested = opener.repeat(levels) + '1' + closer.repeat(levels);
    return inField ? `{"name":"deep","value":${nested}}` : nested;
  });

interface Operation {
  method: string;
  path: string;
  op: JsonObject;
}

type Body = { kind: 'json'; value: unknown } | { kind: 'text'; text: string } | { kind: 'none' };

interface FuzzRequest {
  key: string | null;
  path: string;
  query: Array<[string, string]>;
  body: Body;
  idempotencyKey: string | null;
}

describe('OpenAPI-driven fuzzing of every operation (fast-check)', function () {
  this.timeout(600_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let doc: OpenApiDocument;
  let operations: Operation[];
  let keys: { workspace: string; partner: string };
  let ids: string[];
  let clientId: string;
  let ajv: Ajv2020;
  const validators = new Map<string, ValidateFunction>();

  before(async () => {
    console.log(`      fuzz seed ${SEED}, ${RUNS} runs per operation (replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} npm run fuzz)`);
    mongo = await startTestMongo();
    running = await startApi(
      testEnv(mongo, {
        RATE_LIMIT_WORKSPACE_PER_MIN: '100000000',
        RATE_LIMIT_PARTNER_PER_MIN: '100000000',
        // Webhook URLs are not resolved: generated host names would make every check a DNS query.
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        DOMAINS_KUBE: 'off',
      }),
    );
    tenants = await Tenants.open(mongo);
    const partnerId = await tenants.aPartner();
    const ws = await tenants.aWorkspace({ plan_id: 'business', partner_id: partnerId });
    clientId = ws._id;
    keys = { workspace: (await tenants.aWorkspaceKey(ws._id)).key, partner: (await tenants.aPartnerKey(partnerId)).key };
    doc = (await (await fetch(`${running.url}/v1/openapi.json`)).json()) as OpenApiDocument;
    // The /v1 operations: the few /auth ones the document also describes (their path items name their own server)
    // are the dashboard's session door, tested with sessions and origins of their own.
    operations = Object.entries(doc.paths)
      .filter(([path]) => !path.startsWith('/auth/'))
      .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op })));
    ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats.default(ajv);
    // A few real ids, so `{id}` routes are reached with existing resources too, not only unknown ones.
    ids = ['lnk_0000000000000000', 'wh_unknown', 'dom_default', 'x', '%', '0', 'a/b'];
    const made = await Promise.all([
      callApi(running.url, 'POST', '/links', { key: keys.workspace, body: { url: 'https://example.com/fuzz' } }),
      callApi(running.url, 'POST', '/tags', { key: keys.workspace, body: { name: 'fuzz' } }),
      callApi(running.url, 'POST', '/webhooks', { key: keys.workspace, body: { url: 'https://hooks.example.com/fuzz', events: ['link.created'] } }),
    ]);
    for (const res of made) if (typeof res.body.id === 'string') ids.push(res.body.id);
  });

  after(async () => {
    await tenants?.close();
    await running?.stop();
    await mongo?.stop();
  });

  it('covers every operation of the document', () => {
    expect(operations.length).to.equal(running.api.routes.length);
  });

  /** ajv validator of a schema, with the document's components in scope for `$ref`s. */
  function validatorOf(schema: unknown): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = validators.get(key);
    if (!validate) {
      validate = ajv.compile({ allOf: [schema], components: { schemas: doc.components.schemas } });
      validators.set(key, validate);
    }
    return validate;
  }

  function deref(node: unknown): JsonObject {
    const object = node as JsonObject;
    if (typeof object.$ref !== 'string') return object;
    const [, , kind, name] = object.$ref.split('/');
    return deref((doc.components as unknown as Record<string, Record<string, unknown>>)[kind!]![name!]);
  }

  function requestArbitrary(operation: Operation, schemas: SchemaArbitraries): fc.Arbitrary<FuzzRequest> {
    const { op } = operation;
    const kind = op['x-key-kind'] as string | undefined;
    const relevant = kind === 'partner' ? keys.partner : keys.workspace;
    const other = kind === 'partner' ? keys.workspace : keys.partner;
    const key = fc.oneof(
      { weight: 8, arbitrary: fc.constant(relevant as string | null) },
      { weight: 1, arbitrary: fc.constant(other) },
      { weight: 1, arbitrary: fc.constantFrom(null, 'lp_live_unknown', 'lpp_live_unknown', 'garbage key') },
    );
    const parameters = ((op.parameters ?? []) as JsonObject[]).map(deref);
    const pathParams = parameters.filter((p) => p.in === 'path').map((p) => p.name as string);
    const queryParams = parameters.filter((p) => p.in === 'query');
    // Not `.` or `..`: a client resolves those dot segments away (encoded too) and calls another route.
    const id = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...ids) },
      { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((v) => v !== '.' && v !== '..') },
    );
    const path = fc.tuple(...pathParams.map(() => id)).map((values) =>
      pathParams.reduce((p, name, i) => p.replace(`{${name}}`, encodeURIComponent(values[i]!)), operation.path),
    );
    const query = fc
      .tuple(
        ...queryParams.map((p) =>
          fc.option(
            fc.oneof(
              { weight: 3, arbitrary: schemas.valid(p.schema as Schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))) },
              { weight: 1, arbitrary: fc.constantFrom(' 5', '1e2', '0x10', '-1', '', 'true', 'x'.repeat(1000)) },
              { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
            ),
            { freq: 2 },
          ),
        ),
        fc.option(fc.tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 })), { freq: 4 }),
      )
      .map(([...values]) => {
        const extra = values.pop() as [string, string] | null;
        const pairs: Array<[string, string]> = [];
        (values as Array<string | null>).forEach((v, i) => {
          if (v !== null) pairs.push([queryParams[i]!.name as string, v]);
        });
        if (extra) pairs.push(extra);
        return pairs;
      });
    const requestSchema = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content?.['application/json']?.schema;
    const body: fc.Arbitrary<Body> = requestSchema
      ? fc.oneof(
          { weight: 5, arbitrary: schemas.valid(requestSchema).map((value): Body => ({ kind: 'json', value })) },
          { weight: 3, arbitrary: schemas.mutated(requestSchema).map((value): Body => ({ kind: 'json', value })) },
          { weight: 1, arbitrary: garbage.map((value): Body => ({ kind: 'json', value })) },
          { weight: 1, arbitrary: fc.constantFrom('{', '{"a":', '[1,]', 'null', '', '{"name":"\\ud800"}', '{"__proto__":{"x":1}}', '[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]').map((text): Body => ({ kind: 'text', text })) },
          { weight: 1, arbitrary: deepBody.map((text): Body => ({ kind: 'text', text })) },
        )
      : fc.constant({ kind: 'none' });
    // Now and then an Idempotency-Key, reused across requests (409 when the body differs) or malformed.
    const idempotencyKey = fc.option(fc.oneof(fc.constantFrom('fuzz-1', ' bad key ', ''), fc.string({ minLength: 1, maxLength: 12 })), { freq: 10 });
    return fc.record({ key, path, query, body, idempotencyKey });
  }

  async function send(operation: Operation, request: FuzzRequest): Promise<{ status: number; contentType: string; text: string }> {
    const url = new URL(`${running.url}/v1${request.path}`);
    for (const [name, value] of request.query) url.searchParams.append(name, value);
    const headers: Record<string, string> = request.key === null ? {} : bearer(request.key);
    if (request.idempotencyKey !== null && operation.method !== 'GET') headers['Idempotency-Key'] = request.idempotencyKey;
    let body: string | undefined;
    if (request.body.kind !== 'none') {
      headers['Content-Type'] = 'application/json';
      body = request.body.kind === 'json' ? JSON.stringify(request.body.value) ?? 'null' : request.body.text;
    }
    const res = await fetch(url, { method: operation.method, headers, ...(body === undefined ? {} : { body }) });
    const contentType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    // An event stream stays open: its status and type are the answer; the body is left unread.
    if (contentType === 'text/event-stream') {
      await res.body?.cancel();
      return { status: res.status, contentType, text: '' };
    }
    return { status: res.status, contentType, text: await res.text() };
  }

  function check(operation: Operation, answer: { status: number; contentType: string; text: string }): void {
    const { status, contentType, text } = answer;
    const where = `${operation.method} ${operation.path} answered ${status}: ${text.slice(0, 300)}`;
    const documented = (operation.op.responses as Record<string, unknown>)[String(status)];
    if (status >= 400 && (operation.op.tags as string[]).includes('Tools')) {
      // The tool server speaks JSON-RPC 2.0 (Model Context Protocol): its transport refusals are JSON-RPC errors.
      expect(status, where).to.be.below(500);
      const body = JSON.parse(text) as { jsonrpc?: string; error?: { code?: unknown; message?: unknown } };
      const parsed: unknown = body;
      const envelope = validatorOf({ $ref: '#/components/schemas/Error' })(parsed);
      expect(envelope || (body.jsonrpc === '2.0' && typeof body.error?.code === 'number' && typeof body.error.message === 'string'), where).to.equal(true);
      return;
    }
    if (status >= 400) {
      expect(contentType, where).to.equal('application/json');
      const body: unknown = JSON.parse(text);
      expect(validatorOf({ $ref: '#/components/schemas/Error' })(body), `${where}: not the error envelope`).to.equal(true);
      const code = (body as { error: { code: string } }).error.code;
      // The only 5xx a request may earn is a capability this environment lacks, where the operation says so.
      if (status >= 500) expect([status, code], where).to.deep.equal([503, 'not_configured']);
      expect(documented, `${where}: status not documented`).to.not.equal(undefined);
      const content = deref(documented).content as Record<string, { schema: unknown }>;
      expect(validatorOf(content['application/json']!.schema)(body), `${where}: code not documented for this status`).to.equal(true);
      return;
    }
    expect(documented, `${where}: status not documented`).to.not.equal(undefined);
    const content = deref(documented).content as Record<string, { schema?: unknown }> | undefined;
    if (!content) {
      expect(text, where).to.equal('');
      return;
    }
    expect(content, `${where}: media type ${contentType} not documented`).to.have.property(contentType);
    const schema = content[contentType]!.schema;
    if (contentType === 'application/json' && schema) {
      const validate = validatorOf(schema);
      expect(validate(JSON.parse(text)), `${where}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
    }
  }

  /**
   * Analytics queries whose range is coherent: an `interval` preset, or `start` before `end` (up to 30 days apart, at
   * any offset), never both; the other parameters drawn from their schemas. The generic property above mixes the
   * three, so it seldom reaches a 2xx of a `start`/`end` range.
   */
  function analyticsArbitrary(operation: Operation, schemas: SchemaArbitraries): fc.Arbitrary<{ request: FuzzRequest; custom: boolean }> {
    const kind = operation.op['x-key-kind'] as string;
    const parameters = ((operation.op.parameters ?? []) as JsonObject[]).map(deref).filter((p) => p.in === 'query');
    const RANGE = new Set(['start', 'end', 'interval']);
    const VISITOR_FILTERS = new Set(['device', 'os', 'browser', 'referer', 'visitor_type', 'utm_source', 'utm_medium', 'utm_campaign']);
    const PLAUSIBLE: Record<string, string[]> = {
      timezone: ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kathmandu'],
      country: ['FR', 'US,DE'],
      client_id: [clientId],
      link_id: ids,
      domain_id: ['dom_default'],
      tag: ['tag_unknown'],
      folder_id: ['fld_unknown'],
    };
    const intervalSchema = parameters.find((p) => p.name === 'interval')!.schema as { enum: string[] };
    const DAY_MS = 86_400_000;
    const instant = (ms: number, offset: string) => {
      const shift = offset === 'Z' ? 0 : (offset.startsWith('-') ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6))) * 60_000;
      return new Date(ms + shift).toISOString().replace('Z', offset === 'Z' ? 'Z' : offset);
    };
    const range = fc.oneof(
      fc.constantFrom(...intervalSchema.enum).map((interval): Array<[string, string]> => [['interval', interval]]),
      fc
        .tuple(fc.integer({ min: 0, max: 400 * 96 }), fc.integer({ min: 1, max: 30 * 96 }), fc.constantFrom('Z', '+05:30', '-08:00', '+14:00'))
        .map(([quartersAgo, quarters, offset]): Array<[string, string]> => {
          const end = Math.floor(Date.now() / 900_000) * 900_000 + DAY_MS - quartersAgo * 900_000;
          return [
            ['start', instant(end - quarters * 900_000, offset)],
            ['end', instant(end, offset)],
          ];
        }),
    );
    const others = fc.tuple(
      ...parameters
        // Visitor filters other than country have rules of their own on what they combine with: left to the property above.
        .filter((p) => !RANGE.has(p.name as string) && !VISITOR_FILTERS.has(p.name as string))
        .map((p) => {
          const plausible = PLAUSIBLE[p.name as string];
          const value = (plausible ? fc.constantFrom(...plausible) : schemas.valid(p.schema as Schema)).map(
            (v): [string, string] => [p.name as string, typeof v === 'string' ? v : JSON.stringify(v)],
          );
          // Filters now and then (the generic property tries their bounds); the range is what is under test here.
          return p.required ? value : fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: value });
        }),
    );
    return fc.tuple(range, others).map(([rangePairs, rest]) => ({
      custom: rangePairs[0]![0] === 'start',
      request: {
        key: kind === 'partner' ? keys.partner : keys.workspace,
        path: operation.path,
        query: [...rangePairs, ...rest.filter((pair): pair is [string, string] => pair !== null)],
        body: { kind: 'none' },
        idempotencyKey: null,
      },
    }));
  }

  it('answers analytics ranges, by interval or by start/end, with 2xx valid against the documented schema', async () => {
    const schemas = new SchemaArbitraries(doc.components.schemas);
    const analytics = operations.filter((o) => o.method === 'GET' && /\/analytics\//.test(o.path));
    expect(analytics.map((o) => o.op.operationId)).to.have.length.at.least(7);
    for (const operation of analytics) {
      const succeeded = { custom: 0, preset: 0 };
      await fc.assert(
        fc.asyncProperty(analyticsArbitrary(operation, schemas), async ({ request, custom }) => {
          const answer = await send(operation, request);
          check(operation, answer);
          if (answer.status === 200) succeeded[custom ? 'custom' : 'preset']++;
        }),
        { seed: SEED, numRuns: RUNS * 2, endOnFailure: !process.env.FUZZ_SHRINK },
      );
      expect(succeeded.custom, `${operation.path}: some start/end ranges answered 200`).to.be.greaterThan(0);
      expect(succeeded.preset, `${operation.path}: some interval ranges answered 200`).to.be.greaterThan(0);
    }
  });

  it('refuses bodies nested beyond the bound with 400 invalid_request on every operation that takes JSON', async () => {
    const withBody = operations.filter((o) => o.op.requestBody !== undefined);
    expect(withBody.length).to.be.greaterThan(20);
    for (const operation of withBody) {
      const kind = operation.op['x-key-kind'] as string | undefined;
      const path = operation.path.replace(/\{[^}]+\}/g, encodeURIComponent(ids[ids.length - 1]!));
      await fc.assert(
        fc.asyncProperty(deepBody, async (text) => {
          const request: FuzzRequest = { key: kind === 'partner' ? keys.partner : keys.workspace, path, query: [], body: { kind: 'text', text }, idempotencyKey: null };
          const answer = await send(operation, request);
          const where = `${operation.method} ${operation.path} answered ${answer.status}: ${answer.text.slice(0, 200)}`;
          expect(answer.status, where).to.equal(400);
          expect((JSON.parse(answer.text) as { error: { code: string } }).error.code, where).to.equal('invalid_request');
          check(operation, answer);
        }),
        { seed: SEED, numRuns: Math.max(2, Math.ceil(RUNS / 4)), endOnFailure: !process.env.FUZZ_SHRINK },
      );
    }
  });

  it('answers MCP messages and batches in JSON-RPC, never an internal error (each tool call counted: mcp-transport.test.ts)', async () => {
    const mcp = operations.find((o) => o.op.operationId === 'mcp')!;
    const headers = { ...bearer(keys.workspace), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const listed = (await (await fetch(`${running.url}/v1/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })).json()) as {
      result: { tools: Array<{ name: string; inputSchema: Schema }> };
    };
    const tools = listed.result.tools;
    expect(tools.length).to.be.greaterThan(10);
    const schemas = new SchemaArbitraries(doc.components.schemas);
    const id = fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.string({ minLength: 1, maxLength: 8 }));
    const toolCall = fc.record({
      jsonrpc: fc.constant('2.0'),
      id,
      method: fc.constant('tools/call'),
      params: fc.oneof(
        fc.constantFrom(...tools).chain((tool) =>
          fc.record({ name: fc.constant(tool.name), arguments: fc.oneof(schemas.valid(tool.inputSchema), schemas.mutated(tool.inputSchema), fc.constantFrom(null, [], 'x', 1)) }),
        ),
        fc.record({ name: fc.string({ maxLength: 12 }), arguments: garbage }, { requiredKeys: [] }),
        garbage,
      ),
    });
    const other = fc.oneof(
      fc.record({ jsonrpc: fc.constant('2.0'), id, method: fc.constantFrom('tools/list', 'ping', 'no/such/method') }),
      fc.constant({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    );
    const message = fc.oneof({ weight: 3, arbitrary: toolCall }, { weight: 1, arbitrary: other });
    const body = fc.oneof({ weight: 1, arbitrary: message }, { weight: 3, arbitrary: fc.array(message, { maxLength: 12 }) });
    await fc.assert(
      fc.asyncProperty(body, async (value) => {
        const res = await fetch(`${running.url}/v1/mcp`, { method: 'POST', headers, body: JSON.stringify(value) });
        const text = await res.text();
        const where = `POST /mcp ${JSON.stringify(value).slice(0, 300)} answered ${res.status}: ${text.slice(0, 300)}`;
        check(mcp, { status: res.status, contentType: (res.headers.get('content-type') ?? '').split(';')[0]!.trim(), text });
        if (res.status !== 200) return;
        // The SDK answers a batch holding one request with that one answer, not an array of it.
        const parsed: unknown = JSON.parse(text);
        const answers = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ jsonrpc: string; error?: { code: number }; result?: { isError?: boolean; content?: Array<{ text?: string }> } }>;
        for (const answer of answers) {
          expect(answer.jsonrpc, where).to.equal('2.0');
          expect(answer.error?.code, `${where}: an internal JSON-RPC error`).to.not.equal(-32603);
          // A tool error carries the API's error envelope as text.
          const refusal = answer.result?.isError === true ? (JSON.parse(answer.result.content![0]!.text!) as { error: { code: string } }).error : null;
          expect(refusal?.code, `${where}: an internal tool error`).to.not.equal('internal');
        }
      }),
      { seed: SEED, numRuns: RUNS * 5, endOnFailure: !process.env.FUZZ_SHRINK },
    );
  });

  it('answers every generated request below 500, 4xx in the envelope, 2xx as documented', async () => {
    const schemas = new SchemaArbitraries(doc.components.schemas);
    let requests = 0;
    const statuses = new Map<number, number>();
    for (const operation of operations) {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(operation, schemas), async (request) => {
          requests++;
          const answer = await send(operation, request);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          check(operation, answer);
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: !process.env.FUZZ_SHRINK },
      );
    }
    console.log(`      ${requests} requests; answers by status: ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(', ')}`);
    expect(requests).to.be.at.least(operations.length * RUNS);
    // Generated requests reach the handlers, not only the doors in front of them.
    expect([...statuses.keys()].some((s) => s >= 200 && s < 300), 'some requests succeed').to.equal(true);
    expect(statuses.get(422) ?? 0, 'some requests fail validation').to.be.greaterThan(0);
  });
});
