// The pure half of a reconcile: from the Domain, the time and what was observed (DNS, the Certificate), which stage
// the domain is in and what its status should be. No I/O here, so every rule of the phase machine is unit-tested.
import { isDeepStrictEqual } from 'node:util';
import type { Condition, ConditionStatus, ConditionType, DnsRecord, Domain, DomainStatus, Phase } from './domain.ts';

/** What the Certificate says, reduced to what the phase machine needs. */
export type CertificateState =
  | { state: 'pending'; message: string }
  | { state: 'ready' }
  | { state: 'failed'; reason: string; message: string };

/** What to do in this reconcile. */
export type Stage =
  /** Check DNS now; `reset` when a new generation or a retry starts the checks (and the give-up clock) afresh. */
  | { kind: 'verify'; reset: boolean }
  /** The next DNS check is not due yet. */
  | { kind: 'wait'; dueInMs: number }
  /** DNS gave up for this generation: nothing to do until the spec changes or a retry is asked for. */
  | { kind: 'timedOut' }
  /** DNS is verified for this generation: keep the Certificate and route, follow the Certificate. */
  | { kind: 'certificate' };

export interface StageOptions {
  now: Date;
  backoffMs: readonly number[];
  retry: boolean;
}

export const TIMED_OUT = 'DNSVerificationTimedOut';

export function generationOf(domain: Domain): number {
  return domain.metadata.generation ?? 1;
}

/** The delay before DNS check number `attempts + 1`; the schedule's last step repeats. */
export function backoffAfter(attempts: number, backoffMs: readonly number[]): number {
  if (backoffMs.length === 0) return 0;
  return backoffMs[Math.min(Math.max(attempts, 1), backoffMs.length) - 1]!;
}

export function planStage(domain: Domain, options: StageOptions): Stage {
  const status = domain.status ?? {};
  const fresh = status.phase === undefined || status.observedGeneration !== generationOf(domain);
  if (fresh || options.retry) return { kind: 'verify', reset: true };
  if (status.phase === 'PendingVerification') {
    const check = status.dnsCheck;
    if (!check) return { kind: 'verify', reset: true };
    const due = Date.parse(check.lastCheckedAt) + backoffAfter(check.attempts, options.backoffMs);
    const dueInMs = due - options.now.getTime();
    return dueInMs > 0 ? { kind: 'wait', dueInMs } : { kind: 'verify', reset: false };
  }
  if (status.phase === 'Error' && condition(status, 'DNSVerified')?.reason === TIMED_OUT) return { kind: 'timedOut' };
  return { kind: 'certificate' };
}

/** What a reconcile found, as input to the next status. */
export type Outcome =
  | { kind: 'dnsNotVerified'; error: string; reset: boolean }
  | { kind: 'dnsVerified'; certificate: CertificateState; reset: boolean }
  | { kind: 'certificate'; certificate: CertificateState };

export interface StatusContext {
  now: Date;
  records: readonly DnsRecord[];
  certificateName: string;
  giveUpAfterMs: number;
}

/** A change of phase worth telling the world about (a DOMAINS message and a Kubernetes Event). */
export interface Transition {
  phase: Phase;
  reason: string;
  message: string;
}

export function nextStatus(domain: Domain, outcome: Outcome, context: StatusContext): DomainStatus {
  const current = domain.status ?? {};
  const generation = generationOf(domain);
  const now = context.now.toISOString();
  const conditions = new ConditionSet(current.conditions ?? [], generation, now);
  const status: DomainStatus = {
    phase: 'PendingVerification',
    observedGeneration: generation,
    dnsRecords: context.records.map((record) => ({ ...record })),
    certificateName: context.certificateName,
    lastEventPhase: current.lastEventPhase,
    lastEventGeneration: current.lastEventGeneration,
    dnsCheck: current.dnsCheck,
  };

  if (outcome.kind !== 'certificate') {
    const previous = outcome.reset ? undefined : current.dnsCheck;
    status.dnsCheck = {
      attempts: (previous?.attempts ?? 0) + 1,
      firstCheckedAt: previous?.firstCheckedAt ?? now,
      lastCheckedAt: now,
      ...(outcome.kind === 'dnsNotVerified' ? { lastError: outcome.error } : {}),
    };
  }

  if (outcome.kind === 'dnsNotVerified') {
    const elapsed = context.now.getTime() - Date.parse(status.dnsCheck!.firstCheckedAt);
    conditions.set('CertificateReady', 'Unknown', 'WaitingForDNS', 'The certificate is requested once DNS is verified');
    if (elapsed >= context.giveUpAfterMs) {
      const message = `DNS records were not found within ${formatDuration(context.giveUpAfterMs)}: ${outcome.error}`;
      status.phase = 'Error';
      conditions.set('DNSVerified', 'False', TIMED_OUT, message);
      conditions.set('Ready', 'False', TIMED_OUT, message);
    } else {
      conditions.set('DNSVerified', 'False', 'RecordsNotFound', outcome.error);
      conditions.set('Ready', 'False', 'PendingVerification', 'Waiting for the DNS records to be set');
    }
    return finish(status, conditions);
  }

  conditions.set('DNSVerified', 'True', 'Verified', 'The verification TXT record and the CNAME or A record are set');
  const certificate = outcome.certificate;
  if (certificate.state === 'pending' && outcome.kind === 'certificate' && current.phase === 'Error') {
    // cert-manager retries a failed issuance by itself; the domain stays in Error, with the failure, until it succeeds.
    const failure = condition(current, 'CertificateReady');
    status.phase = 'Error';
    conditions.set('CertificateReady', 'False', failure?.reason ?? 'Failed', failure?.message ?? certificate.message);
    conditions.set('Ready', 'False', failure?.reason ?? 'Failed', failure?.message ?? certificate.message);
  } else if (certificate.state === 'ready') {
    status.phase = 'Active';
    conditions.set('CertificateReady', 'True', 'Ready', 'The certificate is issued and valid');
    conditions.set('Ready', 'True', 'Active', 'The domain serves short links over HTTPS');
  } else if (certificate.state === 'failed') {
    status.phase = 'Error';
    conditions.set('CertificateReady', 'False', certificate.reason, certificate.message);
    conditions.set('Ready', 'False', certificate.reason, certificate.message);
  } else {
    status.phase = 'PendingSSL';
    conditions.set('CertificateReady', 'False', 'Issuing', certificate.message);
    conditions.set('Ready', 'False', 'PendingSSL', 'Waiting for the certificate to be issued');
  }
  return finish(status, conditions);
}

/** The phase change a new status makes, if it deserves a DOMAINS message (each phase once per generation). */
export function eventFor(domain: Domain, next: DomainStatus): Transition | null {
  const phase = next.phase;
  if (phase === undefined || phase === 'PendingVerification') return null;
  const generation = generationOf(domain);
  if (next.lastEventPhase === phase && next.lastEventGeneration === generation) return null;
  const ready = condition(next, 'Ready');
  return { phase, reason: ready?.reason ?? phase, message: ready?.message ?? '' };
}

/** Equal statuses are not written: a resync that changes nothing sends nothing. */
export function statusEquals(current: DomainStatus | undefined, next: DomainStatus): boolean {
  return isDeepStrictEqual(withoutUndefined(current ?? {}), withoutUndefined(next));
}

export function condition(status: DomainStatus, type: ConditionType): Condition | undefined {
  return status.conditions?.find((c) => c.type === type);
}

/** `72h`, `5m`, `50ms`: the largest whole unit, for messages. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

const CONDITION_ORDER: readonly ConditionType[] = ['DNSVerified', 'CertificateReady', 'Ready'];

/** Conditions as cert-manager keeps them: lastTransitionTime moves only when the status does. */
class ConditionSet {
  private readonly byType = new Map<ConditionType, Condition>();
  private readonly previous: readonly Condition[];
  private readonly generation: number;
  private readonly now: string;

  constructor(previous: readonly Condition[], generation: number, now: string) {
    this.previous = previous;
    this.generation = generation;
    this.now = now;
  }

  set(type: ConditionType, status: ConditionStatus, reason: string, message: string): void {
    const before = this.previous.find((c) => c.type === type);
    const lastTransitionTime = before && before.status === status ? before.lastTransitionTime : this.now;
    this.byType.set(type, { type, status, reason, message, lastTransitionTime, observedGeneration: this.generation });
  }

  list(): Condition[] {
    return CONDITION_ORDER.map((type) => this.byType.get(type)).filter((c): c is Condition => c !== undefined);
  }
}

function finish(status: DomainStatus, conditions: ConditionSet): DomainStatus {
  status.conditions = conditions.list();
  return withoutUndefined(status);
}

function withoutUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
