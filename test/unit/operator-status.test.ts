import { expect } from 'chai';
import type { Condition, Domain, DomainStatus } from '../../operator/domain.ts';
import { certificateState, covers, statusPatch } from '../../operator/reconcile.ts';
import {
  backoffAfter,
  condition,
  eventFor,
  nextStatus,
  planStage,
  statusEquals,
  TIMED_OUT,
  type StatusContext,
} from '../../operator/status.ts';

const T0 = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number): Date => new Date(T0.getTime() + ms);
const BACKOFF = [1000, 5000, 30_000];

function aDomain(overrides: { generation?: number; status?: DomainStatus; annotations?: Record<string, string> } = {}): Domain {
  return {
    apiVersion: 'linkplane.io/v1alpha1',
    kind: 'Domain',
    metadata: { name: 'go.example.com', namespace: 'lp', uid: 'u1', resourceVersion: '7', generation: overrides.generation ?? 1, annotations: overrides.annotations },
    spec: { hostname: 'go.example.com', tenant: 'ws_1', domainId: 'dom_1', verificationToken: 'tok' },
    ...(overrides.status ? { status: overrides.status } : {}),
  };
}

function context(now: Date, overrides: Partial<StatusContext> = {}): StatusContext {
  return {
    now,
    records: [{ type: 'TXT', name: '_linkplane.go.example.com', value: 'linkplane-verify=tok' }],
    certificateName: 'go.example.com',
    giveUpAfterMs: 60_000,
    ...overrides,
  };
}

/** Runs a sequence of outcomes through nextStatus the way the reconciler does, recording the DOMAINS events. */
function advance(domain: Domain, status: DomainStatus): Domain {
  const transition = eventFor(domain, status);
  if (transition) {
    status.lastEventPhase = transition.phase;
    status.lastEventGeneration = domain.metadata.generation;
  }
  return { ...domain, status };
}

describe('operator status computation', () => {
  it('starts a new domain with a DNS check and a fresh give-up clock', () => {
    expect(planStage(aDomain(), { now: T0, backoffMs: BACKOFF, retry: false })).to.deep.equal({ kind: 'verify', reset: true });
  });

  it('records a failed DNS check and waits the backoff step before the next', () => {
    const status = nextStatus(aDomain(), { kind: 'dnsNotVerified', error: 'TXT: no record', reset: true }, context(T0));
    expect(status.phase).to.equal('PendingVerification');
    expect(status.dnsCheck).to.deep.equal({ attempts: 1, firstCheckedAt: T0.toISOString(), lastCheckedAt: T0.toISOString(), lastError: 'TXT: no record' });
    expect(condition(status, 'DNSVerified')).to.include({ status: 'False', reason: 'RecordsNotFound', message: 'TXT: no record' });
    expect(condition(status, 'CertificateReady')).to.include({ status: 'Unknown', reason: 'WaitingForDNS' });
    expect(eventFor(aDomain(), status)).to.equal(null);

    const domain = aDomain({ status });
    expect(planStage(domain, { now: at(400), backoffMs: BACKOFF, retry: false })).to.deep.equal({ kind: 'wait', dueInMs: 600 });
    expect(planStage(domain, { now: at(1000), backoffMs: BACKOFF, retry: false })).to.deep.equal({ kind: 'verify', reset: false });
  });

  it('repeats the last backoff step once the schedule is used up', () => {
    expect([1, 2, 3, 4, 9].map((n) => backoffAfter(n, BACKOFF))).to.deep.equal([1000, 5000, 30_000, 30_000, 30_000]);
  });

  it('counts attempts and keeps the first check time across failed checks', () => {
    const first = aDomain({ status: nextStatus(aDomain(), { kind: 'dnsNotVerified', error: 'e1', reset: true }, context(T0)) });
    const second = nextStatus(first, { kind: 'dnsNotVerified', error: 'e2', reset: false }, context(at(1000)));
    expect(second.dnsCheck).to.deep.include({ attempts: 2, firstCheckedAt: T0.toISOString(), lastCheckedAt: at(1000).toISOString(), lastError: 'e2' });
  });

  it('gives up with DNSVerificationTimedOut once the deadline since the first check has passed', () => {
    const first = aDomain({ status: nextStatus(aDomain(), { kind: 'dnsNotVerified', error: 'e1', reset: true }, context(T0)) });
    const status = nextStatus(first, { kind: 'dnsNotVerified', error: 'no TXT', reset: false }, context(at(60_000)));
    expect(status.phase).to.equal('Error');
    expect(condition(status, 'DNSVerified')).to.include({ status: 'False', reason: TIMED_OUT });
    expect(condition(status, 'Ready')!.message).to.match(/within 1m: no TXT/);
    expect(eventFor(first, status)).to.deep.include({ phase: 'Error', reason: TIMED_OUT });
    expect(planStage(aDomain({ status }), { now: at(120_000), backoffMs: BACKOFF, retry: false })).to.deep.equal({ kind: 'timedOut' });
  });

  it('verifies again on a retry annotation or a new generation after a DNS timeout', () => {
    const status: DomainStatus = {
      phase: 'Error',
      observedGeneration: 1,
      conditions: [{ type: 'DNSVerified', status: 'False', reason: TIMED_OUT, message: 'x', lastTransitionTime: T0.toISOString(), observedGeneration: 1 }],
    };
    expect(planStage(aDomain({ status }), { now: T0, backoffMs: BACKOFF, retry: true })).to.deep.equal({ kind: 'verify', reset: true });
    expect(planStage(aDomain({ status, generation: 2 }), { now: T0, backoffMs: BACKOFF, retry: false })).to.deep.equal({ kind: 'verify', reset: true });
  });

  it('moves through PendingSSL to Active with one event per phase and conditions as cert-manager has them', () => {
    let domain = aDomain();
    const pending = nextStatus(domain, { kind: 'dnsVerified', certificate: { state: 'pending', message: 'Issuing' }, reset: true }, context(T0));
    expect(pending.phase).to.equal('PendingSSL');
    expect(eventFor(domain, pending)).to.deep.include({ phase: 'PendingSSL' });
    domain = advance(domain, pending);
    expect(condition(domain.status!, 'DNSVerified')).to.deep.equal({
      type: 'DNSVerified',
      status: 'True',
      reason: 'Verified',
      message: 'The verification TXT record and the CNAME or A record are set',
      lastTransitionTime: T0.toISOString(),
      observedGeneration: 1,
    });
    expect(planStage(domain, { now: at(10), backoffMs: BACKOFF, retry: false })).to.deep.equal({ kind: 'certificate' });

    const active = nextStatus(domain, { kind: 'certificate', certificate: { state: 'ready' } }, context(at(5000)));
    expect(active.phase).to.equal('Active');
    expect(eventFor(domain, active)).to.deep.include({ phase: 'Active' });
    // DNSVerified did not change status: its transition time stays; the others moved.
    expect(condition(active, 'DNSVerified')!.lastTransitionTime).to.equal(T0.toISOString());
    expect(condition(active, 'Ready')).to.include({ status: 'True', reason: 'Active', lastTransitionTime: at(5000).toISOString() });
    domain = advance(domain, active);
    const again = nextStatus(domain, { kind: 'certificate', certificate: { state: 'ready' } }, context(at(9000)));
    expect(statusEquals(domain.status, again)).to.equal(true);
    expect(eventFor(domain, again)).to.equal(null);
  });

  it('goes to Error with the reason and message cert-manager gave, stays there while it retries, and recovers on Ready', () => {
    let domain = advance(aDomain(), nextStatus(aDomain(), { kind: 'dnsVerified', certificate: { state: 'pending', message: 'Issuing' }, reset: true }, context(T0)));
    const failed = nextStatus(domain, { kind: 'certificate', certificate: { state: 'failed', reason: 'Failed', message: 'ACME order failed' } }, context(at(100)));
    expect(failed.phase).to.equal('Error');
    expect(condition(failed, 'CertificateReady')).to.include({ status: 'False', reason: 'Failed', message: 'ACME order failed' });
    expect(eventFor(domain, failed)).to.deep.equal({ phase: 'Error', reason: 'Failed', message: 'ACME order failed' });
    domain = advance(domain, failed);

    const retrying = nextStatus(domain, { kind: 'certificate', certificate: { state: 'pending', message: 'Issuing again' } }, context(at(200)));
    expect(statusEquals(domain.status, retrying)).to.equal(true);

    const active = nextStatus(domain, { kind: 'certificate', certificate: { state: 'ready' } }, context(at(300)));
    expect(active.phase).to.equal('Active');
    expect(eventFor(domain, active)).to.deep.include({ phase: 'Active' });
  });

  it('does not send an event again that the status records as sent for this generation', () => {
    const status: DomainStatus = { phase: 'PendingSSL', lastEventPhase: 'PendingSSL', lastEventGeneration: 1 };
    expect(eventFor(aDomain(), status)).to.equal(null);
    expect(eventFor(aDomain({ generation: 2 }), status)).to.deep.include({ phase: 'PendingSSL' });
  });

  it('treats statuses as equal whatever the key order, and different when a condition message changes', () => {
    const c: Condition = { type: 'Ready', status: 'False', reason: 'PendingSSL', message: 'a', lastTransitionTime: T0.toISOString(), observedGeneration: 1 };
    expect(statusEquals({ phase: 'PendingSSL', conditions: [c] }, { conditions: [{ ...c }], phase: 'PendingSSL' })).to.equal(true);
    expect(statusEquals({ phase: 'PendingSSL', conditions: [c] }, { phase: 'PendingSSL', conditions: [{ ...c, message: 'b' }] })).to.equal(false);
  });

  it('patches removed status fields as null so a merge patch clears them', () => {
    const patch = statusPatch(
      { phase: 'PendingVerification', dnsCheck: { attempts: 1, firstCheckedAt: 'a', lastCheckedAt: 'a', lastError: 'x' }, certificateName: 'c' },
      { phase: 'PendingSSL', dnsCheck: { attempts: 2, firstCheckedAt: 'a', lastCheckedAt: 'b' } },
    );
    expect(patch).to.deep.equal({ phase: 'PendingSSL', certificateName: null, dnsCheck: { attempts: 2, firstCheckedAt: 'a', lastCheckedAt: 'b', lastError: null } });
  });
});

describe('operator certificate state', () => {
  const aCertificate = (conditions: { type: string; status: 'True' | 'False' | 'Unknown'; reason?: string; message?: string }[]) => ({
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'c' },
    spec: { secretName: 's', dnsNames: ['x'], issuerRef: { name: 'i', kind: 'ClusterIssuer' } },
    status: { conditions },
  });

  it('is pending while the Certificate has no Ready condition', () => {
    expect(certificateState(aCertificate([])).state).to.equal('pending');
    expect(certificateState(null).state).to.equal('pending');
  });

  it('is ready on Ready=True', () => {
    expect(certificateState(aCertificate([{ type: 'Ready', status: 'True', reason: 'Ready' }]))).to.deep.equal({ state: 'ready' });
  });

  it('is failed on Issuing=False with reason Failed, carrying its message', () => {
    const state = certificateState(
      aCertificate([
        { type: 'Ready', status: 'False', reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' },
        { type: 'Issuing', status: 'False', reason: 'Failed', message: 'The certificate request has failed to complete and will be retried: rate limited' },
      ]),
    );
    expect(state).to.deep.equal({ state: 'failed', reason: 'Failed', message: 'The certificate request has failed to complete and will be retried: rate limited' });
  });

  it('is failed on Ready=False with a failure reason, and pending on a reason that only means not yet', () => {
    expect(certificateState(aCertificate([{ type: 'Ready', status: 'False', reason: 'Expired', message: 'expired' }]))).to.deep.equal({ state: 'failed', reason: 'Expired', message: 'expired' });
    expect(certificateState(aCertificate([{ type: 'Ready', status: 'False', reason: 'DoesNotExist', message: 'not yet' }])).state).to.equal('pending');
  });
});

describe('operator owned-object comparison', () => {
  it('ignores fields the server added and notices a changed or missing one', () => {
    const desired = { ingressClassName: 'nginx', rules: [{ host: 'a', http: { paths: [{ path: '/' }] } }] };
    expect(covers({ ...desired, defaultBackend: { x: 1 } }, desired)).to.equal(true);
    expect(covers({ ingressClassName: 'nginx', rules: [{ host: 'a', http: { paths: [{ path: '/', pathType: 'Prefix' }] } }] }, desired)).to.equal(true);
    expect(covers({ ...desired, ingressClassName: 'traefik' }, desired)).to.equal(false);
    expect(covers({ ingressClassName: 'nginx', rules: [] }, desired)).to.equal(false);
  });
});
