import { OAuthStore } from '../oauth/oauth.store.ts';
import type { Db } from 'mongodb';
import type { Config } from '../config/config.ts';
import type { Logger } from '../platform/logger.ts';
import { RateLimiter } from '../platform/rate-limiter.ts';
import { KeyStore } from '../tenancy/key.store.ts';
import { WorkspaceStore } from '../tenancy/workspace.store.ts';
import { UsageStore } from '../tenancy/usage.store.ts';
import { PartnerStore } from '../tenancy/partner.store.ts';
import { EventStore } from '../events/event.store.ts';
import { IdempotencyStore } from '../http/idempotency.store.ts';
import { LinkStore } from '../links/link.store.ts';
import { QuotaStore } from '../links/quota.store.ts';
import { LabelStore } from '../links/label.store.ts';
import { QrLogoStore } from '../links/qr-logo.store.ts';
import { WebhookStore } from '../webhooks/webhook.store.ts';
import { WebhookDeliveryStore } from '../webhooks/delivery.store.ts';
import { ClickStore } from '../clicks/click.store.ts';
import { RotatorHealthStore } from '../clicks/rotator-health.store.ts';
import { DomainStore } from '../domains/domain.store.ts';
import { DomainTlsStore } from '../domains/tls.store.ts';
import { IpListStore } from '../iplists/ip-list.store.ts';
import { PasswordAttempts } from '../platform/password-attempts.ts';
import { ConversionStore } from '../conversions/conversion.store.ts';
import { PartnerPlanStore } from '../partner/plan.store.ts';
import { LedgerStore } from '../partner/ledger.store.ts';
import { ReportStore } from '../reports/report.store.ts';
import { AlertStore } from '../alerts/alert.store.ts';
import { RollupStore } from '../analytics/rollup.store.ts';
import { ExportSlots } from '../platform/export-slots.ts';
import { UserStore } from '../tenancy/user.store.ts';
import { SessionStore } from '../tenancy/session.store.ts';
import { MembershipStore } from '../tenancy/membership.store.ts';
import { InviteStore } from '../users/invite.store.ts';
import { SignInLinkStore } from '../users/token.store.ts';
import { PASSWORD_RESET_WINDOW_MS } from '../users/auth.service.ts';
import { ImportStore } from '../imports/import.store.ts';

/** Every store over one database; `ensureIndexes` creates what their queries need. */
export class Stores {
  readonly workspaces: WorkspaceStore;
  readonly partners: PartnerStore;
  readonly keys: KeyStore;
  readonly usage: UsageStore;
  readonly events: EventStore;
  readonly idempotency: IdempotencyStore;
  readonly rateLimiter: RateLimiter;
  readonly links: LinkStore;
  readonly quota: QuotaStore;
  readonly tags: LabelStore;
  readonly folders: LabelStore;
  /** The workspace's QR logo, one document per workspace keyed by its id (no index beyond _id). */
  readonly qrLogos: QrLogoStore;
  readonly webhooks: WebhookStore;
  readonly webhookDeliveries: WebhookDeliveryStore;
  readonly clicks: ClickStore;
  readonly rotatorHealth: RotatorHealthStore;
  readonly domains: DomainStore;
  readonly domainTls: DomainTlsStore;
  readonly ipLists: IpListStore;
  readonly passwordAttempts: PasswordAttempts;
  readonly conversions: ConversionStore;
  readonly partnerPlans: PartnerPlanStore;
  readonly ledger: LedgerStore;
  readonly reports: ReportStore;
  readonly alerts: AlertStore;
  readonly rollups: RollupStore;
  readonly exportSlots: ExportSlots;
  /** Links exports (GET /links/export) running per workspace. */
  readonly linkExportSlots: ExportSlots;
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly memberships: MembershipStore;
  readonly invites: InviteStore;
  readonly signInLinks: SignInLinkStore;
  /** One-time password reset links: the same shape as sign-in links, in a collection of their own. */
  readonly passwordResets: SignInLinkStore;
  /**
   * Dashboard sign-in attempts (the same windowed count as link passwords): per account and client address
   * together, per address, and the per-account ceiling; password reset e-mails per account and per address.
   */
  readonly signInAttempts: {
    readonly perPair: PasswordAttempts;
    readonly perIp: PasswordAttempts;
    readonly perAccount: PasswordAttempts;
    readonly resetsPerAccount: PasswordAttempts;
    readonly resetsPerIp: PasswordAttempts;
  };
  readonly imports: ImportStore;
  /** The authorization server's records and the apps people authorised (MCP hosts connected by URL). */
  readonly oauth: OAuthStore;

  constructor(db: Db, logger: Logger, config: Config) {
    this.workspaces = new WorkspaceStore(db);
    this.partners = new PartnerStore(db);
    this.keys = new KeyStore(db);
    this.usage = new UsageStore(db);
    this.events = new EventStore(db);
    this.idempotency = new IdempotencyStore(db, config.idempotencyTtlHours);
    this.rateLimiter = new RateLimiter(db, logger);
    this.links = new LinkStore(db);
    this.quota = new QuotaStore(db);
    this.tags = new LabelStore(db, 'tags');
    this.folders = new LabelStore(db, 'folders');
    this.qrLogos = new QrLogoStore(db);
    this.webhooks = new WebhookStore(db);
    this.webhookDeliveries = new WebhookDeliveryStore(db);
    this.clicks = new ClickStore(db);
    this.rotatorHealth = new RotatorHealthStore(db);
    this.domains = new DomainStore(db);
    this.domainTls = new DomainTlsStore(db);
    this.ipLists = new IpListStore(db);
    this.conversions = new ConversionStore(db);
    this.partnerPlans = new PartnerPlanStore(db);
    this.ledger = new LedgerStore(db);
    this.reports = new ReportStore(db);
    this.alerts = new AlertStore(db);
    this.passwordAttempts = new PasswordAttempts(db, {
      maxAttempts: config.redirect.passwordMaxAttempts,
      windowMs: config.redirect.passwordAttemptWindowMs,
      secretKey: config.secretKey,
    });
    this.rollups = new RollupStore(db);
    this.exportSlots = new ExportSlots(db, 'analytics_export_slots', config.analytics.exportsPerWorkspace);
    this.linkExportSlots = new ExportSlots(db, 'link_export_slots', config.linkExportsPerWorkspace);
    this.users = new UserStore(db);
    this.sessions = new SessionStore(db);
    this.memberships = new MembershipStore(db);
    this.invites = new InviteStore(db);
    this.signInLinks = new SignInLinkStore(db);
    this.imports = new ImportStore(db);
    this.passwordResets = new SignInLinkStore(db, 'password_resets');
    this.oauth = new OAuthStore(db);
    const { signInMaxAttempts, signInMaxAttemptsPerIp, signInMaxAttemptsPerAccount, signInWindowMs, passwordResetsPerAccount, passwordResetsPerIp } = config.dashboard;
    const attempts = (maxAttempts: number, windowMs: number) => new PasswordAttempts(db, { maxAttempts, windowMs, secretKey: config.secretKey });
    this.signInAttempts = {
      perPair: attempts(signInMaxAttempts, signInWindowMs),
      perIp: attempts(signInMaxAttemptsPerIp, signInWindowMs),
      perAccount: attempts(signInMaxAttemptsPerAccount, signInWindowMs),
      resetsPerAccount: attempts(passwordResetsPerAccount, PASSWORD_RESET_WINDOW_MS),
      resetsPerIp: attempts(passwordResetsPerIp, PASSWORD_RESET_WINDOW_MS),
    };
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.workspaces.ensureIndexes(),
      this.keys.ensureIndexes(),
      this.oauth.ensureIndexes(),
      this.events.ensureIndexes(),
      this.idempotency.ensureIndexes(),
      this.rateLimiter.ensureIndexes(),
      this.links.ensureIndexes(),
      this.tags.ensureIndexes(),
      this.folders.ensureIndexes(),
      this.webhooks.ensureIndexes(),
      this.webhookDeliveries.ensureIndexes(),
      this.clicks.ensureIndexes(),
      this.rotatorHealth.ensureIndexes(),
      this.domains.ensureIndexes(),
      this.domainTls.ensureIndexes(),
      this.ipLists.ensureIndexes(),
      this.passwordAttempts.ensureIndexes(),
      this.conversions.ensureIndexes(),
      this.partnerPlans.ensureIndexes(),
      this.ledger.ensureIndexes(),
      this.reports.ensureIndexes(),
      this.alerts.ensureIndexes(),
      this.rollups.ensureIndexes(),
      this.exportSlots.ensureIndexes(),
      this.linkExportSlots.ensureIndexes(),
      this.users.ensureIndexes(),
      this.sessions.ensureIndexes(),
      this.memberships.ensureIndexes(),
      this.invites.ensureIndexes(),
      this.signInLinks.ensureIndexes(),
      this.passwordResets.ensureIndexes(),
      this.imports.ensureIndexes(),
    ]);
  }
}
