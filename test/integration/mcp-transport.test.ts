// The tool server's JSON-RPC transport over raw HTTP: batches counted against the key's window like the REST calls
// they stand for, idempotent replays answering the same JSON-RPC object, and bad tools/call parameters answered
// -32602 invalid params.
import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';

type Json = Record<string, unknown>;

describe('MCP transport over raw HTTP: batches, replays, invalid params', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo));
    tenants = await Tenants.open(mongo);
  });

  after(async () => {
    await tenants?.close();
    await api?.stop();
    await mongo?.stop();
  });

  /** A workspace of its own with a key whose window holds `perMinute` requests. */
  async function aKey(perMinute = 600): Promise<{ key: string; workspaceId: string }> {
    const ws = await tenants.aWorkspace({ limits: { rate_limit_per_minute: perMinute, links: 10_000 } });
    return { key: (await tenants.aWorkspaceKey(ws._id)).key, workspaceId: ws._id };
  }

  const send = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${api.url}/v1/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
  const toolCall = (id: number, name: string, args: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  const linksOf = (workspaceId: string) => tenants.client.db(mongo.dbName).collection('links').countDocuments({ workspace_id: workspaceId });

  it('counts each tools/call of a batch against the key’s window, and refuses a batch the window cannot hold without running any of it', async () => {
    const { key, workspaceId } = await aKey(30);
    const batch = Array.from({ length: 20 }, (_, i) => toolCall(i + 1, 'linkplane_create_link', { url: `https://example.com/${i}` }));
    const first = await send(key, batch);
    expect(first.status, await first.clone().text()).to.equal(200);
    expect(first.headers.get('x-ratelimit-limit')).to.equal('30');
    expect(first.headers.get('x-ratelimit-remaining')).to.equal('10');
    const answers = (await first.json()) as Array<{ id: number; result: { isError?: boolean } }>;
    expect(answers).to.have.length(20);
    expect(answers.every((a) => a.result.isError !== true)).to.equal(true);
    expect(await linksOf(workspaceId)).to.equal(20);

    const second = await send(key, batch.map((m) => ({ ...m, id: m.id + 100 })));
    expect(second.status).to.equal(429);
    expect(((await second.json()) as { error: Json }).error.code).to.equal('rate_limited');
    expect(second.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
    expect(await linksOf(workspaceId), 'no call of a refused batch runs').to.equal(20);
  });

  it('costs one unit for a batch without tool calls, as for a single message', async () => {
    const { key } = await aKey(30);
    const res = await send(key, [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-ratelimit-remaining')).to.equal('29');
  });

  it('replays an idempotent MCP request as the same JSON-RPC object, not as a JSON string of it', async () => {
    const { key } = await aKey();
    const message = toolCall(1, 'linkplane_create_link', { url: 'https://example.com/once' });
    const first = await send(key, message, { 'Idempotency-Key': 'mcp-once' });
    expect(first.status).to.equal(200);
    const firstBody = (await first.json()) as Json;
    expect(firstBody).to.include({ jsonrpc: '2.0', id: 1 });
    const again = await send(key, message, { 'Idempotency-Key': 'mcp-once' });
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.headers.get('content-type')).to.match(/^application\/json/);
    expect(await again.json()).to.deep.equal(firstBody);
  });

  it('answers arguments: null and an unknown tool with JSON-RPC -32602 invalid params, in words rather than a schema dump', async () => {
    const { key } = await aKey();
    for (const [message, says] of [
      [toolCall(5, 'linkplane_create_link', null), /arguments/],
      [toolCall(6, 'linkplane_create_link', [1, 2]), /arguments/],
      [toolCall(7, 'no_such_tool', {}), /no_such_tool/],
      [{ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { arguments: {} } }, /name/],
      [{ jsonrpc: '2.0', id: 9, method: 'tools/call' }, /name/],
    ] as const) {
      const res = await send(key, message);
      expect(res.status).to.equal(200);
      const body = (await res.json()) as { id: number; error?: { code: number; message: string } };
      expect(body.id).to.equal(message.id);
      expect(body.error, JSON.stringify(body)).to.be.an('object');
      expect(body.error!.code).to.equal(-32602);
      expect(body.error!.message).to.match(says);
      expect(body.error!.message, 'no raw validation dump').not.to.match(/invalid_type|"path"|\[\s*\{/);
    }
  });

  it('answers a notification or an empty batch 202 with no body, as the OpenAPI document says', async () => {
    const { key } = await aKey();
    for (const body of [{ jsonrpc: '2.0', method: 'notifications/initialized' }, []]) {
      const res = await send(key, body);
      expect(res.status).to.equal(202);
      expect(await res.text()).to.equal('');
    }
    const doc = (await (await fetch(`${api.url}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: Record<string, { description: string; content?: unknown }>; description: string }>> };
    const op = doc.paths['/mcp']!.post!;
    expect(op.responses['202']!.description).to.match(/notification/i).and.match(/empty batch/i);
    expect(op.responses['202']!.content).to.equal(undefined);
    expect(op.description).to.match(/-32602/);
  });
});
