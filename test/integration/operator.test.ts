// The operator end to end over real protocols: the in-process Kubernetes API server driven by the real client-node
// informers, a real DNS server on loopback (dns2, UDP and TCP) whose records each test sets, and the real NATS
// server, whose DOMAINS stream the tests read back message by message.
import { expect } from 'chai';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadOperatorConfig } from '../../src/config/operator.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { connectNats, provisionStreams, type Nats } from '../../src/platform/nats.ts';
import { buildOperator, type Operator } from '../../operator/operator.ts';
import { NatsDomainEventPublisher, type DomainEventMessage } from '../../operator/publisher.ts';
import type { Certificate, Domain } from '../../operator/domain.ts';
import { DnsChecker } from '../../operator/dns-check.ts';
import { startKubeApiServer, type KubeApiServer, type KubeObject, type KubeRequestRecord } from '../helpers/kube-apiserver.ts';
import { NATS_URL, natsPrefix } from '../helpers/env.ts';
import { TestDns } from '../helpers/dns-server.ts';

const NAMESPACE = 'linkplane';
const CNAME_TARGET = 'ingress.linkplane.test';
const A_TARGET = '203.0.113.10';
const { logger } = createLogger({ level: 'silent', name: 'operator-test' });

// ---------------------------------------------------------------------------------------------------------------
// A DNS zone served on loopback; tests add and remove records while the operator polls.

// ---------------------------------------------------------------------------------------------------------------
// Builders and waits.

let counter = 0;
function aDomain(overrides: { hostname?: string; token?: string } = {}): Domain {
  counter += 1;
  const hostname = overrides.hostname ?? `go${counter}.customer.test`;
  return {
    apiVersion: 'linkplane.io/v1alpha1',
    kind: 'Domain',
    metadata: { name: hostname, namespace: NAMESPACE, labels: { 'linkplane.io/domain-id': `dom_${counter}` } },
    spec: { hostname, tenant: 'ws_test', domainId: `dom_${counter}`, verificationToken: overrides.token ?? `token${counter}` },
  };
}

async function eventually<T>(probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const isWrite = (r: KubeRequestRecord): boolean => WRITES.has(r.method);
const isLeaseRequest = (r: KubeRequestRecord): boolean => r.path.includes('/leases');

// ---------------------------------------------------------------------------------------------------------------

describe('operator (in-process API server, DNS on loopback, real NATS)', function () {
  this.timeout(40_000);

  let kube: KubeApiServer;
  let kubeConfig: KubeConfig;
  let dns: TestDns;
  let nats: Nats;
  let prefix: string;
  const running: Operator[] = [];

  before(async () => {
    dns = await TestDns.start();
    kube = await startKubeApiServer();
    kubeConfig = kube.kubeConfig();
  });

  after(async () => {
    await dns.stop();
    await kube.stop();
  });

  beforeEach(async () => {
    prefix = natsPrefix();
    nats = await connectNats({ url: NATS_URL, prefix, name: 'operator-test', logger });
    await provisionStreams(nats, 60_000);
  });

  afterEach(async () => {
    for (const operator of running.splice(0)) await operator.stop();
    await nats.drain();
    for (const domain of kube.list<Domain & KubeObject>('Domain', NAMESPACE)) {
      kube.update('Domain', { ...domain, metadata: { ...domain.metadata, finalizers: [] } });
      kube.delete('Domain', NAMESPACE, domain.metadata.name);
    }
    for (const lease of kube.list('Lease', NAMESPACE)) kube.delete('Lease', NAMESPACE, lease.metadata!.name!);
  });

  function operatorConfig(identity: string, env: Record<string, string> = {}) {
    return loadOperatorConfig({
      POD_NAME: identity,
      POD_NAMESPACE: NAMESPACE,
      NATS_URL,
      NATS_PREFIX: prefix,
      INGRESS_SERVICE_NAME: 'linkplane-redirect',
      DOMAIN_CNAME_TARGET: CNAME_TARGET,
      DOMAIN_A_TARGETS: A_TARGET,
      DNS_RESOLVERS: `127.0.0.1:${dns.port}`,
      DNS_CHECK_BACKOFF: '50ms',
      DNS_GIVE_UP_AFTER: '1h',
      LEASE_DURATION_MS: '1000',
      LEASE_RENEW_MS: '150',
      OPERATOR_METRICS_PORT: '0',
      HOST: '127.0.0.1',
      ...env,
    });
  }

  async function startOperator(
    identity: string,
    options: { env?: Record<string, string>; hooks?: Parameters<typeof buildOperator>[0]['hooks']; serveOps?: boolean; connection?: Nats; awaitLeadership?: boolean } = {},
  ): Promise<Operator> {
    const connection = options.connection ?? nats;
    const operator = buildOperator({
      config: operatorConfig(identity, options.env),
      logger,
      kubeConfig,
      nats: connection,
      publisher: new NatsDomainEventPublisher(connection),
      hooks: options.hooks,
      queue: { baseDelayMs: 20, maxDelayMs: 500 },
      serveOps: options.serveOps ?? false,
    });
    running.push(operator);
    await operator.start();
    if (options.awaitLeadership !== false) await eventually(() => operator.isLeader(), `${identity} to lead`);
    return operator;
  }

  const domainNow = (name: string): Domain | undefined => kube.get<Domain & KubeObject>('Domain', NAMESPACE, name);
  const phaseOf = (name: string): string | undefined => domainNow(name)?.status?.phase;
  const waitForPhase = (name: string, phase: string, timeoutMs?: number): Promise<Domain> =>
    eventually(() => (phaseOf(name) === phase ? domainNow(name) : undefined), `${name} to reach ${phase} (is ${phaseOf(name)})`, timeoutMs);

  function createDomain(domain: Domain): Domain {
    return kube.create('Domain', domain as Domain & KubeObject);
  }

  function certificateReady(name: string): void {
    kube.patchStatus('Certificate', NAMESPACE, name, {
      conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'Certificate is up to date and has not expired', lastTransitionTime: new Date().toISOString() }],
    });
  }

  /** Every message of the DOMAINS stream, read back by sequence, with its message id. */
  async function domainMessages(): Promise<{ id: string; subject: string; event: DomainEventMessage }[]> {
    const stream = nats.subjects.stream('DOMAINS');
    const info = await nats.jsm.streams.info(stream);
    const messages = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const message = await nats.jsm.streams.getMessage(stream, { seq });
      if (!message) continue;
      messages.push({ id: message.header.get('Nats-Msg-Id'), subject: message.subject, event: message.json<DomainEventMessage>() });
    }
    return messages;
  }

  function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
    return counts;
  }

  it('takes a domain through PendingVerification, PendingSSL and Active, with events in order and owned objects', async () => {
    const operator = await startOperator('op-happy', { serveOps: true });
    const domain = createDomain(aDomain());
    const name = domain.metadata.name;

    const waiting = await waitForPhase(name, 'PendingVerification');
    expect(waiting.metadata.finalizers).to.include('linkplane.io/cleanup');
    expect(waiting.status!.dnsRecords).to.deep.equal([
      { type: 'TXT', name: `_linkplane.${name}`, value: `linkplane-verify=${domain.spec.verificationToken}` },
      { type: 'CNAME', name, value: CNAME_TARGET },
      { type: 'A', name, value: A_TARGET },
    ]);
    const notYet = waiting.status!.conditions!.find((c) => c.type === 'DNSVerified')!;
    expect(notYet).to.include({ status: 'False', reason: 'RecordsNotFound', observedGeneration: 1 });
    // Several checks happen, with backoff, while the records are missing.
    await eventually(() => (domainNow(name)!.status!.dnsCheck!.attempts >= 3 ? true : undefined), 'repeated DNS checks');
    expect(kube.get('Certificate', NAMESPACE, name)).to.equal(undefined);

    dns.pointAtUs(name, domain.spec.verificationToken, CNAME_TARGET);
    const pending = await waitForPhase(name, 'PendingSSL');
    expect(pending.status!.observedGeneration).to.equal(1);
    expect(pending.status!.certificateName).to.equal(name);
    expect(pending.status!.conditions!.map((c) => [c.type, c.status, c.reason])).to.deep.equal([
      ['DNSVerified', 'True', 'Verified'],
      ['CertificateReady', 'False', 'Issuing'],
      ['Ready', 'False', 'PendingSSL'],
    ]);

    const owner = { apiVersion: 'linkplane.io/v1alpha1', kind: 'Domain', name, uid: pending.metadata.uid, controller: true, blockOwnerDeletion: true };
    const certificate = kube.get<Certificate & KubeObject>('Certificate', NAMESPACE, name)!;
    expect(certificate.metadata.ownerReferences).to.deep.equal([owner]);
    expect(certificate.spec).to.deep.equal({
      secretName: `${name}-tls`,
      dnsNames: [name],
      issuerRef: { name: 'letsencrypt', kind: 'ClusterIssuer', group: 'cert-manager.io' },
    });
    const ingress = kube.get<KubeObject & { spec: Record<string, unknown> }>('Ingress', NAMESPACE, name)!;
    expect(ingress.metadata!.ownerReferences).to.deep.equal([owner]);
    expect(ingress.spec).to.deep.equal({
      ingressClassName: 'nginx',
      tls: [{ hosts: [name], secretName: `${name}-tls` }],
      rules: [{ host: name, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'linkplane-redirect', port: { number: 8081 } } } }] } }],
    });

    certificateReady(name);
    const active = await waitForPhase(name, 'Active');
    const dnsVerified = active.status!.conditions!.find((c) => c.type === 'DNSVerified')!;
    expect(dnsVerified.lastTransitionTime).to.equal(pending.status!.conditions!.find((c) => c.type === 'DNSVerified')!.lastTransitionTime);
    expect(active.status!.conditions!.find((c) => c.type === 'Ready')).to.include({ status: 'True', reason: 'Active' });

    const messages = await eventually(async () => {
      const all = await domainMessages();
      return all.length === 2 ? all : undefined;
    }, 'two DOMAINS messages');
    expect(messages.map((m) => [m.id, m.subject])).to.deep.equal([
      [`${domain.spec.domainId}.1.PendingSSL`, `${prefix}domains.ws_test.domain.pending_ssl`],
      [`${domain.spec.domainId}.1.Active`, `${prefix}domains.ws_test.domain.activated`],
    ]);
    expect(messages[1]!.event).to.deep.include({
      domain_id: domain.spec.domainId,
      hostname: name,
      tenant: 'ws_test',
      type: 'domain.activated',
      phase: 'Active',
      generation: 1,
      reason: null,
      message: null,
    });
    expect(active.status).to.deep.include({ lastEventPhase: 'Active', lastEventGeneration: 1 });

    // Kubernetes events are recorded on their own: the last may arrive after the status.
    const events = await eventually(() => {
      const all = kube.events<KubeObject & { reason: string; type: string; involvedObject: { name: string; uid: string } }>().filter((e) => e.involvedObject.name === name);
      return all.some((e) => e.reason === 'Active') ? all : undefined;
    }, 'the Active event');
    const reasons = events.map((e) => e.reason);
    expect(reasons[0]).to.equal('DNSNotVerified');
    expect(reasons.filter((r) => r !== 'DNSNotVerified')).to.deep.equal(['DNSVerified', 'Active']);
    expect(events.every((e) => e.involvedObject.uid === pending.metadata.uid)).to.equal(true);
    // Failed checks are reported sparingly: the 1st, 2nd, 4th, 8th…
    const attempts = active.status!.dnsCheck!.attempts;
    expect(reasons.filter((r) => r === 'DNSNotVerified').length).to.be.at.most(Math.floor(Math.log2(attempts)) + 1);

    const metrics = await (await fetch(`http://127.0.0.1:${operator.opsPort()!}/metrics`)).text();
    expect(metrics).to.contain('linkplane_operator_domains{phase="Active"} 1');
    expect(metrics).to.contain('linkplane_operator_leader 1');
    expect(metrics).to.match(/linkplane_operator_reconcile_duration_seconds_count\{result="success"\} [1-9]/);
    expect((await fetch(`http://127.0.0.1:${operator.opsPort()!}/readyz`)).status).to.equal(200);
  });

  it('gives up when DNS is never set (Error, domain.error) and verifies again on the retry annotation', async () => {
    await startOperator('op-giveup', { env: { DNS_GIVE_UP_AFTER: '300ms' } });
    const domain = createDomain(aDomain());
    const name = domain.metadata.name;

    const failed = await waitForPhase(name, 'Error');
    const dnsVerified = failed.status!.conditions!.find((c) => c.type === 'DNSVerified')!;
    expect(dnsVerified).to.include({ status: 'False', reason: 'DNSVerificationTimedOut' });
    expect(dnsVerified.message).to.match(/not found within 300ms/);
    expect(failed.status!.dnsCheck!.attempts).to.be.at.least(2);
    expect(kube.get('Certificate', NAMESPACE, name)).to.equal(undefined);

    const [error] = await eventually(async () => {
      const all = await domainMessages();
      return all.length === 1 ? all : undefined;
    }, 'the domain.error message');
    expect(error!.id).to.equal(`${domain.spec.domainId}.1.Error`);
    expect(error!.event).to.deep.include({ type: 'domain.error', phase: 'Error', reason: 'DNSVerificationTimedOut' });
    expect(error!.event.message).to.match(/not found within 300ms/);
    // The Kubernetes event is recorded on its own: it may arrive after the status and the NATS message.
    const warning = await eventually(
      () => kube.events<KubeObject & { reason: string; type: string; involvedObject: { name: string } }>().find((e) => e.involvedObject.name === name && e.reason === 'DNSVerificationTimedOut'),
      'the DNSVerificationTimedOut event',
    );
    expect(warning.type).to.equal('Warning');

    // A timed-out domain stays put: no further DNS checks until asked.
    const checks = failed.status!.dnsCheck!.attempts;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(domainNow(name)!.status!.dnsCheck!.attempts).to.equal(checks);

    dns.pointAtUs(name, domain.spec.verificationToken, CNAME_TARGET);
    const current = domainNow(name)!;
    kube.update('Domain', { ...current, metadata: { ...current.metadata, annotations: { 'linkplane.io/retry': 'now' } } });
    await waitForPhase(name, 'PendingSSL');
    await eventually(() => (domainNow(name)!.metadata.annotations?.['linkplane.io/retry'] === undefined ? true : undefined), 'the retry annotation to be removed');
  });

  it('reports a certificate failure with cert-manager reason and message, then becomes Active when issuance succeeds', async () => {
    await startOperator('op-cert');
    const domain = aDomain();
    const name = domain.metadata.name;
    dns.pointAtUs(name, domain.spec.verificationToken, CNAME_TARGET);
    createDomain(domain);
    await waitForPhase(name, 'PendingSSL');

    const failure = 'The certificate request has failed to complete and will be retried: Failed to finalize Order: 429 urn:ietf:params:acme:error:rateLimited';
    kube.patchStatus('Certificate', NAMESPACE, name, {
      lastFailureTime: new Date().toISOString(),
      conditions: [
        { type: 'Ready', status: 'False', reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' },
        { type: 'Issuing', status: 'False', reason: 'Failed', message: failure },
      ],
    });
    const failed = await waitForPhase(name, 'Error');
    expect(failed.status!.conditions!.find((c) => c.type === 'CertificateReady')).to.include({ status: 'False', reason: 'Failed', message: failure });
    expect(failed.status!.conditions!.find((c) => c.type === 'Ready')).to.include({ status: 'False', reason: 'Failed', message: failure });

    // cert-manager retries by itself: the domain stays in Error meanwhile.
    kube.patchStatus('Certificate', NAMESPACE, name, {
      conditions: [{ type: 'Ready', status: 'False', reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' }, { type: 'Issuing', status: 'True', reason: 'Requested', message: 'retrying' }],
    });
    certificateReady(name);
    await waitForPhase(name, 'Active');

    const messages = await eventually(async () => {
      const all = await domainMessages();
      return all.length === 3 ? all : undefined;
    }, 'three DOMAINS messages');
    expect(messages.map((m) => m.event.type)).to.deep.equal(['domain.pending_ssl', 'domain.error', 'domain.activated']);
    expect(messages[1]!.event).to.deep.include({ reason: 'Failed', message: failure, generation: 1 });
  });

  it('on deletion removes the Certificate and the Ingress, then its finalizer', async () => {
    await startOperator('op-delete');
    const domain = aDomain();
    const name = domain.metadata.name;
    dns.pointAtUs(name, domain.spec.verificationToken, CNAME_TARGET);
    createDomain(domain);
    await waitForPhase(name, 'PendingSSL');
    expect(kube.get('Certificate', NAMESPACE, name)).to.not.equal(undefined);
    expect(kube.get('Ingress', NAMESPACE, name)).to.not.equal(undefined);
    kube.requests.length = 0;

    kube.delete('Domain', NAMESPACE, name);
    await eventually(() => (domainNow(name) === undefined ? true : undefined), 'the Domain to go');
    expect(kube.get('Certificate', NAMESPACE, name)).to.equal(undefined);
    expect(kube.get('Ingress', NAMESPACE, name)).to.equal(undefined);
    // The operator removed them itself before letting the Domain go (not left to garbage collection).
    const writes = kube.requests.filter((r) => isWrite(r) && !isLeaseRequest(r) && !r.path.includes('/events')).map((r) => `${r.method} ${r.path}`);
    expect(writes).to.deep.equal([
      `DELETE /apis/cert-manager.io/v1/namespaces/${NAMESPACE}/certificates/${name}`,
      `DELETE /apis/networking.k8s.io/v1/namespaces/${NAMESPACE}/ingresses/${name}`,
      `PATCH /apis/linkplane.io/v1alpha1/namespaces/${NAMESPACE}/domains/${name}`,
    ]);
  });

  it('lets only the leader act when two replicas run, and fails over when the leader stops', async () => {
    const a = await startOperator('op-a');
    const b = await startOperator('op-b', { awaitLeadership: false });
    expect(a.isLeader()).to.equal(true);
    expect(b.isLeader()).to.equal(false);
    kube.requests.length = 0;

    const first = aDomain();
    dns.pointAtUs(first.metadata.name, first.spec.verificationToken, CNAME_TARGET);
    createDomain(first);
    await waitForPhase(first.metadata.name, 'PendingSSL');
    certificateReady(first.metadata.name);
    await waitForPhase(first.metadata.name, 'Active');

    // A renewal happened while op-a led (the flow above may be quicker than one renewal period).
    await eventually(() => kube.requests.some((r) => isLeaseRequest(r) && r.method === 'PUT'), 'a lease renewal');
    const writers = (records: KubeRequestRecord[]): string[] => [...new Set(records.filter((r) => isWrite(r) && r.method !== 'DELETE').map((r) => r.query.fieldManager ?? '?'))];
    expect(writers(kube.requests.filter((r) => !isLeaseRequest(r)))).to.deep.equal(['op-a']);
    // The follower only reads the Lease while it is held.
    expect(writers(kube.requests.filter(isLeaseRequest))).to.deep.equal(['op-a']);
    expect(b.isLeader()).to.equal(false);

    await a.stop();
    await eventually(() => b.isLeader(), 'op-b to take over');
    const lease = kube.get<KubeObject & { spec: { holderIdentity: string; leaseTransitions: number } }>('Lease', NAMESPACE, 'linkplane-operator')!;
    expect(lease.spec).to.include({ holderIdentity: 'op-b', leaseTransitions: 1 });
    kube.requests.length = 0;

    const second = aDomain();
    dns.pointAtUs(second.metadata.name, second.spec.verificationToken, CNAME_TARGET);
    createDomain(second);
    await waitForPhase(second.metadata.name, 'PendingSSL');
    expect(writers(kube.requests)).to.deep.equal(['op-b']);
  });

  it('takes over an expired lease from a replica that died without releasing it', async () => {
    const a = await startOperator('op-crashy');
    const b = await startOperator('op-heir', { awaitLeadership: false });
    await a.stop({ release: false });
    expect(kube.get<KubeObject & { spec: { holderIdentity: string } }>('Lease', NAMESPACE, 'linkplane-operator')!.spec.holderIdentity).to.equal('op-crashy');
    await eventually(() => b.isLeader(), 'op-heir to take over after expiry');
    expect(kube.get<KubeObject & { spec: { holderIdentity: string } }>('Lease', NAMESPACE, 'linkplane-operator')!.spec.holderIdentity).to.equal('op-heir');
  });

  it('neither repeats nor loses an event across restarts, including a crash between publish and status patch', async () => {
    // A restart after PendingSSL was published and recorded.
    const first = aDomain();
    dns.pointAtUs(first.metadata.name, first.spec.verificationToken, CNAME_TARGET);
    const one = await startOperator('op-one');
    createDomain(first);
    await waitForPhase(first.metadata.name, 'PendingSSL');
    await eventually(() => domainNow(first.metadata.name)!.status!.lastEventPhase === 'PendingSSL', 'PendingSSL recorded');
    await one.stop();

    // A crash after the publish was acknowledged, before the status recorded it.
    const second = aDomain();
    dns.pointAtUs(second.metadata.name, second.spec.verificationToken, CNAME_TARGET);
    const published: DomainEventMessage[] = [];
    let crashed = false;
    const two: Operator = await startOperator('op-two', {
      hooks: {
        afterPublish: (event) => {
          published.push(event);
          if (!crashed && event.domain_id === second.spec.domainId && event.phase === 'PendingSSL') {
            crashed = true;
            void two.stop({ release: false });
            throw new Error('simulated crash between publish and status patch');
          }
        },
      },
    });
    createDomain(second);
    await eventually(() => crashed, 'the simulated crash');
    await eventually(() => !two.isLeader(), 'op-two to stop');
    expect(domainNow(second.metadata.name)!.status?.lastEventPhase).to.equal(undefined);

    // A new replica picks both up once the dead one's lease expires.
    const republished: DomainEventMessage[] = [];
    await startOperator('op-three', { hooks: { afterPublish: (event) => void republished.push(event) } });
    await waitForPhase(second.metadata.name, 'PendingSSL');
    await eventually(() => domainNow(second.metadata.name)!.status!.lastEventPhase === 'PendingSSL', 'PendingSSL recorded after the crash');
    // It did publish the crashed event again (same message id), and JetStream kept one.
    expect(republished.map((e) => `${e.domain_id}.${e.phase}`)).to.include(`${second.spec.domainId}.PendingSSL`);
    expect(republished.map((e) => `${e.domain_id}.${e.phase}`)).to.not.include(`${first.spec.domainId}.PendingSSL`);

    certificateReady(first.metadata.name);
    certificateReady(second.metadata.name);
    await waitForPhase(first.metadata.name, 'Active');
    await waitForPhase(second.metadata.name, 'Active');

    const messages = await eventually(async () => {
      const all = await domainMessages();
      return all.length >= 4 ? all : undefined;
    }, 'four DOMAINS messages');
    expect(countBy(messages, (m) => m.id)).to.deep.equal({
      [`${first.spec.domainId}.1.PendingSSL`]: 1,
      [`${first.spec.domainId}.1.Active`]: 1,
      [`${second.spec.domainId}.1.PendingSSL`]: 1,
      [`${second.spec.domainId}.1.Active`]: 1,
    });
    expect(countBy(messages, (m) => `${m.event.domain_id}:${m.event.phase}`)).to.deep.equal({
      [`${first.spec.domainId}:PendingSSL`]: 1,
      [`${first.spec.domainId}:Active`]: 1,
      [`${second.spec.domainId}:PendingSSL`]: 1,
      [`${second.spec.domainId}:Active`]: 1,
    });
  });

  it('sends no write on a resync when nothing changed', async () => {
    const operator = await startOperator('op-resync');
    const domain = aDomain();
    const name = domain.metadata.name;
    dns.pointAtUs(name, domain.spec.verificationToken, CNAME_TARGET);
    createDomain(domain);
    await waitForPhase(name, 'PendingSSL');
    certificateReady(name);
    await waitForPhase(name, 'Active');
    await eventually(() => domainNow(name)!.status!.lastEventPhase === 'Active', 'Active recorded');

    const reconciles = async (): Promise<number> => {
      const metric = await operator.metrics.registry.getSingleMetric('linkplane_operator_reconcile_duration_seconds')!.get();
      return metric.values.filter((v) => (v as { metricName?: string }).metricName?.endsWith('_count')).reduce((sum, v) => sum + v.value, 0);
    };
    // Let the reconciles triggered by the operator's own last writes finish first.
    let before = await reconciles();
    await eventually(async () => {
      const now = await reconciles();
      const settled = now === before;
      before = now;
      return settled ? true : (await new Promise((resolve) => setTimeout(resolve, 100)), undefined);
    }, 'the operator to settle');
    kube.requests.length = 0;

    operator.controller.resync();
    await eventually(async () => ((await reconciles()) > before ? true : undefined), 'the resync reconcile');
    expect(kube.requests.filter((r) => isWrite(r) && !isLeaseRequest(r)).map((r) => `${r.method} ${r.path}`)).to.deep.equal([]);
    expect(phaseOf(name)).to.equal('Active');
  });
  it('stops acting at once when another holder takes its lease', async () => {
    const operator = await startOperator('op-loser');
    const lease = kube.get<KubeObject & { spec: Record<string, unknown> }>('Lease', NAMESPACE, 'linkplane-operator')!;
    const now = new Date().toISOString().replace('Z', '000Z');
    kube.update('Lease', { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', leaseDurationSeconds: 3600, renewTime: now } });
    await eventually(() => !operator.isLeader(), 'op-loser to notice');
    kube.requests.length = 0;

    const domain = aDomain();
    dns.pointAtUs(domain.metadata.name, domain.spec.verificationToken, CNAME_TARGET);
    createDomain(domain);
    // Its informer sees the Domain (it would be a warm standby), but it writes nothing.
    await eventually(() => (operator.controller.queue.length > 0 ? true : undefined), 'the Domain to be queued');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(kube.requests.filter(isWrite)).to.deep.equal([]);
    expect(domainNow(domain.metadata.name)!.status).to.equal(undefined);
  });

  it('retries a failed reconcile with a rate limit and counts the errors', async () => {
    const operator = await startOperator('op-errors');
    kube.failRequests({ method: 'PATCH', path: /\/status$/, code: 500, times: 3 });
    const domain = aDomain();
    dns.pointAtUs(domain.metadata.name, domain.spec.verificationToken, CNAME_TARGET);
    createDomain(domain);
    await waitForPhase(domain.metadata.name, 'PendingSSL');
    const errors = await operator.metrics.registry.getSingleMetric('linkplane_operator_reconcile_errors_total')!.get();
    expect(errors.values[0]!.value).to.equal(3);
    // The event was published on every attempt; JetStream kept it once.
    const messages = await domainMessages();
    expect(messages.map((m) => m.id)).to.deep.equal([`${domain.spec.domainId}.1.PendingSSL`]);
  });

  it('verifies a domain with A records and explains what is wrong when the records do not match', async () => {
    const checker = new DnsChecker({ servers: [{ host: '127.0.0.1', port: dns.port }], targets: { txtPrefix: '_linkplane', cnameTarget: CNAME_TARGET, aTargets: [A_TARGET] } });
    const spec = aDomain().spec;
    expect(await checker.check(spec)).to.deep.equal({ verified: false, error: `TXT _linkplane.${spec.hostname}: no record` });

    dns.zone.set(`_linkplane.${spec.hostname}`, { TXT: ['linkplane-verify=someone-else'] });
    expect(await checker.check(spec)).to.deep.equal({ verified: false, error: `TXT _linkplane.${spec.hostname} does not contain "linkplane-verify=${spec.verificationToken}"` });

    dns.zone.set(`_linkplane.${spec.hostname}`, { TXT: ['v=spf1 -all', `linkplane-verify=${spec.verificationToken}`] });
    dns.zone.set(spec.hostname, { CNAME: 'elsewhere.example.net' });
    const wrong = await checker.check(spec);
    expect(wrong.verified).to.equal(false);
    expect((wrong as { error: string }).error).to.contain(`CNAME ${spec.hostname} points to elsewhere.example.net, not ${CNAME_TARGET}`);

    dns.zone.set(spec.hostname, { A: ['198.51.100.1'] });
    expect((await checker.check(spec)).verified).to.equal(false);
    dns.zone.set(spec.hostname, { A: [A_TARGET] });
    expect(await checker.check(spec)).to.deep.equal({ verified: true });
  });
  it('keeps reconciling after its watches expire (410) and after a failed re-list', async () => {
    await startOperator('op-watch');
    const first = aDomain();
    dns.pointAtUs(first.metadata.name, first.spec.verificationToken, CNAME_TARGET);
    createDomain(first);
    await waitForPhase(first.metadata.name, 'PendingSSL');

    kube.failRequests({ method: 'GET', path: `/apis/linkplane.io/v1alpha1/namespaces/${NAMESPACE}/domains`, code: 500, times: 1 });
    expect(kube.expireWatches('Domain')).to.be.at.least(1);
    const second = aDomain();
    dns.pointAtUs(second.metadata.name, second.spec.verificationToken, CNAME_TARGET);
    createDomain(second);
    await waitForPhase(second.metadata.name, 'PendingSSL');
    certificateReady(first.metadata.name);
    await waitForPhase(first.metadata.name, 'Active');
  });
  it('puts back an owned route that someone deleted', async () => {
    await startOperator('op-heal');
    const domain = aDomain();
    const name = domain.metadata.name;
    dns.pointAtUs(name, domain.spec.verificationToken, CNAME_TARGET);
    createDomain(domain);
    await waitForPhase(name, 'PendingSSL');
    certificateReady(name);
    await waitForPhase(name, 'Active');
    const before = kube.get('Ingress', NAMESPACE, name)!;

    kube.delete('Ingress', NAMESPACE, name);
    const after = await eventually(() => kube.get('Ingress', NAMESPACE, name), 'the Ingress to be recreated');
    expect(after.metadata!.uid).to.not.equal(before.metadata!.uid);
    expect(after.spec).to.deep.equal(before.spec);
    expect(phaseOf(name)).to.equal('Active');
  });
});
