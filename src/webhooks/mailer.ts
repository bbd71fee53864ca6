// The owner's e-mail when a webhook endpoint turns `failing` (spec 3 and 6.4). Sent by the worker that won the
// active → failing transition, outside the delivery path: a slow or broken mail server never holds a message.
import { createTransport, type Transporter } from 'nodemailer';
import type { Logger } from '../platform/logger.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import type { PartnerStore } from '../tenancy/partner.store.ts';
import type { WebhookDoc } from './webhook.store.ts';

export interface MailConfig {
  /** smtp://user:pass@host:587 or smtps://…; null: no e-mail is sent. */
  smtpUrl: string | null;
  from: string;
}

export interface EndpointFailingMail {
  subject: string;
  text: string;
  html: string;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The message: which endpoint, since when, and how to bring it back. */
export function endpointFailingMail(endpoint: WebhookDoc, publicApiUrl: string): EndpointFailingMail {
  const since = endpoint.updated_at.toISOString();
  const owner = endpoint.tenant_kind === 'workspace' ? `workspace ${endpoint.workspace_id}` : `partner ${endpoint.partner_id}`;
  const patch = `PATCH ${publicApiUrl}/v1/webhooks/${endpoint._id}`;
  const events = `GET ${publicApiUrl}/v1/events`;
  const log = `GET ${publicApiUrl}/v1/webhooks/${endpoint._id}/deliveries`;
  const text = [
    `Your webhook endpoint ${endpoint.url} (${endpoint._id}${endpoint.name ? `, "${endpoint.name}"` : ''}, ${owner}) is now failing.`,
    '',
    `At ${since} a delivery to it failed its last retry, after the whole retry schedule. Since then the endpoint`,
    'receives no events.',
    '',
    'What to do:',
    `  1. Fix the receiver. The delivery log shows each attempt with the answer it got: ${log}`,
    `  2. Re-enable the endpoint: ${patch} with the body {"status":"active"}`,
    `  3. Events from while it was failing are not replayed: read them with ${events}`,
    '',
    '-- Linkplane',
  ].join('\n');
  const html = [
    `<p>Your webhook endpoint <code>${escapeHtml(endpoint.url)}</code> (<code>${escapeHtml(endpoint._id)}</code>${endpoint.name ? `, “${escapeHtml(endpoint.name)}”` : ''}, ${escapeHtml(owner)}) is now <strong>failing</strong>.</p>`,
    `<p>At ${escapeHtml(since)} a delivery to it failed its last retry, after the whole retry schedule. Since then the endpoint receives no events.</p>`,
    '<ol>',
    `<li>Fix the receiver. The delivery log shows each attempt with the answer it got: <code>${escapeHtml(log)}</code></li>`,
    `<li>Re-enable the endpoint: <code>${escapeHtml(patch)}</code> with the body <code>{"status":"active"}</code></li>`,
    `<li>Events from while it was failing are not replayed: read them with <code>${escapeHtml(events)}</code></li>`,
    '</ol>',
    '<p>— Linkplane</p>',
  ].join('\n');
  return { subject: `Webhook endpoint failing: ${endpoint.url}`, text, html };
}

export class Mailer {
  private readonly transport: Transporter | null;
  private readonly from: string;
  private readonly publicApiUrl: string;

  constructor(config: MailConfig, publicApiUrl: string) {
    this.transport = config.smtpUrl === null ? null : createTransport(config.smtpUrl);
    this.from = config.from;
    this.publicApiUrl = publicApiUrl;
  }

  get configured(): boolean {
    return this.transport !== null;
  }

  /** Sends the failing-endpoint notice; throws on a mail error (the caller logs it). */
  async sendEndpointFailing(to: string, endpoint: WebhookDoc): Promise<void> {
    if (!this.transport) throw new Error('no SMTP_URL configured');
    const mail = endpointFailingMail(endpoint, this.publicApiUrl);
    await this.transport.sendMail({ from: this.from, to, subject: mail.subject, text: mail.text, html: mail.html });
  }

  /** A plain-text notice (alert firings); throws on a mail error (the caller logs it). */
  async send(to: readonly string[] | string, subject: string, text: string): Promise<void> {
    if (!this.transport) throw new Error('no SMTP_URL configured');
    await this.transport.sendMail({ from: this.from, to: typeof to === 'string' ? to : [...to], subject, text });
  }

  close(): void {
    this.transport?.close();
  }
}

/** Finds the endpoint's owner (the workspace, or the partner) and e-mails them; every outcome is logged, none throws. */
export class EndpointFailingNotifier {
  private readonly pending = new Set<Promise<void>>();
  private readonly deps: { mailer: Mailer; workspaces: WorkspaceStore; partners: PartnerStore; logger: Logger };

  constructor(deps: { mailer: Mailer; workspaces: WorkspaceStore; partners: PartnerStore; logger: Logger }) {
    this.deps = deps;
  }

  /** Starts the notice and returns at once: the delivery consumer never waits for the mail server. */
  notify(endpoint: WebhookDoc): void {
    const task = this.send(endpoint).finally(() => this.pending.delete(task));
    this.pending.add(task);
  }

  /** Waits for notices under way, at most `timeoutMs`, then closes the SMTP transport. */
  async stop(timeoutMs = 5000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.pending]), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    this.deps.mailer.close();
  }

  private async send(endpoint: WebhookDoc): Promise<void> {
    const { logger, mailer } = this.deps;
    const context = { webhook_id: endpoint._id, workspace_id: endpoint.workspace_id, partner_id: endpoint.partner_id, url: endpoint.url };
    try {
      const owner =
        endpoint.tenant_kind === 'workspace'
          ? await this.deps.workspaces.findById(endpoint.workspace_id ?? '')
          : await this.deps.partners.findById(endpoint.partner_id ?? '');
      const to = owner?.owner_email ?? null;
      if (!mailer.configured) {
        logger.warn(context, 'webhook endpoint is now failing; no e-mail sent to its owner: SMTP_URL is not set');
      } else if (to === null) {
        logger.warn(context, `webhook endpoint is now failing; no e-mail sent: the ${endpoint.tenant_kind} has no owner_email`);
      } else {
        await mailer.sendEndpointFailing(to, endpoint);
        logger.info({ ...context, to }, 'webhook endpoint is now failing; its owner was e-mailed');
      }
    } catch (error) {
      logger.error({ ...context, err: error }, 'webhook endpoint is now failing; the e-mail to its owner could not be sent');
    }
  }
}
