// The tool server over real HTTP, driven by the official SDK's own client: tools listed per key kind with the REST
// operations' schemas, every advertised tool family called, scope refusals, and the door (401 without a key).
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { MongoClient } from 'mongodb';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import type { Scope } from '../../src/tenancy/scopes.ts';
import { LinkCreateSchema, LinkListSchema, LinkSchema } from '../../src/links/link.schemas.ts';
import { ConversionCreateSchema } from '../../src/conversions/conversion.schemas.ts';
import { ClickIds } from '../../src/clicks/click-id.ts';
import { toClickDoc } from '../../src/clicks/click.store.ts';

const SECRET = 'mcp-test-secret-key-0123456789abcdefghij';
type Json = Record<string, unknown>;

/** The schema as JSON, without `$id`: what a tool publishes. */
const published = (schema: unknown) => JSON.parse(JSON.stringify(schema, (k, v: unknown) => (k === '$id' ? undefined : v))) as Json;

/** The SDK client's own validator (Ajv), counting the structured results it checks against the tools' output schemas. */
class CountingValidator implements jsonSchemaValidator {
  private readonly ajv = new AjvJsonSchemaValidator();
  checked = 0;
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const validate = this.ajv.getValidator<T>(schema);
    return (input) => {
      this.checked += 1;
      return validate(input);
    };
  }
}

describe('MCP tool server (/v1/mcp, official SDK client over HTTP)', function () {
  this.timeout(30_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let db: MongoClient;
  let workspaceId: string;
  let key: string;
  let partnerKey: string;
  const clients: Client[] = [];

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo, { SECRET_KEY: SECRET }));
    tenants = await Tenants.open(mongo);
    const partnerId = await tenants.aPartner();
    const ws = await tenants.aWorkspace({ plan_id: 'business', partner_id: partnerId });
    workspaceId = ws._id;
    key = (await tenants.aWorkspaceKey(ws._id)).key;
    partnerKey = (await tenants.aPartnerKey(partnerId)).key;
    db = new MongoClient(mongo.uri);
    await db.connect();
  });

  after(async () => {
    for (const c of clients) await c.close();
    await db.close();
    await tenants.close();
    await api.stop();
    await mongo.stop();
  });

  const validator = new CountingValidator();

  /**
   * A connected client that has listed its tools, as hosts do: the SDK client then checks every structured result
   * against the tool's output schema, so each call below is held to it.
   */
  async function connect(bearer: string | null): Promise<Client> {
    const client = new Client({ name: 'linkplane-test', version: '1.0.0' }, { jsonSchemaValidator: validator });
    const headers: Record<string, string> = bearer === null ? {} : { Authorization: `Bearer ${bearer}` };
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/v1/mcp`), { requestInit: { headers } }));
    clients.push(client);
    await client.listTools();
    return client;
  }

  const call = async (client: Client, name: string, args: Json = {}): Promise<CallToolResult> => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const ok = (result: CallToolResult): Json => {
    expect(result.isError, JSON.stringify(result.content)).to.not.equal(true);
    return result.structuredContent as Json;
  };
  const refused = (result: CallToolResult, code: string): Json => {
    expect(result.isError).to.equal(true);
    // The error envelope as text only: structured content is the output schema's success shape.
    expect(result.structuredContent).to.equal(undefined);
    const { error } = JSON.parse((result.content[0] as { text: string }).text) as { error: Json };
    expect(error.code, JSON.stringify(error)).to.equal(code);
    return error;
  };
  const keyWith = async (scopes: Scope[]) => (await tenants.aWorkspaceKey(workspaceId, scopes)).key;

  it('lists the workspace tools with the REST operations’ own request schemas, and no partner tool', async () => {
    const client = await connect(key);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['linkplane_create_link', 'linkplane_get_link', 'linkplane_update_link', 'linkplane_list_links', 'linkplane_delete_link', 'linkplane_get_link_qr', 'linkplane_list_domains', 'linkplane_get_domain', 'linkplane_create_conversion', 'linkplane_list_conversions', 'linkplane_get_conversion', 'linkplane_list_reports', 'linkplane_resolve_report']) {
      expect(names).to.include(name);
    }
    expect(names.filter((n) => n.includes('partner'))).to.deep.equal([]);
    expect(names).to.not.include('mcp');
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('linkplane_create_link')!.inputSchema).to.deep.equal(published(LinkCreateSchema));
    expect(byName.get('linkplane_create_conversion')!.inputSchema).to.deep.equal(published(ConversionCreateSchema));
    const update = byName.get('linkplane_update_link')!.inputSchema as { properties: Json; required: string[] };
    expect(Object.keys(update.properties)).to.deep.equal(['id', 'body']);
    expect(update.required).to.deep.equal(['id', 'body']);
    expect(byName.get('linkplane_get_link')!.annotations).to.include({ readOnlyHint: true });
    expect(byName.get('linkplane_delete_link')!.annotations).to.include({ destructiveHint: true });
  });

  it('shows a key only the tools its scopes allow: a read-only key no write tool', async () => {
    const listed = async (bearer: string) => (await (await connect(bearer)).listTools()).tools;
    const full = await listed(key);
    expect(full.map((t) => t.name)).to.include.members(['linkplane_create_link', 'linkplane_update_link', 'linkplane_delete_link', 'linkplane_create_conversion']);
    expect(full.filter((t) => t.annotations?.readOnlyHint === false).length).to.be.greaterThan(10);
    expect(full.every((t) => t.name.startsWith('linkplane_'))).to.equal(true);
    const readOnly = await listed(await keyWith(['tools:read', 'links:read', 'conversions:read']));
    const names = readOnly.map((t) => t.name);
    expect(names).to.include.members(['linkplane_list_links', 'linkplane_get_link', 'linkplane_get_link_qr', 'linkplane_list_conversions']);
    expect(readOnly.filter((t) => t.annotations?.readOnlyHint !== true).map((t) => t.name)).to.deep.equal([]);
    expect(names).to.not.include.members(['linkplane_create_link', 'linkplane_list_domains', 'linkplane_list_reports']);
    // tools:write without links:write: the conversion tools it may write with, no link write tool.
    const writer = (await listed(await keyWith(['tools:read', 'tools:write', 'links:read', 'conversions:write']))).map((t) => t.name);
    expect(writer).to.include.members(['linkplane_list_links', 'linkplane_create_conversion']);
    expect(writer).to.not.include.members(['linkplane_create_link', 'linkplane_delete_link']);
  });

  it('answers the names without the prefix for hosts configured with them, without listing them', async () => {
    const client = await connect(key);
    expect((await client.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith('linkplane_'))).to.deep.equal([]);
    const created = ok(await call(client, 'create_link', { url: 'https://example.com/old-name' }));
    expect(ok(await call(client, 'get_link', { id: created.id as string }))).to.include({ url: 'https://example.com/old-name' });
    const partner = await connect(partnerKey);
    const unknown = await call(partner, 'create_link', { url: 'https://example.com/' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(unknown, 'an old name is still held to the key kind').to.have.property('code', -32602);
  });

  it('declares output schemas from the routes’ responses, and the SDK client validates the structured results against them', async () => {
    const client = await connect(key);
    const byName = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
    expect(byName.get('linkplane_create_link')!.outputSchema).to.deep.equal(published(LinkSchema));
    expect(byName.get('linkplane_get_link')!.outputSchema).to.deep.equal(published(LinkSchema));
    expect(byName.get('linkplane_list_links')!.outputSchema).to.deep.equal(published(LinkListSchema));
    // A QR code is an image or SVG, not JSON: no output schema.
    expect(byName.get('linkplane_get_link_qr')!.outputSchema).to.equal(undefined);
    const typed = [...byName.values()].filter((t) => t.outputSchema);
    expect(typed.length).to.be.greaterThan(20);
    for (const tool of typed) expect(tool.outputSchema!.type, tool.name).to.equal('object');
    // The schema says something: a link without its fields is refused by the same validator the client uses.
    const linkValidator = new AjvJsonSchemaValidator().getValidator(byName.get('linkplane_create_link')!.outputSchema!);
    expect(linkValidator({ id: 'lnk_x' }).valid).to.equal(false);

    const before = validator.checked;
    const created = ok(await call(client, 'linkplane_create_link', { url: 'https://example.com/typed', title: 'Typed' }));
    expect(JSON.parse(((await call(client, 'linkplane_get_link', { id: created.id as string })).content[0] as { text: string }).text)).to.deep.equal(
      ok(await call(client, 'linkplane_get_link', { id: created.id as string })),
    );
    ok(await call(client, 'linkplane_list_links', { limit: 5 }));
    ok(await call(client, 'linkplane_get_analytics_summary', { interval: '24h' }));
    expect(validator.checked - before, 'each structured result was checked by the SDK client').to.equal(5);
    expect(linkValidator(created).valid).to.equal(true);
    // A refusal is a tool error: no output schema applies to it.
    refused(await call(client, 'linkplane_create_link', { url: 'not a url' }), 'validation_failed');
    expect(validator.checked - before).to.equal(5);
  });

  it('creates, reads, updates, lists, renders and deletes a link through tools', async () => {
    const client = await connect(key);
    const created = ok(await call(client, 'linkplane_create_link', { url: 'https://example.com/from-mcp', title: 'From an assistant' }));
    expect(created.id).to.match(/^lnk_/);
    expect(ok(await call(client, 'linkplane_get_link', { id: created.id as string }))).to.include({ url: 'https://example.com/from-mcp', title: 'From an assistant' });
    expect(ok(await call(client, 'linkplane_update_link', { id: created.id as string, body: { title: 'Renamed' } })).title).to.equal('Renamed');
    const list = ok(await call(client, 'linkplane_list_links', { limit: 10 }));
    expect((list.data as Json[]).map((l) => l.id)).to.include(created.id);
    const png = await call(client, 'linkplane_get_link_qr', { id: created.id as string, query: { format: 'png', size: 128 } });
    const image = png.content[0] as { type: string; data: string; mimeType: string };
    expect(image).to.include({ type: 'image', mimeType: 'image/png' });
    expect(Buffer.from(image.data, 'base64').subarray(1, 4).toString()).to.equal('PNG');
    const svg = await call(client, 'linkplane_get_link_qr', { id: created.id as string, query: { format: 'svg' } });
    expect((svg.content[0] as { text: string }).text).to.contain('<svg');
    refused(await call(client, 'linkplane_create_link', { url: 'not a url' }), 'validation_failed');
    const invalid = refused(await call(client, 'linkplane_update_link', { id: created.id as string, body: { redirect_type: 303 } }), 'validation_failed');
    expect((invalid.details as Array<{ path: string }>).map((d) => d.path)).to.deep.equal(['body.redirect_type']);
    ok(await call(client, 'linkplane_delete_link', { id: created.id as string }));
    refused(await call(client, 'linkplane_get_link', { id: created.id as string }), 'not_found');
  });

  it('answers domains, conversions and reports tools', async () => {
    const client = await connect(key);
    const domains = ok(await call(client, 'linkplane_list_domains'));
    expect((domains.data as Json[]).length).to.be.greaterThan(0);
    const link = ok(await call(client, 'linkplane_create_link', { url: 'https://example.com/convert' }));
    // A click of that link, as the ingestion stores it.
    const clickId = new ClickIds(SECRET).issue(workspaceId);
    const click = toClickDoc({
      id: clickId,
      ts: new Date().toISOString(),
      workspace_id: workspaceId,
      link_id: link.id as string,
      domain_id: link.domain_id as string,
      domain: link.domain as string,
      slug: link.slug as string,
      outcome: 'redirect',
      destination: 'https://example.com/convert',
      decision: { step: 'url', ruleId: null, workspaceRule: false, targetingIndex: null, variantIndex: null, destinationId: null, rotatorFallback: false },
      visitor: {
        ip: null, device: 'desktop', os: 'linux', browser: null, language: null, country: 'FR', region: null, city: null, asn: null,
        visitor_type: 'human', verified_bot: false, bot_name: null, proxy_type: null, quality: 100, referer: null, visit: 'first', visitor_id: 'v_mcp',
      },
    });
    await db.db(mongo.dbName).collection('clicks').insertOne(click as unknown as Json);
    const conversion = ok(await call(client, 'linkplane_create_conversion', { click_id: clickId, type: 'order', amount: 1200, currency: 'EUR' }));
    expect(conversion).to.include({ link_id: link.id, amount: 1200 });
    refused(await call(client, 'linkplane_create_conversion', { click_id: `${clickId.slice(0, -2)}xx`, type: 'signup' }), 'invalid_click_id');
    expect((ok(await call(client, 'linkplane_list_conversions', { link_id: link.id as string })).data as Json[]).map((c) => c.id)).to.deep.equal([conversion.id]);
    expect(ok(await call(client, 'linkplane_get_conversion', { id: conversion.id as string })).id).to.equal(conversion.id);
    expect(ok(await call(client, 'linkplane_list_reports', { status: 'open' })).data).to.deep.equal([]);
    // Analytics: every endpoint of the API is a tool, with its query as the input.
    const summary = ok(await call(client, 'linkplane_get_analytics_summary', { interval: '24h', link_id: link.id as string }));
    expect(summary).to.include({ conversions: 1 });
    expect(ok(await call(client, 'linkplane_get_analytics_timeseries', { interval: '24h' })).data).to.be.an('array');
    expect(ok(await call(client, 'linkplane_get_analytics_breakdown', { interval: '24h', dimension: 'country' })).data).to.be.an('array');
    expect(ok(await call(client, 'linkplane_get_analytics_top_links', { interval: '24h' })).data).to.be.an('array');
    refused(await call(client, 'linkplane_get_analytics_breakdown', { interval: '24h', dimension: 'shoe_size' }), 'validation_failed');
  });

  it('lists partner tools to a partner key and answers them', async () => {
    const client = await connect(partnerKey);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).to.include('linkplane_list_partner_clients');
    expect(names).to.not.include('linkplane_create_link');
    const clientsPage = ok(await call(client, 'linkplane_list_partner_clients', {}));
    expect((clientsPage.data as Json[]).map((c) => c.id)).to.include(workspaceId);
    expect(names).to.include.members(['linkplane_list_partner_payments', 'linkplane_list_partner_payouts', 'linkplane_list_partner_plans']);
    const payments = ok(await call(client, 'linkplane_list_partner_payments', { limit: 10 }));
    expect(payments.data).to.deep.equal([]);
    refused(await call(client, 'linkplane_list_partner_payments', { limit: 1000 }), 'validation_failed');
    expect(names).to.include.members(['linkplane_get_partner_analytics_summary', 'linkplane_get_partner_analytics_timeseries', 'linkplane_get_partner_analytics_breakdown']);
    expect(ok(await call(client, 'linkplane_get_partner_analytics_summary', { interval: '24h' })).clicks).to.be.a('number');
    expect(ok(await call(client, 'linkplane_get_partner_analytics_breakdown', { interval: '24h', dimension: 'client' })).dimension).to.equal('client');
    refused(await call(client, 'linkplane_get_partner_analytics_breakdown', { interval: '24h', dimension: 'shoe_size' }), 'validation_failed');
  });

  it('holds each call to the operation’s scope, and changes to tools:write, naming the missing scope', async () => {
    const readOnly = await connect(await keyWith(['tools:read', 'links:read']));
    ok(await call(readOnly, 'linkplane_list_links'));
    expect(refused(await call(readOnly, 'linkplane_create_link', { url: 'https://example.com/' }), 'insufficient_scope').message).to.contain('tools:write');
    const toolsWrite = await connect(await keyWith(['tools:read', 'tools:write', 'links:read']));
    expect(refused(await call(toolsWrite, 'linkplane_create_link', { url: 'https://example.com/' }), 'insufficient_scope').message).to.contain('links:write');
    expect(refused(await call(toolsWrite, 'linkplane_list_conversions'), 'insufficient_scope').message).to.contain('conversions:read');
    // An unknown tool is a JSON-RPC invalid params error (-32602), not a tool result.
    const unknown = await call(toolsWrite, 'no_such_tool').then(
      () => null,
      (error: unknown) => error,
    );
    expect(unknown).to.have.property('code', -32602);
  });

  it('refuses the connection without a key (401) or without tools:read (403), in the API’s envelope', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    const post = (headers: Record<string, string>) =>
      fetch(`${api.url}/v1/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(init) });
    const anonymous = await post({});
    expect(anonymous.status).to.equal(401);
    expect(((await anonymous.json()) as { error: Json }).error.code).to.equal('unauthorized');
    const noTools = await post({ Authorization: `Bearer ${await keyWith(['links:read'])}` });
    expect(noTools.status).to.equal(403);
    expect(((await noTools.json()) as { error: Json }).error).to.include({ code: 'insufficient_scope' });
    let failed: unknown = null;
    try {
      await connect(null);
    } catch (error) {
      failed = error;
    }
    expect(String(failed)).to.match(/401|nauthori/);
    const rawOk = await post({ Authorization: `Bearer ${key}` });
    expect(rawOk.status).to.equal(200);
    expect(Number(rawOk.headers.get('x-ratelimit-remaining')), 'the key’s rate limit applies').to.be.lessThan(Number(rawOk.headers.get('x-ratelimit-limit')));
    expect(((await rawOk.json()) as { result: { serverInfo: Json } }).result.serverInfo).to.include({ name: 'linkplane' });
    expect((await fetch(`${api.url}/v1/mcp`, { headers: { Authorization: `Bearer ${key}` } })).status).to.equal(405);
  });

  it('answers the requests its transport refuses in the API’s error envelope, and JSON-RPC errors in JSON-RPC', async () => {
    const message = (id: number, method: string) => JSON.stringify({ jsonrpc: '2.0', id, method });
    const send = (init: { method?: string; headers?: Record<string, string>; body?: string }) =>
      fetch(`${api.url}/v1/mcp`, {
        method: init.method ?? 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...init.headers },
        ...(init.body === undefined ? {} : { body: init.body }),
      });
    const enveloped = async (response: Response, status: number, code: string): Promise<Json> => {
      const text = await response.text();
      expect(response.status, text).to.equal(status);
      expect(response.headers.get('content-type')).to.match(/^application\/json/);
      expect(response.headers.get('x-request-id')).to.be.a('string');
      const body = JSON.parse(text) as { error: Json };
      expect(Object.keys(body), text).to.deep.equal(['error']);
      expect(Object.keys(body.error).sort()).to.deep.equal(['code', 'doc_url', 'message']);
      expect(body.error.code).to.equal(code);
      expect(body.error.doc_url).to.match(new RegExp(`/docs/errors#${code}$`));
      return body.error;
    };
    const list = message(1, 'tools/list');
    expect((await enveloped(await send({ headers: { Accept: 'application/json' }, body: list }), 406, 'invalid_request')).message).to.contain('text/event-stream');
    await enveloped(await send({ headers: { Accept: '*/*' }, body: list }), 406, 'invalid_request');
    await enveloped(await send({ body: '{"jsonrpc": "2.0",' }), 400, 'invalid_request');
    expect((await enveloped(await send({}), 400, 'invalid_request')).message).to.contain('JSON-RPC');
    expect((await enveloped(await send({ body: '{"hello":"world"}' }), 400, 'invalid_request')).message).to.contain('JSON-RPC');
    await enveloped(await send({ body: '[{"jsonrpc":"2.0","id":1}]' }), 400, 'invalid_request');
    expect((await enveloped(await send({ headers: { 'MCP-Protocol-Version': '1999-01-01' }, body: list }), 400, 'invalid_request')).message).to.contain('1999-01-01');
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const refused = await send({ method, headers: { 'Mcp-Session-Id': 'never-issued' }, ...(method === 'PUT' ? { body: list } : {}) });
      expect(refused.headers.get('allow')).to.equal('POST');
      await enveloped(refused, 405, 'invalid_request');
    }
    // The protocol's own errors stay JSON-RPC answers (HTTP 200) for the client to read.
    const unknown = await send({ body: message(7, 'no/such/method') });
    expect(unknown.status).to.equal(200);
    expect(await unknown.json()).to.deep.equal({ jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'Method not found' } });
    // A notification is accepted with no body at all.
    const notification = await send({ body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    expect(notification.status).to.equal(202);
    expect(await notification.text()).to.equal('');
    // Stateless: a session id the server never issued changes nothing.
    const withSession = await send({ headers: { 'Mcp-Session-Id': 'never-issued' }, body: list });
    expect(withSession.status).to.equal(200);
    expect(((await withSession.json()) as { result: { tools: unknown[] } }).result.tools.length).to.be.greaterThan(0);
  });

  it('documents the 406 of its transport in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${api.url}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: Record<string, { $ref?: string }> }>> };
    expect(doc.paths['/mcp']!.post!.responses['406']).to.deep.equal({ $ref: '#/components/responses/NotAcceptable' });
  });

  it('is published in the OpenAPI document with conversions, alerts and reports, under the spec’s tag names', async () => {
    const doc = (await (await fetch(`${api.url}/v1/openapi.json`)).json()) as { tags: Array<{ name: string }>; paths: Record<string, Record<string, { tags: string[] }>> };
    expect(doc.tags.map((t) => t.name)).to.include.members(['Conversions', 'Alerts', 'Reports', 'Tools']);
    const tagOf = (path: string, method: string) => doc.paths[path]![method]!.tags[0];
    expect(tagOf('/mcp', 'post')).to.equal('Tools');
    expect(tagOf('/conversions', 'post')).to.equal('Conversions');
    expect(tagOf('/conversions', 'get')).to.equal('Conversions');
    expect(tagOf('/alerts/rules', 'post')).to.equal('Alerts');
    expect(tagOf('/alerts/firings/{id}/acknowledge', 'post')).to.equal('Alerts');
    expect(tagOf('/reports/{id}/resolve', 'post')).to.equal('Reports');
    expect(tagOf('/public/reports', 'post')).to.equal('Reports');
  });
});
