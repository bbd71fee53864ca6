// The tool server for AI assistants (spec 1, tag Tools): Model Context Protocol over Streamable HTTP at /v1/mcp,
// stateless (every POST stands alone: no session, nothing kept between requests, so any api replica answers), with
// the official SDK's low-level Server, which publishes the tools' JSON Schemas as they are. The HTTP request has
// passed the same door as every /v1 request: the bearer key (401), its rate limit (429); each tool call is then
// held to its operation's key kind and scope, exactly as the REST call would be. The transport answers with a web
// Response that is read before anything is written: a request it refuses (Accept, Content-Type, not JSON-RPC,
// protocol version) is answered in the API's error envelope like any other, and JSON-RPC answers pass unchanged.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ErrorCode, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { route, type RouteSpec } from '../http/route-table.ts';
import { authorize, principalOf, type Requirement } from '../http/auth.ts';
import { bodyOf } from '../http/body.ts';
import type { ChargeMore } from '../http/gate.ts';
import { AppError, ConflictError, ForbiddenError, InvalidRequestError, NotFoundError, ProtocolRefusalError } from '../platform/errors.ts';
import type { ApiContext } from '../http/context.ts';
import type { Logger } from '../platform/logger.ts';
import type { Principal } from '../tenancy/principal.ts';
import { toolsOf, type Tool, type ToolOutput } from './tools.ts';

export const MCP_PATH = '/mcp';
/**
 * Operations that are not tools: the tool server itself, those that make no sense to an assistant, and revoking the
 * authorisations that assistants themselves run on (a person does that on the keys page).
 */
const NOT_TOOLS = new Set(['mcp', 'getOpenApi', 'rotateWebhookSecret', 'revokeAuthorizedApp']);

const connect = { kind: 'any', scope: 'tools:read' } as const;
const change = { kind: 'any', scope: 'tools:write' } as const;

/**
 * The /v1/mcp route. `routes` is the finished route table (read on the first request, like the OpenAPI document),
 * so every operation mounted beside this one is a tool.
 */
export function mcpRoutes(routes: () => readonly RouteSpec[], options: { logger: Logger; version: string; chargeMore: ChargeMore }): RouteSpec[] {
  let tools: Tool[] | null = null;
  const toolTable = () => (tools ??= toolsOf(routes(), NOT_TOOLS));

  function serverFor(principal: Principal): Server {
    const server = new Server({ name: 'linkplane', version: options.version }, { capabilities: { tools: {} } });
    // A key can call the tools of its kind (workspace or partner); a call it lacks a scope for is refused naming the
    // missing scope. It is shown only the tools it may call: its kind, the operation's scope, and tools:write for a
    // tool that changes something (a read-only key sees no write tool).
    const usable = () => toolTable().filter((t) => t.route.auth!.kind === 'any' || t.route.auth!.kind === principal.kind);
    const permits = (tool: Tool) => allows(principal, tool.route.auth!) && (tool.readOnly || allows(principal, change));
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: usable()
        .filter(permits)
        .map((t) => ({
          name: t.name,
          title: t.title,
          description: t.description,
          inputSchema: t.inputSchema as { type: 'object' },
          ...(t.outputSchema ? { outputSchema: t.outputSchema as { type: 'object' } } : {}),
          annotations: { readOnlyHint: t.readOnly, destructiveHint: t.route.method === 'DELETE', idempotentHint: t.route.method !== 'POST' },
        })),
    }));
    // tools/call is answered by the fallback handler rather than a registered one: the SDK checks a registered
    // handler's parameters with its own schema first and answers a mismatch with the schema library's dump
    // (-32603 or -32602); here bad parameters and unknown tools are -32602 invalid params in words (JSON-RPC, MCP).
    server.fallbackRequestHandler = async (request): Promise<CallToolResult> => {
      if (request.method !== 'tools/call') throw new RpcError(METHOD_NOT_FOUND, 'Method not found');
      const { name, args } = toolCallParams(request.params);
      // The names before the `linkplane_` prefix (`create_link`) are still answered, for hosts configured with them; only the prefixed ones are listed.
      const tool = usable().find((t) => t.name === name) ?? usable().find((t) => t.legacyName === name);
      if (!tool) throw new RpcError(INVALID_PARAMS, `There is no tool "${name}" for this key; tools/list names them.`);
      try {
        if (!tool.readOnly) authorize(principal, change);
        return success(await tool.call(principal, args), tool.outputSchema !== undefined);
      } catch (error) {
        if (error instanceof AppError) return failure(error.code, error.message, error.details);
        options.logger.error({ err: error, tool: tool.name }, 'tool call failed');
        return failure('internal', 'An unexpected error occurred.');
      }
    };
    return server;
  }

  return [
    route({
      method: 'POST',
      path: MCP_PATH,
      operationId: 'mcp',
      tag: 'Tools',
      summary: 'Model Context Protocol tool server (Streamable HTTP, stateless): the API’s operations as tools for AI assistants',
      description:
        'JSON-RPC 2.0 messages of the Model Context Protocol (`initialize`, `tools/list`, `tools/call`, ...) POSTed with ' +
        '`Accept: application/json, text/event-stream`; answers are JSON. Stateless: no `Mcp-Session-Id`, GET and DELETE are 405. ' +
        'The key needs `tools:read`, and `tools:write` to call a tool that changes something; each tool then needs the scope of its ' +
        'operation, and a refusal is a tool error carrying the API error code (`insufficient_scope`, `validation_failed`, ...). ' +
        'Every keyed operation of this document is a tool named `linkplane_` + its operationId in snake_case (`createLink` → ' +
        '`linkplane_create_link`; the unprefixed name is still accepted by `tools/call`, not listed), with the operation’s own ' +
        'request schemas as its input schema: the body itself, or the query itself, or path parameters beside `query` and `body`. ' +
        '`tools/list` shows only the tools the key’s kind and scopes allow (a tool that changes something only with `tools:write`). ' +
        'A tool whose operation declares a JSON object answer publishes that schema as its `outputSchema`; results carry the JSON ' +
        'answer as text and, when it is an object, as `structuredContent`; QR codes as images. A tool error carries the error ' +
        'envelope as text. ' +
        'A request the transport refuses is answered in the error envelope like any other: 406 `invalid_request` without that ' +
        'Accept, 400 `invalid_request` for a body that is not a JSON-RPC message or an unsupported `MCP-Protocol-Version`. ' +
        'A `tools/call` whose `params.name` is missing or names no tool of the key, or whose `arguments` is not an object, ' +
        'is the JSON-RPC error -32602 (invalid params). A JSON-RPC batch (protocol revisions up to 2025-03-26) counts each ' +
        '`tools/call` in it against the key’s rate limit like the REST call it stands for; a batch the window cannot hold is ' +
        '429 and none of it runs. With `Idempotency-Key`, a repeat is answered the first JSON-RPC answer again.',
      auth: connect,
      alsoChecks: [change],
      errorStatuses: [406],
      responses: [
        { status: 200, description: 'The JSON-RPC response (an array of them for a batch)', contentType: 'application/json' },
        { status: 202, description: 'Accepted, no body: the message was a notification or a response, or a batch of only those, or an empty batch' },
      ],
      handler: async (ctx) => {
        const principal = principalOf(ctx);
        const body = bodyOf(ctx);
        if (body === undefined) throw new InvalidRequestError('The request body must be a JSON-RPC 2.0 message of the Model Context Protocol.');
        // The door counted this request once; each further tool call of a batch counts as the REST call it stands for.
        await options.chargeMore(ctx, toolCallsIn(body) - 1);
        const server = serverFor(principal);
        const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        try {
          await server.connect(transport);
          const answer = await transport.handleRequest(webRequestOf(ctx), { parsedBody: body });
          if (answer.status >= 400) throw await refusalOf(answer);
          // JSON answers only (enableJsonResponse): the body is complete once the transport has answered. A
          // notification's 202 has none, and keeps none (Koa would write the status text).
          const text = await answer.text();
          if (text) ctx.body = text;
          else ctx.body = null;
          ctx.status = answer.status;
          answer.headers.forEach((value, name) => ctx.set(name, value));
        } finally {
          await transport.close();
          await server.close();
        }
      },
    }),
  ];
}

/** The request as the transport reads it: method, URL and headers; the body is the one the API parsed. */
function webRequestOf(ctx: ApiContext): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(new URL(ctx.originalUrl, 'http://localhost'), { method: ctx.method, headers });
}

/**
 * The error the API answers for a status the transport refused with (its body is a JSON-RPC error whose message
 * says why): a missing session is `not_found`, a conflict `conflict`, a refused origin `forbidden`, anything else
 * the client sent wrong `invalid_request` with the transport's own status (406, 415, 400, ...); a 5xx is ours.
 */
export async function refusalOf(answer: Response): Promise<Error> {
  const message = await answer
    .json()
    .then((body: unknown) => (body as { error?: { message?: unknown } }).error?.message)
    .catch(() => undefined);
  const why = typeof message === 'string' && message ? message : `The tool server refused the request (${answer.status}).`;
  if (answer.status >= 500) return new Error(`MCP transport answered ${answer.status}: ${why}`);
  if (answer.status === 404) return new NotFoundError('MCP session');
  if (answer.status === 409) return new ConflictError(why);
  if (answer.status === 403) return new ForbiddenError(why);
  return new ProtocolRefusalError(answer.status, why);
}

/** Whether the key meets a requirement: the same check a call is held to. */
function allows(principal: Principal, requirement: Requirement): boolean {
  try {
    authorize(principal, requirement);
    return true;
  } catch (error) {
    if (error instanceof AppError) return false;
    throw error;
  }
}

/**
 * A tool's result: JSON as text and, when it is an object, as structured content too (MCP 2025-06-18), which is what
 * a tool with an output schema must answer; an image, or text.
 */
function success(output: ToolOutput, typed = false): CallToolResult {
  switch (output.kind) {
    case 'json': {
      const value = output.value ?? { status: output.status };
      const isObject = typeof value === 'object' && !Array.isArray(value);
      if (typed && !isObject) throw new Error('A tool with an output schema answered JSON that is not an object.');
      const structured = isObject ? { structuredContent: value as Record<string, unknown> } : {};
      return { content: [{ type: 'text', text: JSON.stringify(value) }], ...structured };
    }
    case 'image':
      return { content: [{ type: 'image', data: output.base64, mimeType: output.mimeType }] };
    case 'text':
      return { content: [{ type: 'text', text: output.text }] };
  }
}

/**
 * A refused call: the API's error envelope as text. No structured content: that is the success shape of the tool's
 * output schema, and clients (the official SDK's among them) check any structured content against it, errors too.
 */
function failure(code: string, message: string, details?: Array<{ path: string; message: string }>): CallToolResult {
  const error = { code, message, ...(details ? { details } : {}) };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error }) }] };
}

const METHOD_NOT_FOUND: number = ErrorCode.MethodNotFound;
const INVALID_PARAMS: number = ErrorCode.InvalidParams;

/** A JSON-RPC error as the SDK answers it: its code and message as they are. */
class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** The tool name and its arguments (an object, or absent for none) of a tools/call, or -32602 saying what is wrong. */
function toolCallParams(params: unknown): { name: string; args: Record<string, unknown> } {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new RpcError(INVALID_PARAMS, 'tools/call needs params: an object with the tool name and its arguments.');
  }
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || name === '') throw new RpcError(INVALID_PARAMS, 'tools/call needs params.name, the name of a tool.');
  if (args === undefined) return { name, args: {} };
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new RpcError(INVALID_PARAMS, 'params.arguments must be an object of the tool’s arguments, or left out.');
  }
  return { name, args: args as Record<string, unknown> };
}

/** How many tools/call requests a JSON-RPC message or batch carries (notifications and other methods count none). */
function toolCallsIn(body: unknown): number {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  return messages.filter((m) => typeof m === 'object' && m !== null && 'id' in m && (m as { method?: unknown }).method === 'tools/call').length;
}
