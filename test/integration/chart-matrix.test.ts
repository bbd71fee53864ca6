// The chart across the installations operators run (charts/linkplane/ci/*-values.yaml): each values file is
// linted strictly, rendered, and every object validated against the Kubernetes, cert-manager and Prometheus
// Operator schemas; every pod of every variant is hardened. Also: the monitoring objects (PrometheusRule,
// ServiceMonitor, dashboards) follow the cluster, and values.schema.json is complete and strict.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { load } from 'js-yaml';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IPrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { CHART, PROMETHEUS_OPERATOR, RELEASE, configOf, find, helm, one, render, validate, type K8sObject, WITH_SECRET_KEY } from '../helpers/chart.ts';
import { DASHBOARDS_DIR, RULES_FILE } from '../../scripts/monitoring/generate.ts';
import { RUNBOOK_URL } from '../../scripts/monitoring/rules.ts';

const CI = path.join(CHART, 'ci');

function kindsOf(objects: K8sObject[]): Set<string> {
  return new Set(objects.map((o) => o.kind));
}

/** What every pod of every variant must be: non-root, read-only, capability-free, bounded, probed, spread, drained. */
function assertHardened(objects: K8sObject[], variant: string): void {
  const shutdownMs = Number(configOf(objects).data?.SHUTDOWN_TIMEOUT_MS);
  const deployments = find<IDeployment>(objects, 'Deployment');
  assert.ok(deployments.length >= 3, variant);
  for (const deployment of deployments) {
    const where = `${variant}: ${deployment.metadata!.name}`;
    const pod = deployment.spec!.template.spec!;
    assert.partialDeepStrictEqual(pod.securityContext, { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }, where);
    assert.ok((pod.terminationGracePeriodSeconds ?? 30) * 1000 > shutdownMs, `${where}: grace period longer than the shutdown timeout`);
    const labels = deployment.spec!.template.metadata!.labels ?? {};
    const spread = pod.topologySpreadConstraints ?? [];
    assert.ok(spread.length > 0, `${where}: topology spread`);
    for (const constraint of spread) assert.partialDeepStrictEqual(labels, constraint.labelSelector?.matchLabels, where);
    for (const container of pod.containers) {
      assert.partialDeepStrictEqual(container.securityContext, {
        runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' },
      }, where);
      for (const bound of ['requests', 'limits'] as const) {
        assert.deepEqual(Object.keys(container.resources?.[bound] ?? {}).sort(), ['cpu', 'memory'], `${where}: ${bound}`);
      }
      assert.deepEqual(container.livenessProbe?.httpGet, { path: '/healthz', port: 'http' }, where);
      assert.deepEqual(container.readinessProbe?.httpGet, { path: '/readyz', port: 'http' }, where);
    }
  }
}

function envOf(objects: K8sObject[], component: string): Record<string, unknown> {
  const container = one<IDeployment>(objects, 'Deployment', component).spec!.template.spec!.containers[0]!;
  return Object.fromEntries((container.env ?? []).map((v) => [v.name, v.value ?? v.valueFrom]));
}

interface Variant {
  name: string;
  file: string;
  /** The cluster's API versions beyond the core (helm --api-versions). */
  cluster: string[];
  check: (objects: K8sObject[]) => void;
}

const VARIANTS: Variant[] = [
  {
    name: 'minimal',
    file: 'minimal-values.yaml',
    cluster: [],
    check(objects) {
      assert.deepEqual(find(objects, 'PodDisruptionBudget'), []);
      assert.deepEqual(find(objects, 'Deployment', 'operator'), []);
      for (const component of ['api', 'redirect', 'worker']) {
        assert.equal(one<IDeployment>(objects, 'Deployment', component).spec!.replicas, 1);
        assert.deepEqual(envOf(objects, component).MONGODB_URI, { secretKeyRef: { name: 'acme-mongodb', key: 'connectionString.standardSrv' } });
        assert.deepEqual(envOf(objects, component).NATS_URL, { secretKeyRef: { name: 'acme-nats', key: 'NATS_URL' } });
      }
      assert.equal(configOf(objects).data?.NATS_URL, undefined, 'NATS_URL comes from the Secret only');
      assert.deepEqual(Object.keys(one<ISecret>(objects, 'Secret').data ?? {}), ['SECRET_KEY']);
    },
  },
  {
    name: 'HA with HPA and PDBs',
    file: 'ha-values.yaml',
    cluster: PROMETHEUS_OPERATOR,
    check(objects) {
      assert.equal(find(objects, 'HorizontalPodAutoscaler').length, 2);
      assert.equal(find(objects, 'PodDisruptionBudget').length, 4);
      assert.equal(one<IDeployment>(objects, 'Deployment', 'worker').spec!.replicas, 3);
      for (const deployment of find<IDeployment>(objects, 'Deployment')) {
        const spread = deployment.spec!.template.spec!.topologySpreadConstraints ?? [];
        assert.deepEqual(spread.map((c) => [c.topologyKey, c.whenUnsatisfiable]), [
          ['kubernetes.io/hostname', 'DoNotSchedule'], ['topology.kubernetes.io/zone', 'DoNotSchedule'],
        ]);
      }
      const ingressNginx = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } };
      const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
      // `helm test` reaches every process Service from the release's test pods.
      const testPods = { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'linkplane', 'app.kubernetes.io/instance': 'lp', 'app.kubernetes.io/component': 'test' } } };
      for (const [component, from] of [['api', [ingressNginx, monitoring, testPods]], ['redirect', [ingressNginx, monitoring, testPods]], ['worker', [monitoring, testPods]], ['operator', [monitoring]]] as const) {
        const policy = one<INetworkPolicy>(objects, 'NetworkPolicy', component);
        assert.deepEqual(policy.spec!.policyTypes, ['Ingress']);
        assert.deepEqual(policy.spec!.ingress, [{ ports: [{ port: 'http', protocol: 'TCP' }], from }], component);
        assert.equal(policy.spec!.podSelector?.matchLabels?.['app.kubernetes.io/component'], component);
      }
      assert.ok(kindsOf(objects).has('PrometheusRule') && kindsOf(objects).has('ServiceMonitor'));
    },
  },
  {
    name: 'cluster-wide operator',
    file: 'cluster-wide-operator-values.yaml',
    cluster: PROMETHEUS_OPERATOR,
    check(objects) {
      assert.equal(one<K8sObject>(objects, 'ClusterRoleBinding', 'operator').metadata.name, `${RELEASE}-linkplane-operator`);
      assert.deepEqual(find(objects, 'RoleBinding', 'operator').map((o) => (o as K8sObject).metadata.name), [`${RELEASE}-linkplane-operator-leader-election`]);
      assert.equal(one<K8sObject>(objects, 'ClusterIssuer').metadata.name, 'letsencrypt');
      assert.equal(configOf(objects).data?.DOMAIN_A_TARGETS, '203.0.113.10');
    },
  },
  {
    name: 'no cert-manager',
    file: 'no-cert-manager-values.yaml',
    cluster: PROMETHEUS_OPERATOR,
    check(objects) {
      assert.deepEqual(objects.filter((o) => o.apiVersion.startsWith('cert-manager.io/')), []);
      assert.deepEqual(find(objects, 'Deployment', 'operator'), []);
      assert.equal(configOf(objects).data?.DOMAINS_KUBE, 'off');
    },
  },
  {
    name: 'no Prometheus Operator (switched off, even where the cluster serves it)',
    file: 'no-prometheus-operator-values.yaml',
    cluster: PROMETHEUS_OPERATOR,
    check(objects) {
      assert.deepEqual(objects.filter((o) => o.apiVersion.startsWith('monitoring.coreos.com/')), []);
      for (const deployment of find<IDeployment>(objects, 'Deployment')) {
        assert.equal(deployment.spec!.template.metadata!.annotations?.['prometheus.io/scrape'], 'true');
      }
      assert.equal(find(objects, 'ConfigMap').length, 7, 'the dashboards are still shipped');
    },
  },
];

describe('Helm chart values matrix (charts/linkplane/ci)', function () {
  this.timeout(120_000);
  let directory: string;
  before(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'linkplane-matrix-'));
  });
  after(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('has a test for every values file in ci/', async () => {
    assert.deepEqual((await readdir(CI)).sort(), VARIANTS.map((v) => v.file).sort());
  });

  for (const variant of VARIANTS) {
    describe(variant.name, function () {
      let objects: K8sObject[];
      before(async () => {
        objects = await render('--values', path.join(CI, variant.file), ...variant.cluster);
      });

      it('passes helm lint --strict', async () => {
        const result = await helm('lint', '--strict', CHART, '--values', path.join(CI, variant.file));
        assert.equal(result.code, 0, result.stdout + result.stderr);
        assert.doesNotMatch(result.stdout + result.stderr, /\[(WARNING|ERROR)\]/);
      });

      it('renders only objects valid for Kubernetes, cert-manager and the Prometheus Operator', () => {
        assert.ok(objects.length > 10);
        for (const object of objects) validate(object);
      });

      it('hardens every pod', () => assertHardened(objects, variant.name));

      it('renders what this installation asks for', () => variant.check(objects));
    });
  }

  describe('monitoring objects', () => {
    it('render the PrometheusRule and the ServiceMonitor by default only where the cluster serves them', async () => {
      const [without, withOperator] = await Promise.all([render(), render(...PROMETHEUS_OPERATOR)]);
      assert.ok(!kindsOf(without).has('PrometheusRule') && !kindsOf(without).has('ServiceMonitor'));
      assert.ok(kindsOf(withOperator).has('PrometheusRule') && kindsOf(withOperator).has('ServiceMonitor'));
      const forced = await render('--set', 'metrics.prometheusRule.enabled=true');
      assert.ok(kindsOf(forced).has('PrometheusRule'), 'true renders it whatever the cluster says');
    });

    it('ship exactly the rules promtool tests, with runbook links to the configured runbooks', async () => {
      const file = load(await readFile(RULES_FILE, 'utf8')) as { groups: unknown[] };
      // The file is written for release `linkplane` in namespace `linkplane` (jobs linkplane-api...).
      const rule = one<IPrometheusRule>(await render(...PROMETHEUS_OPERATOR, '--namespace', 'linkplane', '--set', 'fullnameOverride=linkplane'), 'PrometheusRule');
      assert.deepEqual(rule.spec.groups, file.groups);
      const mine = 'https://runbooks.acme.example/linkplane.md';
      const moved = one<IPrometheusRule>(await render(...PROMETHEUS_OPERATOR, '--set', `metrics.prometheusRule.runbookUrl=${mine}`), 'PrometheusRule');
      const urls = moved.spec.groups!.flatMap((g) => g.rules ?? []).flatMap((r) => (r.alert ? [r.annotations?.runbook_url ?? ''] : []));
      assert.ok(urls.length >= 15);
      for (const url of urls) assert.match(url, new RegExp(`^${mine.replaceAll('.', '\\.')}#linkplane[a-z]+$`));
      assert.ok(!JSON.stringify(moved).includes(RUNBOOK_URL));
    });

    it('ship every dashboard as a ConfigMap labelled for the Grafana sidecar, byte for byte', async () => {
      const objects = await render();
      const dashboards = find<IConfigMap>(objects, 'ConfigMap').filter((c) => c.metadata!.labels?.grafana_dashboard === '1');
      const files = (await readdir(DASHBOARDS_DIR)).sort();
      assert.equal(files.length, 6);
      assert.deepEqual(dashboards.flatMap((c) => Object.keys(c.data ?? {})).sort(), files);
      for (const configMap of dashboards) {
        const [name, json] = Object.entries(configMap.data ?? {})[0]!;
        assert.equal(`${json}\n`, await readFile(path.join(DASHBOARDS_DIR, name), 'utf8'));
        const dashboard = JSON.parse(json) as { uid: string; title: string; templating: { list: Array<{ name: string }> } };
        assert.match(dashboard.title, /^Linkplane \//);
        assert.deepEqual(dashboard.templating.list.map((v) => v.name), ['datasource', 'namespace', 'instance']);
      }
      const off = await render('--set', 'metrics.dashboards.enabled=false');
      assert.equal(find(off, 'ConfigMap').length, 1);
    });
  });

  it("renders the copy-paste helm install of docs/kubernetes.md, and lints it strictly", async () => {
    const page = await readFile(path.resolve(CHART, '../../docs/kubernetes.md'), 'utf8');
    const command = /^helm install linkplane \.\/charts\/linkplane[^`]*?[^\\]\n/m.exec(page)?.[0];
    assert.ok(command, 'docs/kubernetes.md has a helm install command');
    // Shell words: line continuations joined, single quotes removed (the command uses no other quoting).
    const words = command.replace(/\\\n/g, ' ').trim().split(/\s+/).map((w) => w.replace(/^'(.*)'$/, '$1'));
    const [, , release, chart, ...args] = words;
    assert.equal(chart, './charts/linkplane');
    const objects = await render(...args.filter((a, i) => !(a === '--namespace' || args[i - 1] === '--namespace')), ...PROMETHEUS_OPERATOR);
    for (const object of objects) validate(object);
    assert.ok(release);
    assert.deepEqual(envOf(objects, 'api').MONGODB_URI, { secretKeyRef: { name: 'linkplane-mongodb', key: 'MONGODB_URI' } });
    assert.deepEqual(envOf(objects, 'worker').NATS_URL, { secretKeyRef: { name: 'linkplane-nats', key: 'NATS_URL' } });
    assert.equal(find(objects, 'Ingress').length, 2);
    assert.equal(one<K8sObject>(objects, 'ClusterIssuer').metadata.name, 'letsencrypt');
    const lint = await helm('lint', '--strict', CHART, ...args.filter((a, i) => !(a === '--namespace' || args[i - 1] === '--namespace')));
    assert.equal(lint.code, 0, lint.stdout + lint.stderr);
  });

  describe('values.schema.json', () => {
    async function renderWith(name: string, values: string) {
      const file = path.join(directory, name);
      await writeFile(file, values);
      return helm('template', RELEASE, CHART, ...WITH_SECRET_KEY, '--values', file);
    }

    it('declares every value of values.yaml, and closes every object it declares', async () => {
      const schema = JSON.parse(await readFile(path.join(CHART, 'values.schema.json'), 'utf8')) as Schema;
      const values = load(await readFile(path.join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
      interface Schema { type?: string | string[]; properties?: Record<string, Schema>; additionalProperties?: boolean | Schema; items?: Schema }
      const undeclared: string[] = [];
      const walk = (value: unknown, node: Schema | undefined, at: string): void => {
        if (node === undefined) {
          undeclared.push(at);
          return;
        }
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
          for (const [key, child] of Object.entries(value)) {
            const declared = node.properties?.[key] ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
            walk(child, declared, `${at}.${key}`);
          }
        }
      };
      walk(values, schema, '');
      assert.deepEqual(undeclared, []);
      const open: string[] = [];
      const closed = (node: Schema, at: string): void => {
        if (node.properties && node.additionalProperties !== false && at !== '.global') open.push(at);
        for (const [key, child] of Object.entries(node.properties ?? {})) closed(child, `${at}.${key}`);
        if (node.items) closed(node.items, `${at}[]`);
      };
      closed(schema, '');
      assert.deepEqual(open, []);
    });

    it('fails a misspelt nested value with its path and name', async () => {
      const result = await renderWith('typo.yaml', 'metrics:\n  prometheusRule:\n    enable: true\n');
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /metrics\/prometheusRule[\s\S]*additional properties 'enable' not allowed/);
    });

    it('fails a misspelt top-level key and a wrong switch value', async () => {
      const top = await renderWith('top.yaml', 'networkPolicies:\n  enabled: true\n');
      assert.match(top.stderr, /additional properties 'networkPolicies' not allowed/);
      const tri = await renderWith('tri.yaml', 'metrics:\n  serviceMonitor:\n    enabled: "yes"\n');
      assert.notEqual(tri.code, 0);
      assert.match(tri.stderr, /metrics\/serviceMonitor\/enabled/);
    });

    it('refuses a container without limits, and a security context field that does not exist', async () => {
      const limits = await renderWith('limits.yaml', 'api:\n  resources:\n    limits: null\n');
      assert.notEqual(limits.code, 0);
      assert.match(limits.stderr, /\/api\/resources[\s\S]*limits/);
      const security = await renderWith('security.yaml', 'securityContext:\n  readOnlyRootFileSystem: true\n');
      assert.notEqual(security.code, 0);
      assert.match(security.stderr, /additional properties 'readOnlyRootFileSystem' not allowed/);
    });
  });
});
