// The consent page in real Chromium against a real api: an app (registered as MCP hosts do) sends a signed-in
// person to the dashboard, which shows the app and the scopes it asks for; one scope is unticked, the app is
// approved, the browser goes back to the app with a code, and the token it exchanges for carries exactly the scopes
// left ticked. The app is then on the Keys page, revoked from there, and its token refused.
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { chromiumMissing, watchCspViolations } from '../helpers/browser.ts';
import { checkAccessibility } from '../helpers/dashboard-checks.ts';
import { startDashboard, type Dashboard } from '../helpers/dashboard.ts';

const CALLBACK = 'http://127.0.0.1:8977/callback';

describe('Dashboard consent page for apps connecting by OAuth', function () {
  this.timeout(120_000);
  let dashboard: Dashboard;

  before(async function () {
    if (chromiumMissing()) this.skip();
    dashboard = await startDashboard();
  });

  after(async () => {
    await dashboard?.stop();
  });

  /** An app registered dynamically, and the authorization URL it sends a person to (PKCE S256). */
  async function anAuthorizationRequest(scopes: string[]) {
    const registered = await fetch(`${dashboard.apiUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Browser Host', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] }),
    });
    expect(registered.status, await registered.clone().text()).to.equal(201);
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${dashboard.apiUrl}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CALLBACK,
      scope: scopes.join(' '),
      state: 'xyz',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      resource: `${dashboard.apiUrl}/v1/mcp`,
    }).toString();
    return { clientId, verifier, url: url.toString() };
  }

  it('shows the app and its scopes, grants only those left ticked, and the app is revocable on the Keys page', async () => {
    const request = await anAuthorizationRequest(['tools:read', 'tools:write', 'links:read']);
    const page = await dashboard.signedInPage();
    const violations = await watchCspViolations(page);
    await page.goto(request.url);
    await page.getByRole('heading', { level: 1, name: 'Authorise an app' }).waitFor();
    expect(await page.getByTestId('consent-client').textContent()).to.equal('Browser Host');
    expect(await page.getByText('127.0.0.1:8977').count()).to.equal(1);
    const boxes = page.getByRole('checkbox');
    expect(await boxes.count()).to.equal(3);
    await page.getByRole('checkbox', { name: /tools:write/ }).uncheck();
    expect(await page.getByRole('group').filter({ hasText: 'What it may do (2 of 3)' }).count()).to.equal(1);
    // The app's callback is not a server here: the browser's request for it is what the test reads.
    const arrival = page.waitForRequest((r) => r.url().startsWith(CALLBACK));
    // Nothing listens there, so Chromium ends that navigation on its error page; only then may the test navigate again.
    const ended = page.waitForEvent('framenavigated', (frame) => frame === page.mainFrame() && frame.url().startsWith('chrome-error:'));
    await page.getByRole('button', { name: 'Approve' }).click();
    const back = new URL((await arrival).url());
    await ended;
    expect(back.searchParams.get('state')).to.equal('xyz');
    const code = back.searchParams.get('code');
    expect(code).to.be.a('string');

    const exchanged = await fetch(`${dashboard.apiUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, redirect_uri: CALLBACK, client_id: request.clientId, code_verifier: request.verifier, resource: `${dashboard.apiUrl}/v1/mcp` }),
    });
    expect(exchanged.status, await exchanged.clone().text()).to.equal(200);
    const tokens = (await exchanged.json()) as { access_token: string; scope: string };
    expect(tokens.scope.split(' ').sort()).to.deep.equal(['links:read', 'tools:read']);
    const listTools = () =>
      fetch(`${dashboard.apiUrl}/v1/mcp`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${tokens.access_token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await listTools()).status).to.equal(200);

    await page.goto(`${dashboard.apiUrl}/dashboard/keys`);
    const apps = page.getByRole('region', { name: 'Authorised apps' });
    const row = apps.getByRole('row').filter({ hasText: 'Browser Host' });
    await row.waitFor();
    expect(await row.textContent()).to.include('links:read').and.include('Active');
    await row.getByRole('button', { name: /Revoke/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke app' }).click();
    await row.filter({ hasText: 'Revoked' }).waitFor();
    expect((await listTools()).status).to.equal(401);
    expect(violations).to.deep.equal([]);
  });

  it('has no serious accessibility violation', async () => {
    const request = await anAuthorizationRequest(['links:read', 'links:write']);
    const violations = await checkAccessibility(dashboard, request.url, dashboard.user, async (page) => {
      await page.getByRole('button', { name: 'Approve' }).waitFor();
    });
    expect(violations).to.deep.equal([]);
  });
});
