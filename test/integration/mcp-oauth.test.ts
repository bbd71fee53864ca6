// An MCP host connecting by URL: the official SDK client with its OAuth client provider, against a live api over
// HTTP. It discovers the authorization server from the 401's WWW-Authenticate, registers itself (RFC 7591), sends
// the person to the consent page with a PKCE S256 challenge; the test is that person, signed in to the dashboard,
// answering the consent page with the calls the page makes. The token then lists and calls tools, and is revoked.
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { freePort } from '../helpers/processes.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { Browser, Users } from '../helpers/users.ts';

const CALLBACK = 'http://127.0.0.1:1/callback';

/** The host's side: what the SDK asks an OAuth client provider to keep, kept in memory; the redirect is recorded. */
class HostProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | null = null;
  readonly redirectUrl = CALLBACK;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'Test Host',
    redirect_uris: [CALLBACK],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  state(): string {
    return 'state-1';
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

describe('MCP hosts connecting by URL with OAuth 2.1 (official SDK client, live api)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let users: Users;
  let base: string;
  let workspaceId: string;
  let owner: { email: string; password: string };
  const clients: Client[] = [];

  before(async () => {
    mongo = await startTestMongo();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    api = await startApi(testEnv(mongo, { API_PORT: String(port), PUBLIC_API_URL: base }));
    tenants = await Tenants.open(mongo);
    users = new Users(tenants.client, mongo.dbName);
    workspaceId = (await tenants.aWorkspace({ name: 'Hosted Co', plan_id: 'business' }))._id;
    owner = await users.aUser({ in: [{ kind: 'workspace', id: workspaceId, role: 'owner' }] });
  });

  after(async () => {
    for (const c of clients) await c.close();
    await tenants?.close();
    await api?.stop();
    await mongo?.stop();
  });

  /** The person at the consent page: signed in, the page's own calls, then the browser follows the answer back to the host. */
  async function consent(browser: Browser, authorizationUrl: URL, answer: 'approve' | 'deny', body: Record<string, unknown> = { context: workspaceId }) {
    expect(authorizationUrl.origin).to.equal(base);
    const start = await browser.request('GET', authorizationUrl.pathname + authorizationUrl.search);
    expect(start.status, start.text).to.equal(303);
    const page = new URL(start.headers.get('location')!, base);
    expect(page.pathname).to.match(/^\/dashboard\/authorize\/[\w-]+$/);
    const uid = page.pathname.split('/').pop()!;
    const shown = await browser.request('GET', `/auth/oauth/requests/${uid}`);
    expect(shown.status, shown.text).to.equal(200);
    const decided = await browser.request('POST', `/auth/oauth/requests/${uid}/${answer}`, answer === 'approve' ? { body } : {});
    expect(decided.status, decided.text).to.equal(200);
    let location = decided.body.redirect_to as string;
    for (let hop = 0; hop < 5; hop++) {
      const url = new URL(location, base);
      if (url.origin !== base) return { shown: shown.body, callback: url };
      const next = await browser.request('GET', url.pathname + url.search);
      expect([302, 303], next.text).to.include(next.status);
      location = next.headers.get('location')!;
    }
    throw new Error('the authorization server never sent the browser back to the host');
  }

  /** A host connecting by URL: the first attempt ends at the authorization URL, the second with the code. */
  async function connectByUrl(host: HostProvider, browser: Browser, body?: Record<string, unknown>) {
    const first = new Client({ name: 'test-host', version: '1.0.0' });
    const error = await first.connect(new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), { authProvider: host })).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(UnauthorizedError);
    expect(host.info?.client_id, 'registered dynamically').to.be.a('string');
    const url = host.authorizationUrl!;
    expect(url.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(url.searchParams.get('resource')).to.equal(`${base}/v1/mcp`);
    const { shown, callback } = await consent(browser, url, 'approve', body);
    expect(callback.searchParams.get('state')).to.equal('state-1');
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), { authProvider: host });
    await transport.finishAuth(callback.searchParams.get('code')!);
    const client = new Client({ name: 'test-host', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return { client, shown };
  }

  async function signedIn(): Promise<Browser> {
    const browser = new Browser(base);
    expect((await browser.signIn(owner.email, owner.password)).status).to.equal(200);
    return browser;
  }

  const mcpWith = (token: string) =>
    fetch(`${base}/v1/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('answers 401 with WWW-Authenticate naming the protected-resource metadata, which names the authorization server', async () => {
    const res = await fetch(`${base}/v1/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(res.status).to.equal(401);
    const metadataUrl = `${base}/.well-known/oauth-protected-resource/v1/mcp`;
    expect(res.headers.get('www-authenticate')).to.equal(`Bearer resource_metadata="${metadataUrl}"`);
    const metadata = (await (await fetch(metadataUrl)).json()) as Record<string, unknown>;
    expect(metadata.resource).to.equal(`${base}/v1/mcp`);
    expect(metadata.authorization_servers).to.deep.equal([base]);
    expect(metadata.scopes_supported).to.include('tools:read');
    const server = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(server.issuer).to.equal(base);
    expect(server.code_challenge_methods_supported).to.deep.equal(['S256']);
    expect(server.registration_endpoint).to.equal(`${base}/oauth/register`);
    expect(server.revocation_endpoint).to.equal(`${base}/oauth/revoke`);
    expect(server.grant_types_supported).to.include.members(['authorization_code', 'refresh_token']);
  });

  it('connects through discovery, registration, PKCE and consent; the token lists and calls tools; revoked, it is 401', async () => {
    const host = new HostProvider();
    const browser = await signedIn();
    const { client, shown } = await connectByUrl(host, browser);
    expect((shown as { client: { name: string } }).client.name).to.equal('Test Host');
    expect((shown as { scopes: Array<{ scope: string }> }).scopes.map((s) => s.scope)).to.include('links:write');

    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).to.include.members(['linkplane_create_link', 'linkplane_list_links']);
    const created = (await client.callTool({ name: 'linkplane_create_link', arguments: { url: 'https://example.com/oauth' } })) as CallToolResult;
    expect(created.isError, JSON.stringify(created.content)).to.not.equal(true);
    expect((created.structuredContent as { url: string }).url).to.equal('https://example.com/oauth');

    // The token acts in the workspace the person chose: the link is there, as the dashboard sees it.
    browser.context = workspaceId;
    const links = await browser.request('GET', '/v1/links');
    expect((links.body.data as Array<{ url: string }>).map((l) => l.url)).to.include('https://example.com/oauth');
    // And the app is listed on the keys page.
    const apps = await browser.request('GET', '/v1/authorized-apps');
    expect(apps.status, apps.text).to.equal(200);
    expect((apps.body.data as Array<{ client_name: string; revoked_at: null }>)[0]).to.include({ client_name: 'Test Host', revoked_at: null });

    // Kept hashed: neither the access token nor the refresh token is anywhere in the database.
    const token = host.saved!.access_token;
    const stored = JSON.stringify(await tenants.client.db(mongo.dbName).collection('oauth_records').find().toArray());
    expect(stored).to.contain('AccessToken:');
    expect(stored).to.not.contain(token);
    expect(stored).to.not.contain(host.saved!.refresh_token!);

    // Bound to the tool server (RFC 8707): the same token opens no other endpoint.
    const rest = await fetch(`${base}/v1/links`, { headers: { Authorization: `Bearer ${token}` } });
    expect(rest.status).to.equal(401);

    // Revoked by the host (RFC 7009): the next request is 401 with the challenge again.
    const revoked = await fetch(`${base}/oauth/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, token_type_hint: 'access_token', client_id: host.info!.client_id }),
    });
    expect(revoked.status).to.equal(200);
    const after = await mcpWith(token);
    expect(after.status).to.equal(401);
    expect(after.headers.get('www-authenticate')).to.contain('resource_metadata=');
  });

  it('refreshes a token; revoking the app on the keys page ends the refresh token and every access token', async () => {
    const host = new HostProvider();
    const browser = await signedIn();
    await connectByUrl(host, browser);
    const refresh = async () =>
      fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: host.saved!.refresh_token!, client_id: host.info!.client_id, resource: `${base}/v1/mcp` }),
      });
    const refreshed = await refresh();
    expect(refreshed.status, await refreshed.clone().text()).to.equal(200);
    const tokens = (await refreshed.json()) as OAuthTokens;
    expect((await mcpWith(tokens.access_token)).status).to.equal(200);
    host.saved = tokens;

    browser.context = workspaceId;
    const apps = (await browser.request('GET', '/v1/authorized-apps')).body.data as Array<{ id: string; client_id: string }>;
    const app = apps.find((a) => a.client_id === host.info!.client_id)!;
    const revoked = await browser.request('DELETE', `/v1/authorized-apps/${app.id}`);
    expect(revoked.status, revoked.text).to.equal(200);
    expect(revoked.body.revoked_at).to.be.a('string');
    expect((await mcpWith(tokens.access_token)).status).to.equal(401);
    const again = await refresh();
    expect(again.status).to.equal(400);
    expect(((await again.json()) as { error: string }).error).to.equal('invalid_grant');
  });

  it('grants no more than the person chose, within their role: a read-only approval shows no write tool', async () => {
    const host = new HostProvider();
    const browser = await signedIn();
    const { client } = await connectByUrl(host, browser, { context: workspaceId, scopes: ['tools:read', 'links:read'] });
    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name)).to.include('linkplane_list_links');
    expect(tools.filter((t) => t.annotations?.readOnlyHint !== true).map((t) => t.name)).to.deep.equal([]);
  });

  it('sends the host access_denied when the person denies, and refuses a workspace the person is not in', async () => {
    const host = new HostProvider();
    const browser = await signedIn();
    const first = new Client({ name: 'test-host', version: '1.0.0' });
    await first.connect(new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), { authProvider: host })).catch(() => undefined);
    const { callback } = await consent(browser, host.authorizationUrl!, 'deny');
    expect(callback.searchParams.get('error')).to.equal('access_denied');
    expect(callback.searchParams.get('code')).to.equal(null);

    await first.connect(new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), { authProvider: host })).catch(() => undefined);
    const url = host.authorizationUrl!;
    const start = await browser.request('GET', url.pathname + url.search);
    const uid = new URL(start.headers.get('location')!, base).pathname.split('/').pop()!;
    const other = (await tenants.aWorkspace({ name: 'Not Mine' }))._id;
    const refused = await browser.request('POST', `/auth/oauth/requests/${uid}/approve`, { body: { context: other } });
    expect(refused.status, refused.text).to.equal(403);
    const anonymous = await new Browser(base).request('GET', `/auth/oauth/requests/${uid}`);
    expect(anonymous.status).to.equal(401);
  });
  it('issues a token bound to the whole API on request (RFC 8707): it works on REST endpoints like a key of its scopes', async () => {
    const registered = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'REST App', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] }),
    });
    expect(registered.status).to.equal(201);
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const verifier = randomBytes(32).toString('base64url');
    const authorize = (resource: string) => {
      const url = new URL(`${base}/oauth/authorize`);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: CALLBACK,
        scope: 'links:read',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        resource,
      }).toString();
      return url;
    };
    const browser = await signedIn();

    // A resource of someone else is refused before any consent.
    const foreign = await browser.request('GET', authorize('https://elsewhere.example/api').pathname + authorize('https://elsewhere.example/api').search);
    expect(foreign.status).to.equal(303);
    expect(new URL(foreign.headers.get('location')!).searchParams.get('error')).to.equal('invalid_target');
    // Without PKCE: refused too.
    const plain = authorize(`${base}/v1`);
    plain.searchParams.delete('code_challenge');
    plain.searchParams.delete('code_challenge_method');
    const noPkce = await browser.request('GET', plain.pathname + plain.search);
    expect(new URL(noPkce.headers.get('location')!).searchParams.get('error')).to.equal('invalid_request');

    const exchange = async (codeVerifier: string) => {
      const { callback } = await consent(browser, authorize(`${base}/v1`), 'approve');
      return fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK, client_id: clientId, code_verifier: codeVerifier, resource: `${base}/v1` }),
      });
    };
    const wrong = await exchange(randomBytes(32).toString('base64url'));
    expect(wrong.status, 'a wrong PKCE verifier').to.equal(400);
    expect(((await wrong.json()) as { error: string }).error).to.equal('invalid_grant');
    const right = await exchange(verifier);
    expect(right.status).to.equal(200);
    const token = ((await right.json()) as { access_token: string }).access_token;
    const auth = { Authorization: `Bearer ${token}` };
    expect((await fetch(`${base}/v1/links`, { headers: auth })).status).to.equal(200);
    const key = (await (await fetch(`${base}/v1/key`, { headers: auth })).json()) as { workspace_id: string; scopes: string[]; name: string };
    expect(key).to.include({ workspace_id: workspaceId, name: 'REST App' });
    expect(key.scopes).to.deep.equal(['links:read']);
    const write = await fetch(`${base}/v1/links`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: '{"url":"https://example.com/"}' });
    expect(write.status).to.equal(403);
    expect(((await write.json()) as { error: { code: string } }).error.code).to.equal('insufficient_scope');
  });
});
