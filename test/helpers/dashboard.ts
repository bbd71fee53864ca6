// The dashboard as a person meets it: real api (and, when asked, redirect and worker) child processes serving
// the built web/dist, a user created with `linkplane user create`, and a Chromium page signed in through the
// real sign-in form.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { runCli } from '../../src/cli/linkplane.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';
import { shortLinkEnv } from './env.ts';
import { startTestMongo, type TestMongo } from './mongo.ts';
import { ROOT, freePort, spawnProcess, waitForHttp, type Spawned } from './processes.ts';
import { Tenants } from './tenants.ts';

export const DASHBOARD_DIST = join(ROOT, 'web', 'dist');

/** Fails with the one instruction that fixes it when the dashboard was not built (make deps builds it). */
export function requireDashboardBuild(): void {
  if (!existsSync(join(DASHBOARD_DIST, 'index.html'))) {
    throw new Error(`the dashboard is not built (${DASHBOARD_DIST}/index.html missing): run \`make deps\` or \`npm run build:web\``);
  }
}

export interface DashboardUser {
  email: string;
  password: string;
}

export interface Dashboard {
  /** The api origin: the dashboard is at `${apiUrl}/dashboard/`. */
  apiUrl: string;
  /** The redirect origin (short URLs the api returns point here); null without the redirect process. */
  redirectUrl: string | null;
  mongo: TestMongo;
  tenants: Tenants;
  browser: TestBrowser;
  /** The environment the processes run with (database, NATS prefix, ports). */
  env: Record<string, string>;
  workspaceId: string;
  /** The owner of the workspace (and of the partner when one was asked for). */
  user: DashboardUser;
  partnerId: string | null;
  /** A fresh browser context signed in as `user` (or another account) through the sign-in form, on its first screen. */
  signedInPage(account?: DashboardUser, options?: { viewport?: { width: number; height: number } }): Promise<Page>;
  /** Creates another account with `linkplane user create` (and a role in the workspace when given). */
  createUser(email: string, options?: { password?: string; name?: string; role?: 'owner' | 'member'; workspaceId?: string; partnerId?: string }): Promise<DashboardUser>;
  /** Output of the processes, for assertion messages. */
  output(): string;
  stop(): Promise<void>;
}

export interface DashboardOptions {
  /** Also run the redirect process (following short links) and the worker (clicks, webhooks, analytics). */
  redirect?: boolean;
  worker?: boolean;
  /** Also create a partner owning the workspace, with the user as its owner. */
  partner?: boolean;
  /** The workspace's plan; business by default, which has every capability (rules, rotator...). */
  plan?: string;
  env?: Record<string, string>;
}

/** Signs in through the sign-in form as a person does, and waits for the signed-in shell. */
export async function signInThroughForm(page: Page, apiUrl: string, account: DashboardUser): Promise<void> {
  await page.goto(`${apiUrl}/dashboard/sign-in`);
  await page.getByLabel('E-mail', { exact: true }).fill(account.email);
  await page.getByLabel('Password', { exact: true }).fill(account.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((url) => url.pathname.startsWith('/dashboard/') && !url.pathname.startsWith('/dashboard/sign-in'));
  // The first screen's heading (the navigation itself is hidden behind the Menu button on a phone).
  await page.locator('main#main h1').waitFor();
}

export async function startDashboard(options: DashboardOptions = {}): Promise<Dashboard> {
  requireDashboardBuild();
  const mongo = await startTestMongo();
  const apiPort = await freePort();
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  // The public API URL is the origin the browser uses, so the api's Origin check accepts the dashboard's calls.
  const { env, base: redirectBase } = await shortLinkEnv(mongo, { API_PORT: String(apiPort), PUBLIC_API_URL: apiUrl, ...options.env });
  const processes: Spawned[] = [];
  const tenants = await Tenants.open(mongo);
  let browser: TestBrowser | null = null;
  const output = () => processes.map((p) => p.output()).join('\n');
  const stop = async () => {
    await browser?.close();
    await Promise.all(processes.map((p) => p.stop()));
    await tenants.close();
    await mongo.stop();
  };
  try {
    const partnerId = options.partner ? await tenants.aPartner() : null;
    const workspace = await tenants.aWorkspace({ name: 'Acme', partner_id: partnerId, plan_id: options.plan ?? 'business' });
    const cli = async (args: string[]): Promise<unknown> => {
      let printed: unknown;
      const code = await runCli(args, { out: (value) => (printed = value), env: { MONGODB_URI: mongo.uri, MONGODB_DB: mongo.dbName, NATS_URL: env.NATS_URL, NATS_PREFIX: env.NATS_PREFIX } });
      expect(code, `linkplane ${args.join(' ')}`).to.equal(0);
      return printed;
    };
    const createUser: Dashboard['createUser'] = async (email, o = {}) => {
      const password = o.password ?? `pw-${Math.random().toString(36).slice(2)}-${Date.now()}`;
      const args = ['user', 'create', '--email', email, '--password', password, '--name', o.name ?? email.split('@')[0]!];
      if (o.workspaceId) args.push('--workspace', o.workspaceId, '--role', o.role ?? 'owner');
      if (o.partnerId) args.push('--partner', o.partnerId);
      await cli(args);
      return { email, password };
    };
    const user = await createUser('owner@example.test', { name: 'Olive Owner', workspaceId: workspace._id, partnerId: partnerId ?? undefined });

    const api = spawnProcess('api', env);
    processes.push(api);
    // Minutes: on a busy machine the api process takes long to start (every module is compiled on the way in).
    const waits = [waitForHttp(`${apiUrl}/healthz`, api, 240_000)];
    if (options.redirect) {
      const redirect = spawnProcess('redirect', env);
      processes.push(redirect);
      waits.push(waitForHttp(`${redirectBase}/healthz`, redirect, 240_000));
    }
    if (options.worker) processes.push(spawnProcess('worker', env));
    await Promise.all(waits);
    browser = await launchBrowser();
    const launched = browser;

    return {
      apiUrl,
      redirectUrl: options.redirect ? redirectBase : null,
      mongo,
      tenants,
      browser: launched,
      env,
      workspaceId: workspace._id,
      partnerId,
      user,
      createUser,
      async signedInPage(account = user, pageOptions = {}) {
        const context = await launched.browser.newContext({ viewport: pageOptions.viewport ?? { width: 1280, height: 900 } });
        const page = await context.newPage();
        await signInThroughForm(page, apiUrl, account);
        return page;
      },
      output,
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}
