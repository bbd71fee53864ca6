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
import { WebhookStore } from '../webhooks/webhook.store.ts';
import { WebhookDeliveryStore } from '../webhooks/delivery.store.ts';
import { ClickStore } from '../clicks/click.store.ts';
import { RotatorHealthStore } from '../clicks/rotator-health.store.ts';
import { DomainStore } from '../domains/domain.store.ts';
import { IpListStore } from '../iplists/ip-list.store.ts';
import { PasswordAttempts } from '../platform/password-attempts.ts';
import { ConversionStore } from '../conversions/conversion.store.ts';
import { PartnerPlanStore } from '../partner/plan.store.ts';
import { LedgerStore } from '../partner/ledger.store.ts';
import { ReportStore } from '../reports/report.store.ts';
import { AlertStore } from '../alerts/alert.store.ts';
import { RollupStore } from '../analytics/rollup.store.ts';
import { ExportSlots } from '../analytics/export-slots.ts';
import { UserStore } from '../tenancy/user.store.ts';
import { SessionStore } from '../tenancy/session.store.ts';
import { MembershipStore } from '../tenancy/membership.store.ts';
import { InviteStore } from '../users/invite.store.ts';
import { SignInLinkStore } from '../users/token.store.ts';
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
  readonly webhooks: WebhookStore;
  readonly webhookDeliveries: WebhookDeliveryStore;
  readonly clicks: ClickStore;
  readonly rotatorHealth: RotatorHealthStore;
  readonly domains: DomainStore;
  readonly ipLists: IpListStore;
  readonly passwordAttempts: PasswordAttempts;
  readonly conversions: ConversionStore;
  readonly partnerPlans: PartnerPlanStore;
  readonly ledger: LedgerStore;
  readonly reports: ReportStore;
  readonly alerts: AlertStore;
  readonly rollups: RollupStore;
  readonly exportSlots: ExportSlots;
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly memberships: MembershipStore;
  readonly invites: InviteStore;
  readonly signInLinks: SignInLinkStore;
  /** Dashboard sign-in attempts, per account and per client address (the same windowed count as link passwords). */
  readonly signInAttempts: { readonly perAccount: PasswordAttempts; readonly perIp: PasswordAttempts };
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
    this.webhooks = new WebhookStore(db);
    this.webhookDeliveries = new WebhookDeliveryStore(db);
    this.clicks = new ClickStore(db);
    this.rotatorHealth = new RotatorHealthStore(db);
    this.domains = new DomainStore(db);
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
    this.exportSlots = new ExportSlots(db, config.analytics.exportsPerWorkspace);
    this.users = new UserStore(db);
    this.sessions = new SessionStore(db);
    this.memberships = new MembershipStore(db);
    this.invites = new InviteStore(db);
    this.signInLinks = new SignInLinkStore(db);
    this.imports = new ImportStore(db);
    this.oauth = new OAuthStore(db);
    const { signInMaxAttempts, signInMaxAttemptsPerIp, signInWindowMs } = config.dashboard;
    this.signInAttempts = {
      perAccount: new PasswordAttempts(db, { maxAttempts: signInMaxAttempts, windowMs: signInWindowMs, secretKey: config.secretKey }),
      perIp: new PasswordAttempts(db, { maxAttempts: signInMaxAttemptsPerIp, windowMs: signInWindowMs, secretKey: config.secretKey }),
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
      this.ipLists.ensureIndexes(),
      this.passwordAttempts.ensureIndexes(),
      this.conversions.ensureIndexes(),
      this.partnerPlans.ensureIndexes(),
      this.ledger.ensureIndexes(),
      this.reports.ensureIndexes(),
      this.alerts.ensureIndexes(),
      this.rollups.ensureIndexes(),
      this.exportSlots.ensureIndexes(),
      this.users.ensureIndexes(),
      this.sessions.ensureIndexes(),
      this.memberships.ensureIndexes(),
      this.invites.ensureIndexes(),
      this.signInLinks.ensureIndexes(),
      this.imports.ensureIndexes(),
    ]);
  }
}
