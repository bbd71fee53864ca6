// One reconcile of one Domain: read it from the informer cache, act on the world (DNS, Certificate, Ingress), compute
// the status (operator/status.ts), tell the world about a phase change, and write status only when it changed.
// The DOMAINS message goes out (acknowledged) before the status that records it, so a crash in between re-sends
// it with the same message id, which JetStream drops; a restart never loses or repeats one.
import { isDeepStrictEqual } from 'node:util';
import type { ObjectCache } from '@kubernetes/client-node';
import type { Logger } from '../src/platform/logger.ts';
import type { OperatorConfig } from '../src/config/operator.ts';
import {
  API_VERSION,
  certificateName,
  DOMAIN_ID_LABEL,
  domainKey,
  FINALIZER,
  KIND,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  ownerReference,
  RETRY_ANNOTATION,
  type Certificate,
  type Domain,
  type DomainStatus,
  type Ingress,
} from './domain.ts';
import { expectedRecords, type DnsResult } from './dns-check.ts';
import { RESOURCES, type KubeClient } from './kube.ts';
import { domainEvent, type DomainEventMessage, type DomainEventPublisher } from './publisher.ts';
import {
  backoffAfter,
  eventFor,
  generationOf,
  nextStatus,
  planStage,
  statusEquals,
  type CertificateState,
  type Outcome,
} from './status.ts';

export interface DnsVerifier {
  check(spec: Domain['spec']): Promise<DnsResult>;
}

export interface ReconcilerHooks {
  /** Runs after a DOMAINS message was acknowledged and before the status records it (tests simulate a crash here). */
  afterPublish?: (event: DomainEventMessage) => Promise<void> | void;
}

export interface ReconcilerOptions {
  kube: KubeClient;
  domains: ObjectCache<Domain>;
  certificates: ObjectCache<Certificate>;
  ingresses: ObjectCache<Ingress>;
  dns: DnsVerifier;
  publisher: DomainEventPublisher;
  config: Pick<OperatorConfig, 'identity' | 'namespace' | 'certificate' | 'ingress' | 'dns'>;
  logger: Logger;
  hooks?: ReconcilerHooks;
  now?: () => Date;
}

export interface ReconcileOutcome {
  /** Reconcile again after this long (the next DNS check). */
  requeueAfterMs?: number;
}

/** cert-manager Ready reasons that mean issuance failed (rather than "not yet"). */
const CERTIFICATE_FAILURES = new Set(['Failed', 'Expired', 'InvalidCertificate', 'InvalidKeyPair']);

export function certificateState(certificate: Certificate | null | undefined): CertificateState {
  const conditions = certificate?.status?.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  const issuing = conditions.find((c) => c.type === 'Issuing');
  if (ready?.status === 'True') return { state: 'ready' };
  if (issuing?.status === 'False' && issuing.reason === 'Failed') {
    return { state: 'failed', reason: 'Failed', message: issuing.message || ready?.message || 'cert-manager could not issue the certificate' };
  }
  if (ready?.status === 'False' && ready.reason !== undefined && CERTIFICATE_FAILURES.has(ready.reason)) {
    return { state: 'failed', reason: ready.reason, message: ready.message || 'cert-manager could not issue the certificate' };
  }
  return { state: 'pending', message: ready?.message || 'Waiting for cert-manager to issue the certificate' };
}

export class Reconciler {
  private readonly o: ReconcilerOptions;
  private readonly now: () => Date;
  /**
   * The objects this replica wrote, by key, with the resourceVersions they replaced: until the informer catches up
   * with our own write, its cache shows an older version, and acting on it would repeat the work (and the events).
   */
  private readonly written = new Map<string, { superseded: Set<string>; latest: Domain }>();

  constructor(options: ReconcilerOptions) {
    this.o = options;
    this.now = options.now ?? (() => new Date());
  }

  async reconcile(key: string): Promise<ReconcileOutcome> {
    let domain = this.current(key);
    if (!domain) return {};
    if (domain.metadata.deletionTimestamp !== undefined) {
      await this.cleanUp(domain);
      return {};
    }
    const finalizers = domain.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) {
      domain = await this.patch(domain, { metadata: { finalizers: [...finalizers, FINALIZER], resourceVersion: domain.metadata.resourceVersion } });
    }

    const now = this.now();
    const retry = domain.metadata.annotations?.[RETRY_ANNOTATION] !== undefined;
    const stage = planStage(domain, { now, backoffMs: this.o.config.dns.backoffMs, retry });
    if (stage.kind === 'wait') return { requeueAfterMs: stage.dueInMs };
    if (stage.kind === 'timedOut') return {};

    let outcome: Outcome;
    if (stage.kind === 'verify') {
      const dns = await this.o.dns.check(domain.spec);
      outcome = dns.verified
        ? { kind: 'dnsVerified', certificate: certificateState(await this.ensureOwned(domain)), reset: stage.reset }
        : { kind: 'dnsNotVerified', error: dns.error, reset: stage.reset };
    } else {
      outcome = { kind: 'certificate', certificate: certificateState(await this.ensureOwned(domain)) };
    }

    const next = nextStatus(domain, outcome, {
      now,
      records: expectedRecords(domain.spec, this.o.config.dns),
      certificateName: certificateName(domain),
      giveUpAfterMs: this.o.config.dns.giveUpAfterMs,
    });
    const transition = eventFor(domain, next);
    if (transition) {
      const event = domainEvent(domain, transition, now);
      await this.o.publisher.publish(event);
      await this.o.hooks?.afterPublish?.(event);
      next.lastEventPhase = transition.phase;
      next.lastEventGeneration = generationOf(domain);
    }
    const previous = domain.status;
    if (!statusEquals(previous, next)) domain = await this.writeStatus(domain, next);
    await this.record(domain, previous, next);
    if (retry) await this.patch(domain, { metadata: { annotations: { [RETRY_ANNOTATION]: null } } });

    if (next.phase === 'PendingVerification') return { requeueAfterMs: backoffAfter(next.dnsCheck?.attempts ?? 1, this.o.config.dns.backoffMs) };
    return {};
  }

  /** The Domain to act on: the informer's copy, unless it is older than what this replica itself wrote. */
  private current(key: string): Domain | undefined {
    const [namespace, name] = splitKey(key);
    const cached = this.o.domains.get(name, namespace);
    const mine = this.written.get(key);
    if (cached && mine && mine.superseded.has(cached.metadata.resourceVersion ?? '')) return mine.latest;
    this.written.delete(key);
    return cached;
  }

  private remember(before: Domain, after: Domain): Domain {
    const key = domainKey(before);
    const entry = this.written.get(key) ?? { superseded: new Set<string>(), latest: after };
    if (before.metadata.resourceVersion !== after.metadata.resourceVersion) entry.superseded.add(before.metadata.resourceVersion ?? '');
    entry.latest = after;
    this.written.set(key, entry);
    return after;
  }

  private async patch(domain: Domain, patch: unknown): Promise<Domain> {
    const after = await this.o.kube.mergePatch<Domain>(RESOURCES.domains, this.namespaceOf(domain), domain.metadata.name, patch);
    return this.remember(domain, after);
  }

  private async writeStatus(domain: Domain, next: DomainStatus): Promise<Domain> {
    const body = { metadata: { resourceVersion: domain.metadata.resourceVersion }, status: statusPatch(domain.status, next) };
    const after = await this.o.kube.mergePatch<Domain>(RESOURCES.domains, this.namespaceOf(domain), domain.metadata.name, body, 'status');
    return this.remember(domain, after);
  }

  private async cleanUp(domain: Domain): Promise<void> {
    const finalizers = domain.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) return;
    const namespace = this.namespaceOf(domain);
    await this.o.kube.delete(RESOURCES.certificates, namespace, certificateName(domain));
    await this.o.kube.delete(RESOURCES.ingresses, namespace, domain.metadata.name);
    await this.patch(domain, {
      metadata: { finalizers: finalizers.filter((f) => f !== FINALIZER), resourceVersion: domain.metadata.resourceVersion },
    });
    // The entry written by that patch stays: until the informer sees the Domain gone, its cached copy (with our
    // finalizer) is superseded and must not be cleaned up twice.
    this.o.logger.info({ domain: domain.metadata.name }, 'domain deleted: certificate and route removed');
  }

  /** Creates or corrects the Certificate and the Ingress; answers the Certificate as it now is. */
  private async ensureOwned(domain: Domain): Promise<Certificate> {
    const namespace = this.namespaceOf(domain);
    const certificate = await this.ensure<Certificate>(RESOURCES.certificates, this.o.certificates, this.desiredCertificate(domain));
    await this.ensure<Ingress>(RESOURCES.ingresses, this.o.ingresses, this.desiredIngress(domain));
    return certificate.metadata.namespace === undefined ? { ...certificate, metadata: { ...certificate.metadata, namespace } } : certificate;
  }

  private async ensure<T extends Certificate | Ingress>(
    resource: (typeof RESOURCES)['certificates' | 'ingresses'],
    cache: ObjectCache<T>,
    desired: T,
  ): Promise<T> {
    const namespace = desired.metadata.namespace!;
    const name = desired.metadata.name;
    let existing: T | null = cache.get(name, namespace) ?? null;
    if (existing === null) {
      try {
        return await this.o.kube.create<T>(resource, namespace, desired);
      } catch (error) {
        // Created meanwhile (a cache not yet caught up): read it and compare as below.
        existing = await this.o.kube.get<T>(resource, namespace, name);
        if (existing === null) throw error;
      }
    }
    if (covers(existing.spec, desired.spec)) return existing;
    return this.o.kube.mergePatch<T>(resource, namespace, name, { spec: desired.spec });
  }

  private desiredCertificate(domain: Domain): Certificate {
    const { certificate } = this.o.config;
    return {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: this.ownedMetadata(domain, certificateName(domain)),
      spec: {
        secretName: secretName(domain),
        dnsNames: [domain.spec.hostname],
        issuerRef: domain.spec.issuerRef ?? { name: certificate.issuerName, kind: certificate.issuerKind, group: 'cert-manager.io' },
      },
    };
  }

  private desiredIngress(domain: Domain): Ingress {
    const { ingress } = this.o.config;
    const host = domain.spec.hostname;
    return {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: this.ownedMetadata(domain, domain.metadata.name),
      spec: {
        ingressClassName: ingress.className,
        tls: [{ hosts: [host], secretName: secretName(domain) }],
        rules: [
          {
            host,
            http: {
              paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: ingress.serviceName, port: { number: ingress.servicePort } } } }],
            },
          },
        ],
      },
    };
  }

  private ownedMetadata(domain: Domain, name: string): Certificate['metadata'] {
    return {
      name,
      namespace: this.namespaceOf(domain),
      labels: { [DOMAIN_ID_LABEL]: domain.spec.domainId, [MANAGED_BY_LABEL]: MANAGED_BY },
      ownerReferences: [ownerReference(domain)],
    };
  }

  /** Kubernetes Events on the Domain: each phase change, and failed DNS checks (the 1st, 2nd, 4th, 8th… only). */
  private async record(domain: Domain, previous: DomainStatus | undefined, next: DomainStatus): Promise<void> {
    const attempts = next.dnsCheck?.attempts ?? 0;
    if (next.phase === 'PendingVerification' && next.dnsCheck?.lastError !== undefined && (attempts & (attempts - 1)) === 0 && attempts !== previous?.dnsCheck?.attempts) {
      await this.event(domain, 'Warning', 'DNSNotVerified', `DNS check ${attempts}: ${next.dnsCheck.lastError}`);
    }
    if (previous?.phase === next.phase) return;
    switch (next.phase) {
      case 'PendingVerification':
        // A new domain says so with its first DNSNotVerified; this is for a domain verified again.
        if (previous?.phase !== undefined) await this.event(domain, 'Normal', 'VerifyingDNS', 'Verifying the DNS records again');
        break;
      case 'PendingSSL':
        await this.event(domain, 'Normal', 'DNSVerified', `DNS verified; certificate ${certificateName(domain)} requested`);
        break;
      case 'Active':
        await this.event(domain, 'Normal', 'Active', 'The certificate is ready; the domain is active');
        break;
      case 'Error': {
        const ready = next.conditions?.find((c) => c.type === 'Ready');
        await this.event(domain, 'Warning', ready?.reason ?? 'Error', ready?.message ?? 'The domain failed');
        break;
      }
      default:
        break;
    }
  }

  private async event(domain: Domain, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const now = new Date().toISOString();
    const namespace = this.namespaceOf(domain);
    try {
      await this.o.kube.create(RESOURCES.events, namespace, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: `${domain.metadata.name}.`, namespace },
        involvedObject: {
          apiVersion: API_VERSION,
          kind: KIND,
          name: domain.metadata.name,
          namespace,
          uid: domain.metadata.uid,
          resourceVersion: domain.metadata.resourceVersion,
        },
        reason,
        message: message.slice(0, 1024),
        type,
        count: 1,
        firstTimestamp: now,
        lastTimestamp: now,
        source: { component: 'linkplane-operator' },
        reportingComponent: 'linkplane.io/operator',
        reportingInstance: this.o.config.identity,
      });
    } catch (error) {
      // An Event is a courtesy to whoever runs kubectl describe; failing to write one must not fail the reconcile.
      this.o.logger.warn({ err: error, domain: domain.metadata.name, reason }, 'could not record an event');
    }
  }

  private namespaceOf(domain: Domain): string {
    return domain.metadata.namespace ?? this.o.config.namespace;
  }
}

/** A merge patch that turns `current` into `next`: fields `next` dropped are sent as null. */
export function statusPatch(current: DomainStatus | undefined, next: DomainStatus): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...next };
  for (const key of Object.keys(current ?? {})) if (!(key in next)) patch[key] = null;
  if (next.dnsCheck && current?.dnsCheck?.lastError !== undefined && next.dnsCheck.lastError === undefined) {
    patch.dnsCheck = { ...next.dnsCheck, lastError: null };
  }
  return patch;
}

export function splitKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}

/**
 * Whether `actual` holds every field `desired` sets (arrays compared element by element): fields the API server or
 * another controller added by default are not a difference worth a write.
 */
export function covers(actual: unknown, desired: unknown): boolean {
  if (Array.isArray(desired)) {
    return Array.isArray(actual) && actual.length === desired.length && desired.every((item, i) => covers(actual[i], item));
  }
  if (desired !== null && typeof desired === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    return Object.entries(desired).every(([key, value]) => covers((actual as Record<string, unknown>)[key], value));
  }
  return isDeepStrictEqual(actual, desired);
}

function secretName(domain: Domain): string {
  return `${domain.metadata.name}-tls`;
}
