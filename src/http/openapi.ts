// The OpenAPI 3.1 document, generated from the route table: the same TypeBox schemas that validate requests and
// shape responses become the published contract (spec part 9), so the two cannot drift apart.
import type { TSchema } from '@sinclair/typebox';
import type { ResponseSpec, RouteSpec } from './route-table.ts';
import { ERROR_CATALOGUE, ERROR_CODES } from './error-catalogue.ts';
import { ErrorSchema } from './error-response.ts';
import { ALL_SCOPES, SCOPE_AREAS, type Scope, type ScopeArea } from '../tenancy/scopes.ts';
import { KEY_PREFIX } from '../tenancy/key.service.ts';
import type { ErrorCode } from '../platform/errors.ts';
import { MAX_JSON_DEPTH } from './json-depth.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface OpenApiOptions {
  /** Public origin of the API; the document's server is `<serverUrl>/v1`. */
  serverUrl: string;
  version: string;
  idempotencyTtlHours: number;
  /** Event payloads a webhook endpoint receives, published under the document's `webhooks` (OpenAPI 3.1). */
  events?: readonly EventPayloadSpec[];
  /**
   * Routes mounted outside `/v1` (the dashboard's `/auth`): each path item names its own server, `/` (the origin the
   * document is served from), and its path carries the prefix. They take no API key and no Idempotency-Key.
   */
  outsideV1?: ReadonlyArray<{ prefix: string; routes: readonly RouteSpec[] }>;
}

export interface EventPayloadSpec {
  type: string;
  summary: string;
  /** More than a summary says: delivery rules particular to the type. */
  description?: string;
  /** The schema of the delivery's `data`. */
  data: TSchema;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  jsonSchemaDialect: string;
  info: JsonObject;
  servers: JsonObject[];
  tags: JsonObject[];
  paths: Record<string, Record<string, JsonObject>>;
  components: {
    schemas: Record<string, JsonObject>;
    securitySchemes: Record<string, JsonObject>;
    parameters: Record<string, JsonObject>;
    headers: Record<string, JsonObject>;
    responses: Record<string, JsonObject>;
  };
  /** Every error code with its status(es), meaning and retry advice: the error catalogue, machine-readable. */
  'x-error-codes': Record<string, JsonObject>;
  webhooks?: Record<string, JsonObject>;
}

const SCHEMAS = '#/components/schemas/';
const COMPONENT_NAME = /^[A-Za-z0-9._-]+$/;
const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Keywords whose values are data, not subschemas: copied as they are, never searched for `$id`. */
const DATA_KEYWORDS = new Set(['const', 'default', 'enum', 'examples', 'example']);

export function buildOpenApi(routes: readonly RouteSpec[], options: OpenApiOptions): OpenApiDocument {
  const schemas = new SchemaComponents();
  schemas.convert(ErrorSchema);
  const paths: Record<string, Record<string, JsonObject>> = {};
  const operationIds = new Set<string>();
  const tags: string[] = [];
  for (const route of routes) {
    if (operationIds.has(route.operationId)) throw new Error(`OpenAPI: operationId ${route.operationId} is used twice`);
    operationIds.add(route.operationId);
    if (!tags.includes(route.tag)) tags.push(route.tag);
    const path = openApiPath(route.path);
    const item = (paths[path] ??= {});
    const method = route.method.toLowerCase();
    if (item[method]) throw new Error(`OpenAPI: ${route.method} ${route.path} is declared twice`);
    item[method] = operation(route, schemas);
  }
  for (const { prefix, routes: outside } of options.outsideV1 ?? []) {
    for (const route of outside) {
      if (route.auth !== null) throw new Error(`OpenAPI: ${route.operationId} outside /v1 cannot take an API key`);
      if (operationIds.has(route.operationId)) throw new Error(`OpenAPI: operationId ${route.operationId} is used twice`);
      operationIds.add(route.operationId);
      if (!tags.includes(route.tag)) tags.push(route.tag);
      const path = openApiPath(`${prefix}${route.path}`);
      // A path item's `servers` is a list, not an operation: the document's type keeps paths as operations only.
      // `/` is relative to where the document is served: the API's origin, so the paths do not depend on config.
      const servers = [{ url: '/', description: `The API's origin: ${prefix} is not under /v1.` }];
      const item = (paths[path] ??= { servers } as unknown as Record<string, JsonObject>);
      const method = route.method.toLowerCase();
      if (item[method]) throw new Error(`OpenAPI: ${route.method} ${prefix}${route.path} is declared twice`);
      item[method] = operation(route, schemas, { idempotency: false });
    }
  }
  const webhooks = options.events && options.events.length > 0 ? { webhooks: eventPayloads(options.events, schemas) } : {};
  return {
    ...webhooks,
    openapi: '3.1.0',
    // TypeBox emits plain JSON Schema 2020-12; no OpenAPI-only keyword (discriminator, xml) is used.
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Linkplane API',
      version: options.version,
      description: apiDescription(options.idempotencyTtlHours),
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: `${options.serverUrl.replace(/\/+$/, '')}/v1` }],
    tags: tags.map((name): JsonObject => (TAG_DESCRIPTIONS[name] ? { name, description: TAG_DESCRIPTIONS[name] } : { name })),
    paths,
    components: {
      schemas: schemas.sorted(),
      securitySchemes: { bearerAuth: bearerScheme() },
      parameters: { IdempotencyKey: idempotencyKeyParameter(options.idempotencyTtlHours) },
      // A copy: each document is the caller's to keep or change without touching the next one.
      headers: structuredClone(HEADERS),
      responses: Object.fromEntries(Object.entries(ERROR_RESPONSES).map(([status, name]) => [name, errorResponseBody(Number(status), true)])),
    },
    'x-error-codes': Object.fromEntries(
      ERROR_CODES.map((code) => {
        const { status, otherStatuses, meaning, retry } = ERROR_CATALOGUE[code];
        const entry: JsonObject = { status, meaning, retry };
        if (otherStatuses) entry.other_statuses = [...otherStatuses];
        return [code, entry];
      }),
    ),
  };
}

/** What each tag of the route table groups, shown by reference renderers above its operations. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Links: 'Short links: create (one or in bulk), read, update, delete, tags and folders, QR codes.',
  Analytics: 'Clicks and conversions of a workspace: summary, time series, breakdowns, top links, the CSV export.',
  Domains: 'Custom domains of a workspace: registration, DNS verification, certificates.',
  Keys: 'The API key in use: its scopes and owner.',
  Webhooks: 'Webhook endpoints, their signing secrets and signature scheme, the delivery log and test deliveries.',
  Workspace: 'The workspace of the key: settings, plan and usage.',
  Conversions: 'Conversions (sales, sign-ups) attributed to the click that led to them.',
  Alerts: 'Alert rules on clicks, rotators, webhooks and domains, and their firings.',
  Reports: 'Abuse reports about links, filed publicly and moderated by the workspace.',
  'IP lists': 'Named lists of IP addresses and ranges that link rules match visitors against.',
  Events: 'The log of events the webhooks deliver, readable by cursor.',
  Partner: 'The partner behind a partner key.',
  'Partner clients': 'Client workspaces of a partner: creation, plans, suspension, keys.',
  'Partner plans': 'The plans a partner sells to its clients.',
  'Partner billing': 'Client subscriptions, payments, refunds and payouts, and the processor events that drive them.',
  'Partner domains': 'Custom domains a partner owns and lends to its clients.',
  'Partner analytics': 'Analytics across the client workspaces of a partner.',
  'Dashboard sessions': 'API access for the signed-in dashboard.',
  Tools: 'The Model Context Protocol server exposing these operations as tools for AI assistants.',
  Meta: 'This document.',
};

/** `link.created` → `onLinkCreated`: the operationId of an event's webhook entry. */
function eventOperationId(type: string): string {
  return `on${type.split(/[._]/).map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('')}`;
}

/** One POST per event type, as a receiver sees it (spec 6.2): the delivery envelope around the event's `data`. */
function eventPayloads(events: readonly EventPayloadSpec[], schemas: SchemaComponents): Record<string, JsonObject> {
  return Object.fromEntries(
    events.map((event): [string, JsonObject] => [
      event.type,
      {
        post: {
          operationId: eventOperationId(event.type),
          summary: event.summary,
          ...(event.description ? { description: event.description } : {}),
          tags: ['Webhooks'],
          // Sent by the platform to the receiver: no API key; the receiver authenticates the POST by its signature.
          security: [],
          parameters: [
            { name: 'X-Service-Event', in: 'header', required: true, schema: { type: 'string', const: event.type } },
            { name: 'X-Service-Delivery', in: 'header', required: true, schema: { type: 'string' } },
            {
              name: 'X-Service-Signature',
              in: 'header',
              required: false,
              description: 'Endpoints with `signature_scheme: linkplane`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`',
              schema: { type: 'string' },
            },
            { name: 'webhook-id', in: 'header', required: false, description: 'Endpoints with `signature_scheme: standard` (Standard Webhooks): the delivery id', schema: { type: 'string' } },
            { name: 'webhook-timestamp', in: 'header', required: false, description: 'Endpoints with `signature_scheme: standard`: unix seconds', schema: { type: 'string' } },
            {
              name: 'webhook-signature',
              in: 'header',
              required: false,
              description: 'Endpoints with `signature_scheme: standard`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">`, space-separated, one per live secret',
              schema: { type: 'string' },
            },
          ] as Json[],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['id', 'type', 'created_at', 'data'],
                  properties: {
                    id: { type: 'string', description: 'The delivery id (`dlv_…`); deduplicate by it' },
                    type: { type: 'string', const: event.type },
                    created_at: { type: 'string', format: 'date-time' },
                    data: schemas.convert(event.data),
                  },
                },
              },
            },
          },
          responses: { '2XX': { description: 'Acknowledged (within 10 seconds)' } },
        },
      },
    ]),
  );
}

/** Koa's `/links/:id` is OpenAPI's `/links/{id}`. */
function openApiPath(path: string): string {
  // Wildcards and optional groups have no faithful OpenAPI form: refuse them rather than publish a wrong path.
  if (/[*{}?]/.test(path)) throw new Error(`OpenAPI: path ${path} uses a pattern the document cannot express`);
  return path.replace(/:(\w+)/g, '{$1}');
}

function operation(route: RouteSpec, schemas: SchemaComponents, options: { idempotency: boolean } = { idempotency: true }): JsonObject {
  const authenticated = route.auth !== null;
  const mutation = MUTATIONS.has(route.method);
  const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const parameters: Json[] = pathParams.map((name) => ({
    name,
    in: 'path',
    required: true,
    description: 'An unknown identifier, or one of another tenant, answers 404 not_found.',
    schema: { type: 'string' },
  }));
  if (route.query) parameters.push(...queryParameters(route, schemas));
  if (mutation && options.idempotency) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const op: JsonObject = {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: [route.description, accessSentence(route)].filter(Boolean).join('\n\n'),
    security: authenticated ? [{ bearerAuth: [] }] : [],
  };
  if (route.auth) {
    op['x-key-kind'] = route.auth.kind;
    op['x-required-scope'] = route.auth.scope;
  }
  if (parameters.length > 0) op.parameters = parameters;
  if (route.body) {
    op.requestBody = { required: true, content: { 'application/json': { schema: schemas.request(route.body) } } };
  }
  op.responses = responses(route, schemas, { authenticated, mutation, hasId: pathParams.length > 0 });
  return op;
}

/** One parameter per property of the query object; a property with a default is optional whatever `required` says. */
function queryParameters(route: RouteSpec, schemas: SchemaComponents): JsonObject[] {
  const { properties, required = [] } = route.query as TSchema & { properties?: Record<string, TSchema>; required?: string[] };
  if (!properties) throw new Error(`OpenAPI: the query schema of ${route.operationId} must be an object`);
  return Object.keys(properties).map((name) => {
    const property = properties[name]!;
    const parameter: JsonObject = {
      name,
      in: 'query',
      // The query validator fills defaults in, so a client may leave such a field out.
      required: required.includes(name) && property.default === undefined,
      schema: schemas.convert(property),
    };
    if (typeof property.description === 'string') parameter.description = property.description;
    return parameter;
  });
}

function accessSentence(route: RouteSpec): string {
  if (!route.auth) return 'Public: no key is needed.';
  const { kind, scope } = route.auth;
  const key = kind === 'any' ? 'Any valid key (workspace or partner)' : `A ${kind} key (\`${KEY_PREFIX[kind]}…\`)`;
  return scope ? `${key} with the scope \`${scope}\`.` : `${key}; no scope is needed.`;
}

function responses(route: RouteSpec, schemas: SchemaComponents, traits: { authenticated: boolean; mutation: boolean; hasId: boolean }): JsonObject {
  const { authenticated, mutation, hasId } = traits;
  const headers = successHeaders(authenticated, mutation);
  const byStatus = new Map<number, JsonObject>();
  for (const spec of route.responses) {
    const response = successResponse(spec, headers, schemas);
    const known = byStatus.get(spec.status);
    byStatus.set(spec.status, known ? alternatives(known, response, route.operationId) : response);
  }

  // The failures the layers in front of every handler can produce (src/main/api.ts), then the route's own.
  // 408 and 431 are Node's own answers, before any middleware: every operation can earn them.
  const errors = new Set<number>([500, 408, 431]);
  if (authenticated) [401, 429].forEach((s) => errors.add(s));
  if (route.auth && (route.auth.kind !== 'any' || route.auth.scope !== null)) errors.add(403);
  if (route.query || route.body) [400, 422].forEach((s) => errors.add(s));
  if (mutation) [400, 409, 413].forEach((s) => errors.add(s));
  if (hasId) errors.add(404);
  for (const code of route.errors ?? []) {
    if (!Object.hasOwn(ERROR_CATALOGUE, code)) throw new Error(`OpenAPI: ${route.operationId} declares the unknown error code ${code}`);
    errors.add(ERROR_CATALOGUE[code as ErrorCode].status);
  }
  for (const status of route.errorStatuses ?? []) errors.add(status);
  if (route.upstream) errors.add(502);
  for (const status of errors) if (!byStatus.has(status)) byStatus.set(status, errorResponse(status, authenticated));

  return Object.fromEntries([...byStatus.entries()].sort(([a], [b]) => a - b).map(([status, response]) => [String(status), response]));
}

function successResponse(spec: ResponseSpec, headers: JsonObject, schemas: SchemaComponents): JsonObject {
  const response: JsonObject = { description: spec.description, headers };
  if (spec.schema || spec.contentType) {
    response.content = { [spec.contentType ?? 'application/json']: spec.schema ? { schema: schemas.convert(spec.schema) } : {} };
  }
  return response;
}

/** One status answered in several media types (a QR code as PNG or SVG) is one response with several contents. */
function alternatives(a: JsonObject, b: JsonObject, operationId: string): JsonObject {
  const contentA = (a.content ?? {}) as JsonObject;
  const contentB = (b.content ?? {}) as JsonObject;
  if (Object.keys(contentB).some((type) => type in contentA)) {
    throw new Error(`OpenAPI: ${operationId} declares one status twice for the same media type`);
  }
  const merged: JsonObject = { ...a, description: `${a.description as string}; ${b.description as string}` };
  const content = { ...contentA, ...contentB };
  if (Object.keys(content).length > 0) merged.content = content;
  return merged;
}

const headerRef = (name: string): JsonObject => ({ $ref: `#/components/headers/${name}` });
const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

function successHeaders(authenticated: boolean, mutation: boolean): JsonObject {
  const names = ['X-Request-Id', ...(authenticated ? RATE_LIMIT_HEADERS : []), ...(mutation ? ['Idempotent-Replayed'] : [])];
  return Object.fromEntries(names.map((name) => [name, headerRef(name)]));
}

const HEADERS: Record<string, JsonObject> = {
  'X-Request-Id': {
    description: 'The request id, in the logs too: the caller\'s own X-Request-Id when it sent one matching `^[A-Za-z0-9._:-]{1,128}$`.',
    required: true,
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': {
    description: "The key's capacity in the sliding one-minute window.",
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description: 'Unix time in seconds when the oldest counted request leaves the window (when limited: when a request fits again).',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'Idempotent-Replayed': {
    description: 'Present, `true`, when the answer is the replay of an earlier request with the same Idempotency-Key.',
    schema: { const: 'true' },
  },
};

/** Reusable error responses, one per status; each lists the codes the error catalogue gives that status. */
const ERROR_RESPONSES: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  406: 'NotAcceptable',
  409: 'Conflict',
  408: 'RequestTimeout',
  413: 'PayloadTooLarge',
  431: 'RequestHeaderFieldsTooLarge',
  422: 'UnprocessableEntity',
  429: 'RateLimited',
  500: 'Internal',
  502: 'BadGateway',
  503: 'NotConfigured',
};

/** Statuses Node answers before any middleware (src/platform/http-server.ts), so before the key and its window. */
const BEFORE_THE_KEY = new Set([408, 431]);

function codesAt(status: number): ErrorCode[] {
  return ERROR_CODES.filter((code) => {
    const entry = ERROR_CATALOGUE[code];
    return entry.status === status || (entry.otherStatuses ?? []).includes(status);
  });
}

/**
 * An authenticated route refers to the shared component; a public one gets the same response inline, without the
 * rate-limit headers its answers do not carry.
 */
function errorResponse(status: number, authenticated: boolean): JsonObject {
  const name = ERROR_RESPONSES[status];
  if (!name) throw new Error(`OpenAPI: no error response for status ${status}`);
  return authenticated ? { $ref: `#/components/responses/${name}` } : errorResponseBody(status, false);
}

function errorResponseBody(status: number, authenticated: boolean): JsonObject {
  const codes = codesAt(status);
  // A 401 means no key was recognised, so there is no window to report; a 408 or 431 is answered before the key is read.
  const limited = authenticated && status !== 401 && !BEFORE_THE_KEY.has(status);
  const names = ['X-Request-Id', ...(limited ? RATE_LIMIT_HEADERS : []), ...(status === 429 ? ['Retry-After'] : [])];
  return {
    description: codes.map((code) => `\`${code}\`: ${ERROR_CATALOGUE[code].meaning}`).join('\n\n'),
    headers: Object.fromEntries(names.map((header) => [header, headerRef(header)])),
    content: {
      'application/json': {
        // The code is narrowed to the ones this status can carry, so a client (or a test) can rely on the pair.
        schema: { allOf: [{ $ref: `${SCHEMAS}Error` }, { properties: { error: { properties: { code: { enum: codes } } } } }] },
      },
    },
  };
}

function idempotencyKeyParameter(ttlHours: number): JsonObject {
  return {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      `Makes a retry safe. Scoped to the workspace or partner; the first answer (success or 4xx) to a key is replayed, ` +
      `with \`Idempotent-Replayed: true\`, for ${hours(ttlHours)} to a request with the same method, path and body. ` +
      'The same key with another request is 409 `conflict`; a duplicate arriving while the first runs waits for its ' +
      'answer (409 after 10 s). A 5xx is not kept, so a retry runs again.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' },
  };
}

/** The one place the scope names are published: prose for people, `x-scopes` for tools. */
function bearerScheme(): JsonObject {
  const scopes = Object.fromEntries(ALL_SCOPES.map((scope) => [scope, scopeMeaning(scope)]));
  const table = ALL_SCOPES.map((scope) => `| \`${scope}\` | ${scopeMeaning(scope)} |`).join('\n');
  return {
    type: 'http',
    scheme: 'bearer',
    description: [
      'API keys, sent as `Authorization: Bearer <key>`. Workspace keys start with ' +
        `\`${KEY_PREFIX.workspace}\` and act inside one workspace; partner keys start with \`${KEY_PREFIX.partner}\` ` +
        "and act across the partner's business. Each operation names the key kind it needs in `x-key-kind` " +
        '(`any`: either) and its scope in `x-required-scope` (null: any valid key).',
      `Every scope a key can hold:\n\n| scope | grants |\n|---|---|\n${table}`,
    ].join('\n\n'),
    'x-scopes': scopes,
  };
}

function scopeMeaning(scope: Scope): string {
  const [area, access] = scope.split(':') as [ScopeArea, 'read' | 'write'];
  return `${access === 'read' ? 'Read' : 'Write'} access to ${SCOPE_AREAS[area]}`;
}

function hours(n: number): string {
  return `${n} hour${n === 1 ? '' : 's'}`;
}

function apiDescription(idempotencyTtlHours: number): string {
  const errorRows = ERROR_CODES.map((code) => {
    const { status, otherStatuses = [], meaning } = ERROR_CATALOGUE[code];
    return `| \`${code}\` | ${[status, ...otherStatuses].join(', ')} | ${meaning} |`;
  }).join('\n');
  return `Links, analytics, domains and webhooks for workspaces; client workspaces, plans and billing for partners.

## Authentication
Every request except \`GET /openapi.json\` carries \`Authorization: Bearer <key>\`: a workspace key (\`${KEY_PREFIX.workspace}…\`) \
or a partner key (\`${KEY_PREFIX.partner}…\`); the scopes are listed in the \`bearerAuth\` security scheme. A missing, \
unknown, revoked or expired key is 401 \`unauthorized\`; a key of the wrong kind 403 \`forbidden\`; a key without the \
operation's scope 403 \`insufficient_scope\`. A resource of another tenant is 404 \`not_found\`, never 403.

## Errors
Every error answers \`{ "error": { "code", "message", "doc_url", "details"? } }\` (schema \`Error\`). Clients branch on \
\`code\`: messages may change, codes never do; \`doc_url\` points to the code's documentation. A method the path does \
not support is 405 \`invalid_request\` with \`Allow\`; a body over the size limit is 413 \`invalid_request\`; a JSON body \
nesting objects and arrays deeper than ${MAX_JSON_DEPTH} levels (the outermost counts as one) is 400 \`invalid_request\`. A request \
head (request line and headers) over 16 KiB is 431, a request not received within the request timeout (30 s by \
default) 408, and one that is not HTTP 400, all \`invalid_request\` in the same envelope with \`X-Request-Id\`: \
answered before the key is read, they carry no rate-limit headers. The same table is in \`x-error-codes\`.

| code | HTTP | meaning |
|---|---|---|
${errorRows}

## Values
Strings are Unicode text, and lengths count Unicode characters (an emoji is one): a string holding a lone UTF-16 \
surrogate (\`"\\ud800"\` in JSON) is 422 \`validation_failed\` naming the field. Query values are text: an integer is \
plain decimal digits with an optional \`-\` (no leading zero, blanks, exponent or hex), a boolean \`true\` or \`false\`. A request \
field with a \`default\` may be left out; the default then applies.

## Rate limits
Each key has a sliding one-minute window, shared by every replica; rejected requests count too. Every answer to a \
recognised key carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`; beyond the limit \
the answer is 429 \`rate_limited\` with \`Retry-After\`.

## Idempotency
Any POST, PUT, PATCH or DELETE may carry \`Idempotency-Key\` (1 to 255 printable ASCII characters), kept for \
${hours(idempotencyTtlHours)}: a retry with the same key, method, path and body replays the first answer.

## Versioning
The version is the path prefix \`/v1\`. Version 1 is frozen: responses may gain fields, behaviour does not change. \
Cursors are opaque: pass \`next_cursor\` back unchanged. Every answer carries \`X-Request-Id\`.`;
}

/**
 * TypeBox schemas as JSON Schema: each schema with a `$id` becomes `components.schemas.<id>` and is replaced by a
 * `$ref` wherever it occurs, nested ones included; the rest is inlined. Only string keys are copied, which drops
 * TypeBox's symbol keys, and the input is never mutated (the same objects drive the live validators).
 */
class SchemaComponents {
  private readonly components = new Map<string, JsonObject>();
  private readonly inProgress = new Set<string>();

  convert(schema: unknown): Json {
    if (Array.isArray(schema)) return schema.map((item) => this.convert(item));
    if (typeof schema !== 'object' || schema === null) return jsonValue(schema);
    const node = schema as Record<string, unknown>;
    if (typeof node.$id !== 'string') return this.body(node);
    this.register(node.$id, node);
    return { $ref: SCHEMAS + node.$id };
  }

  /**
   * A request body, inlined whole under the operation's `requestBody` (no component), and with every property that
   * has a `default` left out of `required`: the validator fills such a field in, so a client may omit it. Both matter
   * to code generators: openapi-typescript, with its default options, types a property that has a default as
   * required, except under a `requestBody`; a shared component is not under one.
   */
  request(schema: unknown, isPropertyMap = false): Json {
    if (Array.isArray(schema)) return schema.map((item) => this.request(item));
    if (typeof schema !== 'object' || schema === null) return jsonValue(schema);
    const node = schema as Record<string, unknown>;
    const out: JsonObject = {};
    for (const key of Object.keys(node)) {
      const value = node[key];
      if ((key === '$id' && !isPropertyMap) || value === undefined) continue;
      if (key === '$ref' && !isPropertyMap && typeof value === 'string' && !value.startsWith('#')) out.$ref = SCHEMAS + value;
      else if (DATA_KEYWORDS.has(key) && !isPropertyMap) out[key] = JSON.parse(JSON.stringify(value)) as Json;
      else out[key] = this.request(value, key === 'properties' && !isPropertyMap);
    }
    const properties = out.properties;
    if (!isPropertyMap && Array.isArray(out.required) && properties !== null && typeof properties === 'object' && !Array.isArray(properties)) {
      const required = out.required.filter((name) => {
        const property = properties[name as string];
        return !(property !== null && typeof property === 'object' && !Array.isArray(property) && 'default' in property);
      });
      if (required.length > 0) out.required = required;
      else delete out.required;
    }
    return out;
  }

  /** Components by name: the output does not depend on the order routes mention them in. */
  sorted(): Record<string, JsonObject> {
    return Object.fromEntries([...this.components.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  private register(id: string, node: Record<string, unknown>): void {
    if (!COMPONENT_NAME.test(id)) throw new Error(`OpenAPI: the schema $id "${id}" is not a valid component name`);
    // A recursive schema refers to itself by $id: the $ref already written is all that is needed.
    if (this.inProgress.has(id)) return;
    this.inProgress.add(id);
    const converted = this.body(node);
    this.inProgress.delete(id);
    const known = this.components.get(id);
    if (known && JSON.stringify(known) !== JSON.stringify(converted)) {
      throw new Error(`OpenAPI: two different schemas share the $id "${id}"`);
    }
    this.components.set(id, converted);
  }

  private body(node: Record<string, unknown>): JsonObject {
    const out: JsonObject = {};
    for (const key of Object.keys(node)) {
      const value = node[key];
      if (key === '$id' || value === undefined) continue;
      if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) {
        // TypeBox's Type.Ref names the target by its $id, which lives under components here.
        out.$ref = SCHEMAS + value;
      } else {
        out[key] = DATA_KEYWORDS.has(key) ? (JSON.parse(JSON.stringify(value)) as Json) : this.convert(value);
      }
    }
    return out;
  }
}

function jsonValue(value: unknown): Json {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  throw new Error(`OpenAPI: a schema holds a ${typeof value} value JSON cannot represent`);
}
