// Custom domains without Kubernetes: the worker does what the operator and cert-manager do in a cluster. Each round
// (one replica at a time, by lease) it checks the DNS of pending domains with the operator's own check and backoff,
// orders a certificate through ACME for each domain the check verified, and renews certificates at a fixed part of
// their lifetime. Every change of state goes through the same transition as the operator's DOMAINS messages
// (domain-events.ts), so the API, the events (`domain.pending_ssl`, `domain.activated`, `domain.error`) and the
// webhooks cannot tell the two apart. Only a domain whose DNS was verified here is ever ordered a certificate.
import { Counter, type Registry } from 'prom-client';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { Lease } from '../platform/lease.ts';
import type { Logger } from '../platform/logger.ts';
import { Periodic } from '../platform/periodic.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import type { DnsResult, DnsSubject } from './dns-check.ts';
import type { DomainMessage, DomainPhase } from './domain-events.ts';
import type { DomainDoc, DomainStore } from './domain.store.ts';
import { IssuanceError, type CertificateIssuer } from './acme-issuer.ts';
import type { Attempts, DomainTlsDoc, DomainTlsStore } from './tls.store.ts';

export const DNS_TIMED_OUT = 'DNSVerificationTimedOut';
/** The one generation of a self-managed domain: its spec never changes (a new hostname is a new domain). */
const GENERATION = 1;
/** Retries of a failed issuance or renewal: a CA limits failed validations (Let's Encrypt: 5 an hour per host). */
export const ISSUANCE_BACKOFF_MS: readonly number[] = [60_000, 300_000, 900_000, 3_600_000, 6 * 3_600_000];

export interface TlsProvisionerOptions {
  domains: DomainStore;
  store: DomainTlsStore;
  dns: { check(subject: DnsSubject): Promise<DnsResult> };
  issuer: CertificateIssuer;
  /** Seals certificate private keys (purpose TLS_KEY_SEAL_PURPOSE, the domain id bound in). */
  keyBox: SecretBox;
  /** Applies a state change with its event, as for an operator message (DomainEvents.apply). */
  transition: (message: DomainMessage) => Promise<unknown>;
  bus: CacheBus | null;
  lease: Lease;
  logger: Logger;
  registry?: Registry;
  intervalMs: number;
  dnsBackoffMs: readonly number[];
  giveUpAfterMs: number;
  renewAtFraction: number;
  issuanceBackoffMs?: readonly number[];
  /** Domains looked at per round, per kind of work. */
  batch?: number;
  now?: () => Date;
}

/** The delay before attempt `attempts + 1`; the schedule's last step repeats (as the operator's). */
export function backoffAfter(attempts: number, schedule: readonly number[]): number {
  if (schedule.length === 0) return 0;
  return schedule[Math.min(Math.max(attempts, 1), schedule.length) - 1]!;
}

/** When a certificate valid from `notBefore` to `notAfter` is renewed: at `fraction` of its lifetime. */
export function renewAfter(notBefore: Date, notAfter: Date, fraction: number): Date {
  return new Date(notBefore.getTime() + Math.floor((notAfter.getTime() - notBefore.getTime()) * fraction));
}

export class TlsProvisioner {
  private readonly o: TlsProvisionerOptions;
  private readonly periodic: Periodic;
  private readonly now: () => Date;
  private readonly certificates: Counter<'result'>;

  constructor(options: TlsProvisionerOptions) {
    this.o = options;
    this.now = options.now ?? (() => new Date());
    this.certificates = new Counter({
      name: 'linkplane_tls_certificates_total',
      help: 'ACME certificate orders for custom domains, by result (issued, renewed, failed)',
      labelNames: ['result'],
      registers: options.registry ? [options.registry] : [],
    });
    for (const result of ['issued', 'renewed', 'failed']) this.certificates.inc({ result }, 0);
    this.periodic = new Periodic({
      intervalMs: options.intervalMs,
      lease: options.lease,
      logger: options.logger,
      failure: 'custom domain TLS round failed',
      round: () => this.round(),
      atStart: true,
    });
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One round now (tests, and the first round at start). */
  runOnce(): Promise<void> {
    return this.periodic.runOnce();
  }

  private async round(): Promise<void> {
    const batch = this.o.batch ?? 100;
    // Every domain with work possibly due (each skipped cheaply when its next attempt is later); a DNS timeout waits
    // for the customer to connect the domain again and is not even read.
    const pending = this.o.domains.collection
      .find({ $or: [{ status: { $in: ['pending_verification', 'pending_ssl'] } }, { status: 'error', 'error.reason': { $ne: DNS_TIMED_OUT } }] })
      .sort({ updated_at: 1 });
    for await (const doc of pending) {
      // An order can take a while: the lease is renewed between domains, and a replica that lost it stops here.
      if (!(await this.o.lease.acquire())) return;
      await this.guarded(doc.hostname, () => this.advance(doc));
    }
    for (const due of await this.o.store.dueForRenewal(this.now(), batch)) {
      if (!(await this.o.lease.acquire())) return;
      await this.guarded(due.hostname, () => this.renew(due));
    }
    for (const orphan of await this.o.store.orphans((ids) => this.existing(ids), batch)) {
      await this.o.store.remove(orphan._id);
      await this.o.bus?.publish({ kind: 'domain', id: orphan._id, keys: [orphan.hostname] });
    }
  }

  private async guarded(hostname: string, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      // One domain's failure (a database hiccup) must not hold up the others; the next round tries again.
      this.o.logger.warn({ err: error, hostname }, 'custom domain TLS step failed');
    }
  }

  private async existing(ids: string[]): Promise<Set<string>> {
    const docs = await this.o.domains.collection.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray();
    return new Set(docs.map((d) => d._id));
  }

  /** A pending domain one step further: its DNS checked when due, then its certificate ordered. */
  private async advance(doc: DomainDoc): Promise<void> {
    const now = this.now();
    const state = await this.o.store.get(doc._id);
    if (doc.status === 'pending_verification') {
      const dns = state?.dns;
      if (dns && dns.next_at > now) return;
      const result = await this.o.dns.check({ hostname: doc.hostname, verificationToken: doc.verification_token });
      const attempts = (dns?.attempts ?? 0) + 1;
      const firstAt = dns?.first_at ?? now;
      const check: Attempts = {
        attempts,
        first_at: firstAt,
        next_at: new Date(now.getTime() + backoffAfter(attempts, this.o.dnsBackoffMs)),
        last_error: result.verified ? null : result.error,
      };
      await this.o.store.update(doc._id, doc.hostname, { dns: check }, now);
      if (!result.verified) {
        if (now.getTime() - firstAt.getTime() >= this.o.giveUpAfterMs) {
          await this.move(doc, 'Error', DNS_TIMED_OUT, `DNS records were not found within ${Math.round(this.o.giveUpAfterMs / 60_000)} minutes: ${result.error}`);
        }
        return;
      }
      await this.move(doc, 'PendingSSL', null, null);
      await this.issue(doc, state, false);
      return;
    }
    // An Error of DNS stays until the domain is connected again; an Error of issuance is retried with backoff.
    if (doc.status === 'error' && doc.error?.reason === DNS_TIMED_OUT) return;
    if (state?.issuance && state.issuance.next_at > now) return;
    await this.issue(doc, state, false);
  }

  private async renew(due: DomainTlsDoc): Promise<void> {
    const doc = await this.o.domains.collection.findOne({ _id: due._id });
    // Not active: a pending or failed domain is taken up by advance(); a deleted one is removed as an orphan.
    if (!doc || doc.status !== 'active') return;
    await this.issue(doc, due, true);
  }

  /**
   * Orders a certificate and stores it (key sealed). A first certificate activates the domain; a renewal replaces
   * the certificate every redirect serves. A failure puts a pending domain in Error; a failed renewal leaves the
   * domain active on its current certificate until that one expires.
   */
  private async issue(doc: DomainDoc, state: DomainTlsDoc | null, renewal: boolean): Promise<void> {
    let issued;
    try {
      issued = await this.o.issuer.issue(doc.hostname);
    } catch (error) {
      const now = this.now();
      const reason = error instanceof IssuanceError ? error.reason : 'IssuanceFailed';
      const message = error instanceof Error ? error.message : String(error);
      const attempts = (state?.issuance?.attempts ?? 0) + 1;
      const schedule = this.o.issuanceBackoffMs ?? ISSUANCE_BACKOFF_MS;
      await this.o.store.update(
        doc._id,
        doc.hostname,
        { issuance: { attempts, first_at: state?.issuance?.first_at ?? now, next_at: new Date(now.getTime() + backoffAfter(attempts, schedule)), last_error: message } },
        now,
      );
      this.certificates.inc({ result: 'failed' });
      this.o.logger.warn({ err: error, hostname: doc.hostname, attempts, renewal }, `certificate for ${doc.hostname} not obtained`);
      const current = state?.certificate;
      if (!renewal || !current || current.not_after <= now) {
        await this.move(doc, 'Error', renewal ? 'CertificateExpired' : reason, renewal ? `The certificate expired and its renewal failed: ${message}` : message);
      }
      return;
    }
    const now = this.now();
    await this.o.store.update(
      doc._id,
      doc.hostname,
      {
        certificate: {
          pem: issued.pem,
          key_sealed: this.o.keyBox.seal(issued.keyPem, doc._id),
          not_before: issued.notBefore,
          not_after: issued.notAfter,
          renew_after: renewAfter(issued.notBefore, issued.notAfter, this.o.renewAtFraction),
          issuer: issued.issuer,
          issued_at: now,
        },
        issuance: null,
      },
      now,
      { issued_count: 1 },
    );
    this.certificates.inc({ result: renewal ? 'renewed' : 'issued' });
    this.o.logger.info({ hostname: doc.hostname, not_after: issued.notAfter.toISOString(), renewal }, `certificate for ${doc.hostname} ${renewal ? 'renewed' : 'issued'}`);
    if (doc.status === 'active') {
      // Every redirect drops the certificate it holds for the host and loads this one at the next handshake.
      await this.o.bus?.publish({ kind: 'domain', id: doc._id, keys: [doc.hostname] });
    } else {
      await this.move(doc, 'Active', null, null);
    }
  }

  /** The state change with its event, exactly as an operator message would make it; the local copy follows. */
  private async move(doc: DomainDoc, phase: DomainPhase, reason: string | null, message: string | null): Promise<void> {
    const type = phase === 'Active' ? 'domain.activated' : phase === 'PendingSSL' ? 'domain.pending_ssl' : 'domain.error';
    await this.o.transition({
      domain_id: doc._id,
      hostname: doc.hostname,
      tenant: doc.workspace_id,
      type,
      phase,
      // A domain once provisioned by the operator keeps its generation: an older one would be ignored as stale.
      generation: Math.max(doc.generation_seen ?? GENERATION, GENERATION),
      reason,
      message,
      at: this.now().toISOString(),
    });
    doc.status = phase === 'Active' ? 'active' : phase === 'PendingSSL' ? 'pending_ssl' : 'error';
    doc.error = phase === 'Error' ? { reason: reason ?? 'Unknown', message: message ?? '' } : null;
  }
}
