import { expect } from 'chai';
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
  makeInformer,
  setHeaderOptions,
  type Informer,
  type ObjectCache,
  type KubernetesObject,
  type V1Lease,
} from '@kubernetes/client-node';
import { startKubeApiServer, type KubeApiServer, type KubeObject } from '../helpers/kube-apiserver.ts';

const NS = 'linkplane';
const DOMAINS = { group: 'linkplane.io', version: 'v1alpha1', namespace: NS, plural: 'domains' };
const DOMAINS_PATH = `/apis/linkplane.io/v1alpha1/namespaces/${NS}/domains`;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

interface DomainObject extends KubeObject {
  spec: { hostname: string; tenant: string };
  status?: { phase?: string };
}

let counter = 0;
function aDomain(overrides: { name?: string; hostname?: string; finalizers?: string[]; labels?: Record<string, string> } = {}): DomainObject {
  counter += 1;
  const name = overrides.name ?? `dom-${counter}`;
  return {
    apiVersion: 'linkplane.io/v1alpha1',
    kind: 'Domain',
    metadata: { name, namespace: NS, ...(overrides.finalizers ? { finalizers: overrides.finalizers } : {}), ...(overrides.labels ? { labels: overrides.labels } : {}) },
    spec: { hostname: overrides.hostname ?? `${name}.example.com`, tenant: 'ws_1' },
  };
}

function ownedBy(owner: KubeObject, kind: 'Certificate' | 'Ingress', name: string): KubeObject {
  const apiVersion = kind === 'Certificate' ? 'cert-manager.io/v1' : 'networking.k8s.io/v1';
  const ownerReferences = [{ apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true }];
  return { apiVersion, kind, metadata: { name, namespace: NS, ownerReferences }, spec: {} };
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function apiError(call: Promise<unknown>): Promise<{ code: number; body: { reason?: string; kind?: string } }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ApiException) return { code: err.code, body: JSON.parse(err.body as string) as { reason?: string; kind?: string } };
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('in-process Kubernetes API server (driven by @kubernetes/client-node)', function () {
  this.timeout(30_000);
  let server: KubeApiServer;
  let kc: KubeConfig;
  let custom: CustomObjectsApi;

  beforeEach(async () => {
    server = await startKubeApiServer();
    kc = server.kubeConfig();
    custom = kc.makeApiClient(CustomObjectsApi);
  });

  afterEach(async () => {
    await server.stop();
  });

  describe('custom objects', () => {
    it('creates a Domain with uid, resourceVersion, generation 1 and no status, and reads it back', async () => {
      const created = (await custom.createNamespacedCustomObject({ ...DOMAINS, body: { ...aDomain({ name: 'a' }), status: { phase: 'Active' } } })) as DomainObject;
      expect(created.metadata!.uid).to.be.a('string').and.not.empty;
      expect(created.metadata!.generation).to.equal(1);
      expect(created.metadata!.resourceVersion).to.match(/^\d+$/);
      expect(created.status, 'status is a subresource').to.equal(undefined);
      const read = (await custom.getNamespacedCustomObject({ ...DOMAINS, name: 'a' })) as DomainObject;
      expect(read).to.deep.equal(created);
      expect(server.get('Domain', NS, 'a')).to.deep.equal(created);
    });

    it('answers 409 AlreadyExists for a second create and 404 NotFound for an unknown name', async () => {
      await custom.createNamespacedCustomObject({ ...DOMAINS, body: aDomain({ name: 'twice' }) });
      const taken = await apiError(custom.createNamespacedCustomObject({ ...DOMAINS, body: aDomain({ name: 'twice' }) }));
      expect(taken.code).to.equal(409);
      expect(taken.body).to.include({ kind: 'Status', reason: 'AlreadyExists' });
      const missing = await apiError(custom.getNamespacedCustomObject({ ...DOMAINS, name: 'nope' }));
      expect(missing.code).to.equal(404);
      expect(missing.body.reason).to.equal('NotFound');
      expect((await apiError(custom.deleteNamespacedCustomObject({ ...DOMAINS, name: 'nope' }))).code).to.equal(404);
    });

    it('merge-patches status through /status without touching spec or generation', async () => {
      await custom.createNamespacedCustomObject({ ...DOMAINS, body: aDomain({ name: 's' }) });
      const patched = (await custom.patchNamespacedCustomObjectStatus(
        { ...DOMAINS, name: 's', body: { spec: { hostname: 'ignored.example.com' }, status: { phase: 'PendingVerification' } } },
        mergePatch,
      )) as DomainObject;
      expect(patched.status).to.deep.equal({ phase: 'PendingVerification' });
      expect(patched.spec.hostname).to.equal('s.example.com');
      expect(patched.metadata!.generation).to.equal(1);
      const last = server.requests.at(-1)!;
      expect(last).to.include({ method: 'PATCH', path: `${DOMAINS_PATH}/s/status`, contentType: 'application/merge-patch+json' });
    });

    it('keeps the resourceVersion when a status patch changes nothing', async () => {
      await custom.createNamespacedCustomObject({ ...DOMAINS, body: aDomain({ name: 'same' }) });
      const first = (await custom.patchNamespacedCustomObjectStatus({ ...DOMAINS, name: 'same', body: { status: { phase: 'PendingSSL' } } }, mergePatch)) as DomainObject;
      const again = (await custom.patchNamespacedCustomObjectStatus({ ...DOMAINS, name: 'same', body: { status: { phase: 'PendingSSL' } } }, mergePatch)) as DomainObject;
      expect(again.metadata!.resourceVersion).to.equal(first.metadata!.resourceVersion);
      expect(server.resourceVersion).to.equal(first.metadata!.resourceVersion);
    });

    it('bumps generation on a spec change (JSON patch, the client default) but not on a label change', async () => {
      await custom.createNamespacedCustomObject({ ...DOMAINS, body: aDomain({ name: 'g' }) });
      const labelled = (await custom.patchNamespacedCustomObject({ ...DOMAINS, name: 'g', body: { metadata: { labels: { team: 'a' } } } }, mergePatch)) as DomainObject;
      expect(labelled.metadata!.generation).to.equal(1);
      const respec = (await custom.patchNamespacedCustomObject({
        ...DOMAINS,
        name: 'g',
        body: [{ op: 'replace', path: '/spec/hostname', value: 'other.example.com' }],
      })) as DomainObject;
      expect(respec.spec.hostname).to.equal('other.example.com');
      expect(respec.metadata!.generation).to.equal(2);
    });

    it('ignores status on the main resource and rejects a replace with a stale resourceVersion', async () => {
      const created = (await custom.createNamespacedCustomObject({ ...DOMAINS, body: aDomain({ name: 'r' }) })) as DomainObject;
      server.patchStatus('Domain', NS, 'r', { phase: 'Active' });
      const replaced = (await custom.replaceNamespacedCustomObject({ ...DOMAINS, name: 'r', body: { ...server.get('Domain', NS, 'r'), status: { phase: 'Error' } } })) as DomainObject;
      expect(replaced.status).to.deep.equal({ phase: 'Active' });
      const stale = await apiError(custom.replaceNamespacedCustomObject({ ...DOMAINS, name: 'r', body: created }));
      expect(stale.code).to.equal(409);
      expect(stale.body.reason).to.equal('Conflict');
    });

    it('filters a list by label selector', async () => {
      server.create('Domain', aDomain({ name: 'l1', labels: { tenant: 'a' } }));
      server.create('Domain', aDomain({ name: 'l2', labels: { tenant: 'b' } }));
      const list = (await custom.listNamespacedCustomObject({ ...DOMAINS, labelSelector: 'tenant=a' })) as { kind: string; items: KubeObject[]; metadata: { resourceVersion: string } };
      expect(list.kind).to.equal('DomainList');
      expect(list.items.map((d) => d.metadata!.name)).to.deep.equal(['l1']);
      expect(list.metadata.resourceVersion).to.equal(server.resourceVersion);
    });
  });

  describe('deletion', () => {
    it('marks an object with finalizers as deleting and removes it when the finalizers are emptied', async () => {
      await custom.createNamespacedCustomObject({ ...DOMAINS, body: aDomain({ name: 'f', finalizers: ['linkplane.io/cleanup'] }) });
      const deleting = (await custom.deleteNamespacedCustomObject({ ...DOMAINS, name: 'f' })) as DomainObject;
      expect(deleting.metadata!.deletionTimestamp).to.be.a('string');
      expect(server.get('Domain', NS, 'f')?.metadata?.deletionTimestamp).to.equal(deleting.metadata!.deletionTimestamp);
      await custom.patchNamespacedCustomObject({ ...DOMAINS, name: 'f', body: { metadata: { finalizers: null } } }, mergePatch);
      expect(server.get('Domain', NS, 'f')).to.equal(undefined);
    });

    it('garbage-collects the objects a deleted owner owns, keeping those with another live owner', async () => {
      const domain = server.create('Domain', aDomain({ name: 'owner' }));
      const other = server.create('Domain', aDomain({ name: 'other' }));
      server.create('Certificate', ownedBy(domain, 'Certificate', 'owner-tls'));
      server.create('Ingress', ownedBy(domain, 'Ingress', 'owner-route'));
      const shared = ownedBy(domain, 'Ingress', 'shared-route');
      shared.metadata!.ownerReferences!.push(...ownedBy(other, 'Ingress', 'x').metadata!.ownerReferences!);
      server.create('Ingress', shared);
      await custom.deleteNamespacedCustomObject({ ...DOMAINS, name: 'owner' });
      expect(server.get('Certificate', NS, 'owner-tls')).to.equal(undefined);
      expect(server.get('Ingress', NS, 'owner-route')).to.equal(undefined);
      expect(server.get('Ingress', NS, 'shared-route')).to.not.equal(undefined);
    });
  });

  describe('informer (makeInformer over domains)', () => {
    let informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
    const seen: string[] = [];

    beforeEach(async () => {
      seen.length = 0;
      server.create('Domain', aDomain({ name: 'existing' }));
      informer = makeInformer(kc, DOMAINS_PATH, () => custom.listNamespacedCustomObject(DOMAINS));
      informer.on('add', (o) => seen.push(`add ${o.metadata!.name}`));
      informer.on('update', (o) => seen.push(`update ${o.metadata!.name}`));
      informer.on('delete', (o) => seen.push(`delete ${o.metadata!.name}`));
      await informer.start();
      await until(() => server.watchCount('Domain') === 1, 'the informer to watch');
    });

    afterEach(async () => {
      await informer.stop();
    });

    it('fires add, update and delete for the listed object and for changes made through the API', async () => {
      await custom.createNamespacedCustomObject({ ...DOMAINS, body: aDomain({ name: 'new' }) });
      await custom.patchNamespacedCustomObjectStatus({ ...DOMAINS, name: 'new', body: { status: { phase: 'PendingSSL' } } }, mergePatch);
      await custom.deleteNamespacedCustomObject({ ...DOMAINS, name: 'new' });
      await until(() => seen.length === 4, 'four callbacks');
      expect(seen).to.deep.equal(['add existing', 'add new', 'update new', 'delete new']);
    });

    it('sees the finalizer flow as an update with deletionTimestamp, then a delete', async () => {
      server.create('Domain', aDomain({ name: 'fin', finalizers: ['linkplane.io/cleanup'] }));
      server.delete('Domain', NS, 'fin');
      await until(() => informer.get('fin', NS)?.metadata?.deletionTimestamp !== undefined, 'the deletionTimestamp in the cache');
      server.update('Domain', { ...server.get('Domain', NS, 'fin')!, metadata: { ...server.get('Domain', NS, 'fin')!.metadata, finalizers: [] } });
      await until(() => seen.includes('delete fin'), 'the delete callback');
      expect(seen).to.deep.equal(['add existing', 'add fin', 'update fin', 'delete fin']);
    });

    it('re-watches from its last resourceVersion when the server ends the watch', async () => {
      server.create('Domain', aDomain({ name: 'before' }));
      await until(() => seen.includes('add before'), 'the first add');
      const rv = server.resourceVersion;
      expect(server.closeWatches('Domain')).to.equal(1);
      await until(() => server.watchCount('Domain') === 1, 'the informer to watch again');
      const watches = server.requests.filter((r) => r.path === DOMAINS_PATH && r.query.watch === 'true');
      expect(watches.at(-1)!.query.resourceVersion).to.equal(rv);
      expect(server.requests.filter((r) => r.path === DOMAINS_PATH && r.query.watch === undefined)).to.have.length(1);
      server.create('Domain', aDomain({ name: 'after' }));
      await until(() => seen.includes('add after'), 'the add after the re-watch');
    });

    it('re-lists after ERROR 410 Gone and reports objects deleted meanwhile', async () => {
      await informer.stop();
      await until(() => server.watchCount('Domain') === 0, 'the watch to close');
      server.delete('Domain', NS, 'existing');
      server.create('Domain', aDomain({ name: 'while-away' }));
      server.expireWatches();
      await informer.start();
      await until(() => seen.includes('delete existing') && seen.includes('add while-away'), 'the re-list to reconcile the cache');
      const lists = server.requests.filter((r) => r.path === DOMAINS_PATH && r.query.watch === undefined);
      expect(lists).to.have.length(2);
    });

    it('re-lists when an open watch receives ERROR 410 Gone', async () => {
      const listsBefore = server.requests.filter((r) => r.path === DOMAINS_PATH && r.query.watch === undefined).length;
      expect(server.expireWatches('Domain')).to.equal(1);
      await until(() => server.requests.filter((r) => r.path === DOMAINS_PATH && r.query.watch === undefined).length === listsBefore + 1, 'a re-list');
      await until(() => server.watchCount('Domain') === 1, 'the informer to watch again');
      server.create('Domain', aDomain({ name: 'after-gone' }));
      await until(() => seen.includes('add after-gone'), 'the add after the re-list');
    });
  });

  describe('watch protocol', () => {
    it('sends ERROR with a 410 Status to a watch from a compacted resourceVersion', async () => {
      server.create('Domain', aDomain());
      const old = server.resourceVersion;
      server.create('Domain', aDomain());
      server.expireWatches();
      server.create('Domain', aDomain());
      const events: { type: string; object: { code?: number; reason?: string } }[] = [];
      await new Promise<void>((resolve, reject) => {
        void new Watch(kc).watch(DOMAINS_PATH, { resourceVersion: old }, (type, object: { code?: number; reason?: string }) => events.push({ type, object }), (err) => (err ? reject(err as Error) : resolve()));
      });
      expect(events).to.deep.equal([{ type: 'ERROR', object: events[0]!.object }]);
      expect(events[0]!.object).to.include({ code: 410, reason: 'Expired' });
    });
  });

  describe('built-in kinds', () => {
    it('creates and replaces a Lease, answering 409 to a replace from a stale resourceVersion', async () => {
      const leases = kc.makeApiClient(CoordinationV1Api);
      const lease: V1Lease = { metadata: { name: 'linkplane-operator', namespace: NS }, spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15, renewTime: new Date() } };
      const created = await leases.createNamespacedLease({ namespace: NS, body: lease });
      const renewed = await leases.replaceNamespacedLease({ name: 'linkplane-operator', namespace: NS, body: { ...created, spec: { ...created.spec, renewTime: new Date(Date.now() + 1000) } } });
      expect(renewed.metadata!.resourceVersion).to.not.equal(created.metadata!.resourceVersion);
      const stolen = await apiError(leases.replaceNamespacedLease({ name: 'linkplane-operator', namespace: NS, body: { ...created, spec: { ...created.spec, holderIdentity: 'pod-b' } } }));
      expect(stolen.code).to.equal(409);
      expect(server.get<V1Lease & KubeObject>('Lease', NS, 'linkplane-operator')!.spec!.holderIdentity).to.equal('pod-a');
    });

    it('records core v1 and events.k8s.io v1 Events, naming them from generateName', async () => {
      const domain = server.create('Domain', aDomain({ name: 'evt' }));
      const involvedObject = { apiVersion: domain.apiVersion, kind: domain.kind, name: 'evt', namespace: NS, uid: domain.metadata!.uid };
      await kc.makeApiClient(CoreV1Api).createNamespacedEvent({
        namespace: NS,
        body: { metadata: { generateName: 'evt.', namespace: NS }, involvedObject, reason: 'Verified', message: 'DNS records found', type: 'Normal' },
      });
      await kc.makeApiClient(EventsV1Api).createNamespacedEvent({
        namespace: NS,
        body: { metadata: { generateName: 'evt.', namespace: NS }, eventTime: new Date(), regarding: involvedObject, reason: 'Issued', note: 'certificate ready', type: 'Normal', action: 'Reconcile', reportingController: 'linkplane.io/operator', reportingInstance: 'pod-a' },
      });
      const events = server.events<KubeObject & { reason: string }>();
      expect(events.map((e) => [e.apiVersion, e.reason])).to.deep.equal([['v1', 'Verified'], ['events.k8s.io/v1', 'Issued']]);
      expect(events[0]!.metadata!.name).to.match(/^evt\..+/);
    });

    it('serves a child process configuration through the kubeconfig file', async () => {
      server.create('Certificate', { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: NS }, spec: {} });
      const fromFile = new KubeConfig();
      fromFile.loadFromFile(server.kubeconfigFile());
      const cert = (await fromFile.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: 'cert-manager.io', version: 'v1', namespace: NS, plural: 'certificates', name: 'c' })) as KubeObject;
      expect(cert.metadata!.name).to.equal('c');
    });

    it('answers discovery, so KubernetesObjectApi can resolve kinds to resources', async () => {
      const objects = KubernetesObjectApi.makeApiClient(kc);
      await objects.create({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'route', namespace: NS }, spec: { ingressClassName: 'nginx' } } as KubernetesObject);
      const read = await objects.read({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'route', namespace: NS } });
      expect(read.metadata!.uid).to.equal(server.get('Ingress', NS, 'route')!.metadata!.uid);
      expect(server.requests.some((r) => r.path === '/apis/networking.k8s.io/v1')).to.equal(true);
    });

    it('fails injected requests with a Status of the given code', async () => {
      server.create('Domain', aDomain({ name: 'flaky' }));
      server.failRequests({ method: 'PATCH', path: /\/status$/, code: 409 });
      const failed = await apiError(custom.patchNamespacedCustomObjectStatus({ ...DOMAINS, name: 'flaky', body: { status: { phase: 'Error' } } }, mergePatch));
      expect(failed.code).to.equal(409);
      await custom.patchNamespacedCustomObjectStatus({ ...DOMAINS, name: 'flaky', body: { status: { phase: 'Error' } } }, mergePatch);
      expect((server.get<DomainObject>('Domain', NS, 'flaky'))!.status).to.deep.equal({ phase: 'Error' });
    });
  });
});
