// The tool server for AI assistants (spec 1, tag Tools): Model Context Protocol over Streamable HTTP at /v1/mcp,
// stateless (every POST stands alone: no session, nothing kept between requests, so any api replica answers), with
// the official SDK's low-level Server, which publishes the tools' JSON Schemas as they are. The HTTP request has
// passed the same door as every /v1 request: the bearer key (401), its rate limit (429); each tool call is then
// held to its operation's key kind and scope, exactly as the REST call would be.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { route, type RouteSpec } from '../http/route-table.ts';
import { authorize, principalOf } from '../http/auth.ts';
import { bodyOf } from '../http/body.ts';
import { AppError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { Principal } from '../keys/key.service.ts';
import { toolsOf, type Tool, type ToolOutput } from './tools.ts';

export const MCP_PATH = '/mcp';
/** Operations that are not tools: the tool server itself, and those that make no sense to an assistant. */
const NOT_TOOLS = new Set(['mcp', 'getOpenApi', 'rotateWebhookSecret']);

const connect = { kind: 'any', scope: 'tools:read' } as const;
const change = { kind: 'any', scope: 'tools:write' } as const;

/**
 * The /v1/mcp route. `routes` is the finished route table (read on the first request, like the OpenAPI document),
 * so every operation mounted beside this one is a tool.
 */
export function mcpRoutes(routes: () => readonly RouteSpec[], options: { logger: Logger; version: string }): RouteSpec[] {
  let tools: Tool[] | null = null;
  const toolTable = () => (tools ??= toolsOf(routes(), NOT_TOOLS));

  function serverFor(principal: Principal): Server {
    const server = new Server({ name: 'linkplane', version: options.version }, { capabilities: { tools: {} } });
    // A key sees the tools of its kind (workspace or partner); scopes are checked on the call, which names the missing one.
    const usable = () => toolTable().filter((t) => t.route.auth!.kind === 'any' || t.route.auth!.kind === principal.kind);
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: usable().map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema as { type: 'object' },
        annotations: { readOnlyHint: t.readOnly, destructiveHint: t.route.method === 'DELETE', idempotentHint: t.route.method !== 'POST' },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
      const tool = usable().find((t) => t.name === request.params.name);
      if (!tool) return failure('not_found', `There is no tool "${request.params.name}" for this key.`);
      try {
        if (!tool.readOnly) authorize(principal, change);
        return success(await tool.call(principal, request.params.arguments ?? {}));
      } catch (error) {
        if (error instanceof AppError) return failure(error.code, error.message, error.details);
        options.logger.error({ err: error, tool: tool.name }, 'tool call failed');
        return failure('internal', 'An unexpected error occurred.');
      }
    });
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
        'Every keyed operation of this document is a tool named after its operationId in snake_case (`createLink` → `create_link`), ' +
        'with the operation’s own request schemas as its input schema: the body itself, or the query itself, or path parameters ' +
        'beside `query` and `body`. Tool results carry the JSON answer as text and as structured content; QR codes as images.',
      auth: connect,
      responses: [{ status: 200, description: 'The JSON-RPC response', contentType: 'application/json' }],
      handler: async (ctx) => {
        const principal = principalOf(ctx);
        const server = serverFor(principal);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        ctx.res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        // The transport writes the answer itself; Koa stays out of it (the status is kept for the request log).
        ctx.respond = false;
        await transport.handleRequest(ctx.req, ctx.res, bodyOf(ctx));
        ctx.status = ctx.res.statusCode;
      },
    }),
  ];
}

function success(output: ToolOutput): CallToolResult {
  switch (output.kind) {
    case 'json': {
      const value = output.value ?? { status: output.status };
      const structured = typeof value === 'object' && !Array.isArray(value) ? { structuredContent: value as Record<string, unknown> } : {};
      return { content: [{ type: 'text', text: JSON.stringify(value) }], ...structured };
    }
    case 'image':
      return { content: [{ type: 'image', data: output.base64, mimeType: output.mimeType }] };
    case 'text':
      return { content: [{ type: 'text', text: output.text }] };
  }
}

function failure(code: string, message: string, details?: Array<{ path: string; message: string }>): CallToolResult {
  const error = { code, message, ...(details ? { details } : {}) };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error }) }], structuredContent: { error } };
}
