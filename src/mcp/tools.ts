// The tool server's tools are the REST API's own operations: each tool is a route of the route table, its input
// schema built from that route's TypeBox schemas, its call validated by the route's validators and answered by the
// route's handler under the same key, kind and scope checks. Nothing about an operation is declared twice, and an
// endpoint added to the API (analytics, partner billing, ...) is a tool as soon as it is in the table.
import { Readable } from 'node:stream';
import type { TSchema } from '@sinclair/typebox';
import type { ApiContext } from '../http/context.ts';
import type { RouteSpec } from '../http/route-table.ts';
import { authorize } from '../http/auth.ts';
import { bodyValidator, queryValidator, type Validator } from '../http/validation.ts';
import { ValidationError } from '../platform/errors.ts';
import type { Principal } from '../tenancy/principal.ts';

/** What a tool call answers: JSON (also as structured content), or an image, or text. */
export type ToolOutput =
  | { kind: 'json'; status: number; value: unknown }
  | { kind: 'image'; status: number; mimeType: string; base64: string }
  | { kind: 'text'; status: number; mimeType: string; text: string };

export interface Tool {
  /** `linkplane_` + the operationId in snake_case: what tools/list shows. */
  name: string;
  /** The name before the prefix (`create_link`), still accepted by tools/call for hosts configured with it. */
  legacyName: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The JSON Schema of the structured content of a successful call, when the route declares one (an object). */
  outputSchema?: Record<string, unknown>;
  route: RouteSpec;
  readOnly: boolean;
  call(principal: Principal, args: Record<string, unknown>): Promise<ToolOutput>;
}

/** Streamed answers (CSV exports) are read into the tool result up to this size. */
const MAX_TEXT_BYTES = 1_048_576;

/** Tool names carry the product's prefix, so that they do not clash with another server's in the same host. */
export const TOOL_PREFIX = 'linkplane_';

/** `createLink` → `create_link`. */
export function snakeName(operationId: string): string {
  return operationId.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** `createLink` → `linkplane_create_link`. */
export function toolName(operationId: string): string {
  return TOOL_PREFIX + snakeName(operationId);
}

/** A JSON-only copy: no TypeBox symbols, no `$id` (a tool schema stands alone). */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema, (key, value: unknown) => (key === '$id' ? undefined : value))) as Record<string, unknown>;
}

function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
}

/**
 * The input shape: a route with only a JSON object body, or only a query, takes it as it is; otherwise path
 * parameters are top-level strings beside `query` and `body`.
 */
interface InputShape {
  schema: Record<string, unknown>;
  /** Whether the arguments are the query or body themselves (error paths then name their fields directly). */
  flat: boolean;
  split: (args: Record<string, unknown>) => { params: Record<string, unknown>; query: unknown; body: unknown };
}

function inputShape(route: RouteSpec): InputShape {
  const params = pathParams(route.path);
  const body = route.body ? plain(route.body) : null;
  const query = route.query ? plain(route.query) : null;
  if (params.length === 0 && query === null && body !== null && body.type === 'object') {
    return { schema: body, flat: true, split: (args) => ({ params: {}, query: undefined, body: args }) };
  }
  if (params.length === 0 && body === null && query !== null) {
    return { schema: query, flat: true, split: (args) => ({ params: {}, query: args, body: undefined }) };
  }
  const properties: Record<string, unknown> = {};
  for (const p of params) properties[p] = { type: 'string', minLength: 1, maxLength: 200, description: `The ${p} of the ${route.path.split('/')[1]} path segment` };
  if (query !== null) properties.query = query;
  if (body !== null) properties.body = body;
  const required = [...params, ...(body !== null ? ['body'] : [])];
  return {
    schema: { type: 'object', properties, required, additionalProperties: false },
    flat: false,
    split: (args) => ({ params: Object.fromEntries(params.map((p) => [p, args[p]])), query: args.query ?? {}, body: args.body }),
  };
}

/**
 * The output schema: the route's 2xx JSON response schema, when it declares one and every 2xx answer has one (a
 * tool that declares an output schema must answer structured content that matches it). MCP requires an object at
 * the root; a route with several distinct 2xx schemas gets their `anyOf` under that object.
 */
function outputSchemaOf(route: RouteSpec): Record<string, unknown> | undefined {
  const successes = route.responses.filter((r) => r.status >= 200 && r.status < 300);
  if (successes.length === 0) return undefined;
  if (successes.some((r) => !r.schema || (r.contentType !== undefined && r.contentType !== 'application/json'))) return undefined;
  const schemas = [...new Map(successes.map((r) => [JSON.stringify(plain(r.schema!)), plain(r.schema!)])).values()];
  if (schemas.some((s) => s.type !== 'object')) return undefined;
  return schemas.length === 1 ? schemas[0] : { type: 'object', anyOf: schemas };
}

/** The tools of a route table: every keyed JSON operation, minus the ones listed in `exclude` (operationIds). */
export function toolsOf(routes: readonly RouteSpec[], exclude: ReadonlySet<string>): Tool[] {
  const tools: Tool[] = [];
  for (const route of routes) {
    if (route.auth === null || exclude.has(route.operationId)) continue;
    const shape = inputShape(route);
    const params = pathParams(route.path);
    const validateQuery: Validator<unknown> | null = route.query ? queryValidator(route.query) : null;
    const validateBody: Validator<unknown> | null = route.body ? bodyValidator(route.body) : null;
    const readOnly = route.method === 'GET';
    const requirement = route.auth;
    const outputSchema = outputSchemaOf(route);
    tools.push({
      name: toolName(route.operationId),
      legacyName: snakeName(route.operationId),
      title: route.summary,
      description: `${route.summary}.${route.description ? ` ${route.description}` : ''} (REST: ${route.method} /v1${route.path.replace(/:([A-Za-z_]+)/g, '{$1}')}; scope ${requirement.scope ?? 'none'}.)`,
      inputSchema: shape.schema,
      ...(outputSchema ? { outputSchema } : {}),
      route,
      readOnly,
      async call(principal, args) {
        authorize(principal, requirement);
        const split = shape.split(args ?? {});
        const bad = params.filter((p) => typeof split.params[p] !== 'string' || (split.params[p]).length === 0);
        if (bad.length > 0) throw new ValidationError(bad.map((p) => ({ path: p, message: 'is required (a string)' })));
        if (!validateQuery && split.query !== undefined && Object.keys(split.query as object).length > 0) {
          throw new ValidationError([{ path: 'query', message: 'is not an allowed property' }]);
        }
        const query = validateQuery ? validateQuery({ ...(split.query as object) }, shape.flat ? '' : 'query') : {};
        const body = validateBody ? validateBody(split.body, shape.flat ? '' : 'body') : undefined;
        const ctx = new ToolContext(principal, split.params as Record<string, string>);
        await route.handler(ctx as unknown as ApiContext, { query: query, body: body, params: split.params as Record<string, string> });
        return ctx.output();
      },
    });
  }
  return tools;
}

/** The few members of a Koa context the route handlers use, for a call that arrives as a tool call. */
class ToolContext {
  readonly state: { requestId: string; principal: Principal };
  readonly params: Record<string, string>;
  status = 200;
  body: unknown = undefined;
  type = '';
  readonly fresh = false;
  private readonly headers = new Map<string, string>();

  constructor(principal: Principal, params: Record<string, string>) {
    this.state = { requestId: 'mcp', principal };
    this.params = params;
  }

  set(name: string | Record<string, string>, value?: string): void {
    if (typeof name === 'string') this.headers.set(name.toLowerCase(), value ?? '');
    else for (const [k, v] of Object.entries(name)) this.headers.set(k.toLowerCase(), v);
  }

  /** No conditional request headers: a tool always gets the full answer. */
  get(): string {
    return '';
  }

  async output(): Promise<ToolOutput> {
    const mimeType = (this.type || this.headers.get('content-type') || 'application/json').split(';')[0]!.trim();
    const body = this.body;
    if (body === undefined || body === null) return { kind: 'json', status: this.status, value: null };
    // A handler may answer JSON it serialized itself (GET /links renders stored links as text): a tool still gets
    // the value, so that it carries structured content like every other JSON answer.
    if (isJson(mimeType) && (typeof body === 'string' || Buffer.isBuffer(body))) {
      return { kind: 'json', status: this.status, value: JSON.parse(body.toString()) as unknown };
    }
    if (Buffer.isBuffer(body)) {
      return mimeType.startsWith('image/') && mimeType !== 'image/svg+xml'
        ? { kind: 'image', status: this.status, mimeType, base64: body.toString('base64') }
        : { kind: 'text', status: this.status, mimeType, text: body.toString('utf8') };
    }
    if (typeof body === 'string') return { kind: 'text', status: this.status, mimeType, text: body };
    if (body instanceof Readable) return { kind: 'text', status: this.status, mimeType, text: await readBounded(body) };
    return { kind: 'json', status: this.status, value: body };
  }
}

function isJson(mimeType: string): boolean {
  return mimeType === 'application/json' || mimeType.endsWith('+json');
}

async function readBounded(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    chunks.push(buffer);
    size += buffer.length;
    if (size >= MAX_TEXT_BYTES) {
      stream.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_TEXT_BYTES).toString('utf8');
}
