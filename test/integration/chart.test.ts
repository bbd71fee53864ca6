// The Helm chart, checked the way a cluster would see it: helm lints it strictly, renders it with default
// values and with every optional feature on, and every rendered object must pass the Kubernetes OpenAPI
// schema (kubernetes-models) plus the properties the platform relies on (non-root, probes, config keys).
// Assertions use node:assert: chai ships no type declarations, and these checks must type-check.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadAll } from 'js-yaml';
import type { Model } from '@kubernetes-models/base';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress, type IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret, type ISecret } from 'kubernetes-models/v1/Secret';
import { Service, type IService } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { helmPath } from '../../scripts/helm.ts';

const CHART = path.resolve(import.meta.dirname, '../../charts/linkplane');
const RELEASE = 'lp';
const NAMESPACE = 'linkplane-test';
const PROCESSES = { api: 8080, redirect: 8081, worker: 8082 } as const;
const ALL_FEATURES = [
  'autoscaling.enabled=true',
  'metrics.serviceMonitor.enabled=true',
  'ingress.api.enabled=true',
  'ingress.redirect.enabled=true',
].join(',');

// The environment the processes validate at start, split by where it must live.
const CONFIG_KEYS = [
  'MONGODB_DB', 'NATS_URL', 'LOG_LEVEL', 'PUBLIC_API_URL', 'SHORT_LINK_BASE_URL', 'DEFAULT_SHORT_DOMAIN',
  'API_PORT', 'REDIRECT_PORT', 'WORKER_PORT', 'HOST', 'RATE_LIMIT_WORKSPACE_PER_MIN',
  'RATE_LIMIT_PARTNER_PER_MIN', 'IDEMPOTENCY_TTL_HOURS', 'SHUTDOWN_TIMEOUT_MS',
];
const SECRET_KEYS = ['MONGODB_URI', 'SECRET_KEY'];

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: unknown;
}

// kubernetes-models has no Prometheus Operator types: these are the fields Prometheus needs.
interface ServiceMonitor extends K8sObject {
  spec: {
    selector: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values: string[] }[] };
    endpoints: { port?: string; path?: string }[];
  };
}

// Every kind the chart may render needs a schema check here, so a new template cannot skip validation.
const MODELS: Record<string, new (data: never) => Model<unknown>> = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
};

function validate(object: K8sObject): void {
  const type = `${object.apiVersion}/${object.kind}`;
  if (type === 'monitoring.coreos.com/v1/ServiceMonitor') {
    const { spec } = object as ServiceMonitor;
    assert.ok(Object.keys(spec.selector.matchLabels ?? {}).length > 0, 'ServiceMonitor selects by labels');
    assert.ok(spec.endpoints.length > 0, 'ServiceMonitor has endpoints');
    for (const endpoint of spec.endpoints) assert.match(endpoint.path ?? '', /^\//);
    return;
  }
  const Model = MODELS[type];
  if (Model === undefined) assert.fail(`no schema check for ${type} ${object.metadata.name}`);
  new Model(object as never).validate();
}

interface HelmResult { code: number; stdout: string; stderr: string }

async function helm(...args: string[]): Promise<HelmResult> {
  const binary = await helmPath();
  return new Promise((resolve) => {
    execFile(binary, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

async function render(...args: string[]): Promise<K8sObject[]> {
  const result = await helm('template', RELEASE, CHART, '--namespace', NAMESPACE, ...args);
  assert.equal(result.code, 0, result.stderr);
  // Templates that render nothing leave empty documents behind.
  return loadAll(result.stdout).filter((document): document is K8sObject => document !== null);
}

// Objects of a kind (and of one process), typed with the kubernetes-models interface the schema check used.
function find<T>(objects: K8sObject[], kind: string, component?: string): T[] {
  return objects.filter((o) => o.kind === kind &&
    (component === undefined || o.metadata.labels?.['app.kubernetes.io/component'] === component)) as T[];
}

function one<T>(objects: K8sObject[], kind: string, component?: string): T {
  const found = find<T>(objects, kind, component);
  assert.equal(found.length, 1, `exactly one ${kind} ${component ?? ''}`);
  return found[0]!;
}

function containerOf(objects: K8sObject[], component: string): IContainer {
  const containers = one<IDeployment>(objects, 'Deployment', component).spec!.template.spec!.containers;
  assert.equal(containers.length, 1);
  return containers[0]!;
}

function kinds(objects: K8sObject[]): string[] {
  return objects.map((o) => o.kind).sort();
}

function decode(base64: string | undefined): string {
  return Buffer.from(base64 ?? '', 'base64').toString('utf8');
}

describe('Helm chart charts/linkplane', function () {
  let defaults: K8sObject[];
  let everything: K8sObject[];
  let directory: string;

  before(async function () {
    this.timeout(120_000); // the first call extracts helm from the npm package
    directory = await mkdtemp(path.join(tmpdir(), 'linkplane-chart-'));
    [defaults, everything] = await Promise.all([render(), render('--set', ALL_FEATURES)]);
  });
  after(async function () {
    await rm(directory, { recursive: true, force: true });
  });

  // A values file: unlike --set, it is how users configure releases, and it parses numbers as floats.
  async function valuesFile(name: string, values: string): Promise<string> {
    const file = path.join(directory, name);
    await writeFile(file, values);
    return file;
  }

  describe('helm lint --strict', function () {
    for (const [name, args] of [['default values', []], ['every optional feature', ['--set', ALL_FEATURES]]] as const) {
      it(`passes without warnings with ${name}`, async function () {
        const result = await helm('lint', '--strict', CHART, ...args);
        const output = result.stdout + result.stderr;
        assert.equal(result.code, 0, output);
        assert.doesNotMatch(output, /\[(WARNING|ERROR)\]/);
      });
    }
  });

  describe('rendered objects', function () {
    it('are all valid Kubernetes objects, with default values and with every feature', function () {
      for (const object of [...defaults, ...everything]) validate(object);
    });

    it('are by default the processes, their Services and PDBs, config, Secret and ServiceAccount', function () {
      assert.deepEqual(kinds(defaults), [
        'ConfigMap',
        'Deployment', 'Deployment', 'Deployment',
        'PodDisruptionBudget', 'PodDisruptionBudget', 'PodDisruptionBudget',
        'Secret',
        'Service', 'Service', 'Service',
        'ServiceAccount',
      ]);
    });

    it('add HPAs and Ingresses for api and redirect, and a ServiceMonitor, when enabled', function () {
      const added = kinds(everything).filter((kind) => !kinds(defaults).includes(kind));
      assert.deepEqual(added, ['HorizontalPodAutoscaler', 'HorizontalPodAutoscaler', 'Ingress', 'Ingress', 'ServiceMonitor']);
      for (const component of ['api', 'redirect']) {
        const deployment = one<IDeployment>(everything, 'Deployment', component);
        const hpa = one<IHorizontalPodAutoscaler>(everything, 'HorizontalPodAutoscaler', component);
        assert.partialDeepStrictEqual(hpa.spec.scaleTargetRef, { kind: 'Deployment', name: deployment.metadata!.name });
        // The HPA owns the replica count; a rendered one would reset it on every upgrade.
        assert.equal(deployment.spec!.replicas, undefined);

        const service = one<IService>(everything, 'Service', component);
        const ingress = one<IIngress>(everything, 'Ingress', component);
        const backend = ingress.spec!.rules![0]!.http!.paths[0]!.backend.service;
        assert.deepEqual(backend, { name: service.metadata!.name, port: { name: 'http' } });
      }
      assert.equal(one<IDeployment>(everything, 'Deployment', 'worker').spec!.replicas, 1);
    });

    it('scrape all three processes through their Services when the ServiceMonitor is on', function () {
      const monitor = one<ServiceMonitor>(everything, 'ServiceMonitor');
      const { matchLabels = {}, matchExpressions = [] } = monitor.spec.selector;
      for (const component of Object.keys(PROCESSES)) {
        const service = one<IService>(everything, 'Service', component);
        const labels = service.metadata!.labels ?? {};
        assert.partialDeepStrictEqual(labels, matchLabels);
        for (const { key, values } of matchExpressions) assert.ok(values.includes(labels[key] ?? ''), `${key} of ${component}`);
        assert.ok(service.spec!.ports!.some((port) => port.name === monitor.spec.endpoints[0]!.port));
      }
    });

    it('carry the standard labels, and every per-process object its component', function () {
      for (const object of everything) {
        assert.partialDeepStrictEqual(object.metadata.labels, {
          'app.kubernetes.io/name': 'linkplane',
          'app.kubernetes.io/instance': RELEASE,
          'app.kubernetes.io/version': '0.1.0',
          'app.kubernetes.io/managed-by': 'Helm',
          'helm.sh/chart': 'linkplane-0.1.0',
        }, `${object.kind} ${object.metadata.name}`);
      }
      const perProcess = everything.filter((o) => !['ConfigMap', 'Secret', 'ServiceAccount', 'ServiceMonitor'].includes(o.kind));
      assert.equal(perProcess.length, 3 * 3 + 2 * 2);
      for (const object of perProcess) {
        assert.ok(object.metadata.labels?.['app.kubernetes.io/component'], `${object.kind} ${object.metadata.name}`);
      }
    });
  });

  describe('Deployments', function () {
    for (const [component, port] of Object.entries(PROCESSES)) {
      it(`${component} runs the ${component} process, non-root, on port ${port}`, function () {
        const pod = one<IDeployment>(defaults, 'Deployment', component).spec!.template.spec!;
        const container = containerOf(defaults, component);
        assert.deepEqual(container.args, [component]);
        assert.deepEqual(container.ports, [{ name: 'http', containerPort: port, protocol: 'TCP' }]);
        assert.partialDeepStrictEqual(pod.securityContext, {
          runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' },
        });
        assert.partialDeepStrictEqual(container.securityContext, {
          runAsNonRoot: true,
          runAsUser: 10001,
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
        assert.equal(pod.terminationGracePeriodSeconds, 30);
        assert.deepEqual(Object.keys(container.resources?.requests ?? {}).sort(), ['cpu', 'memory']);
        assert.deepEqual(Object.keys(container.resources?.limits ?? {}).sort(), ['cpu', 'memory']);
      });

      it(`${component} is probed on /healthz (liveness) and /readyz (readiness) and announces its metrics`, function () {
        const container = containerOf(defaults, component);
        assert.deepEqual(container.livenessProbe?.httpGet, { path: '/healthz', port: 'http' });
        assert.deepEqual(container.readinessProbe?.httpGet, { path: '/readyz', port: 'http' });
        const pod = one<IDeployment>(defaults, 'Deployment', component).spec!.template.metadata!;
        assert.partialDeepStrictEqual(pod.annotations, {
          'prometheus.io/scrape': 'true',
          'prometheus.io/port': String(port),
          'prometheus.io/path': '/metrics',
        });
      });

      it(`${component} has a Service selecting exactly its pods`, function () {
        const service = one<IService>(defaults, 'Service', component);
        const podLabels = one<IDeployment>(defaults, 'Deployment', component).spec!.template.metadata!.labels;
        assert.equal(service.spec!.selector?.['app.kubernetes.io/component'], component);
        assert.partialDeepStrictEqual(podLabels, service.spec!.selector);
        assert.deepEqual(service.spec!.ports, [{ name: 'http', port, targetPort: 'http', protocol: 'TCP' }]);
      });
    }

    it('roll their pods when the configuration changes, and only then', async function () {
      const checksum = (objects: K8sObject[]): string | undefined =>
        one<IDeployment>(objects, 'Deployment', 'api').spec!.template.metadata!.annotations?.['checksum/config'];
      const [again, changed] = await Promise.all([render(), render('--set', 'config.logLevel=debug')]);
      assert.match(checksum(defaults) ?? '', /^[0-9a-f]{64}$/);
      assert.equal(checksum(again), checksum(defaults));
      assert.notEqual(checksum(changed), checksum(defaults));
    });
  });

  describe('configuration', function () {
    it('puts the non-secret settings in the ConfigMap and the secrets in the Secret', function () {
      const data = one<IConfigMap>(defaults, 'ConfigMap').data ?? {};
      assert.deepEqual(Object.keys(data).sort(), [...CONFIG_KEYS].sort());
      assert.partialDeepStrictEqual(data, { MONGODB_DB: 'linkplane', API_PORT: '8080', SHUTDOWN_TIMEOUT_MS: '25000' });
      const secret = one<ISecret>(defaults, 'Secret').data ?? {};
      assert.deepEqual(Object.keys(secret).sort(), SECRET_KEYS);
      assert.equal(decode(secret.MONGODB_URI), 'mongodb://mongodb:27017');
      assert.match(decode(secret.SECRET_KEY), /^[A-Za-z0-9]{64}$/);
    });

    it('hands both to every process', function () {
      const configMap = one<IConfigMap>(defaults, 'ConfigMap').metadata!.name;
      const secret = one<ISecret>(defaults, 'Secret').metadata!.name;
      for (const component of Object.keys(PROCESSES)) {
        const container = containerOf(defaults, component);
        assert.deepEqual(container.envFrom, [{ configMapRef: { name: configMap } }]);
        assert.deepEqual(container.env, SECRET_KEYS.map((key) => ({
          name: key,
          valueFrom: { secretKeyRef: { name: secret, key } },
        })));
      }
    });

    it('adds extra variables to the ConfigMap without large numbers turning into floats', async function () {
      const file = await valuesFile('extra.yaml', 'config:\n  rateLimitPartnerPerMin: 10000000\n  extra:\n    NATS_PREFIX: prod\n');
      const objects = await render('--values', file);
      assert.partialDeepStrictEqual(one<IConfigMap>(objects, 'ConfigMap').data, {
        NATS_PREFIX: 'prod', RATE_LIMIT_PARTNER_PER_MIN: '10000000',
      });
    });

    it('keeps a provided SECRET_KEY', async function () {
      const key = 'k'.repeat(48);
      const secret = one<ISecret>(await render('--set', `secrets.secretKey=${key}`), 'Secret');
      assert.equal(decode(secret.data?.SECRET_KEY), key);
    });

    it('reads an existing Secret instead of rendering one', async function () {
      const objects = await render('--set', 'secrets.existingSecret=managed-elsewhere');
      assert.deepEqual(find(objects, 'Secret'), []);
      const names = containerOf(objects, 'api').env?.map((variable) => variable.valueFrom?.secretKeyRef?.name);
      assert.deepEqual(names, ['managed-elsewhere', 'managed-elsewhere']);
    });
  });

  describe('invalid values', function () {
    async function renderWith(name: string, values: string): Promise<HelmResult> {
      return helm('template', RELEASE, CHART, '--values', await valuesFile(name, values));
    }

    it('rejects a replica count that is not a number (schema)', async function () {
      const result = await renderWith('replicas.yaml', 'api:\n  replicaCount: "many"\n');
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /values don't meet the specifications[\s\S]*\/api\/replicaCount/);
    });

    it('rejects unknown keys, so a typo is not silently ignored (schema)', async function () {
      const result = await renderWith('typo.yaml', 'autoscaling:\n  enable: true\n');
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /additional properties 'enable' not allowed/);
    });

    it('requires MONGODB_URI unless an existing Secret provides it', async function () {
      const result = await renderWith('no-mongodb.yaml', 'secrets:\n  mongodbUri: ""\n');
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /secrets\.mongodbUri is required/);
    });

    it('refuses a shutdown budget the kubelet would cut short', async function () {
      const result = await renderWith('shutdown.yaml', 'config:\n  shutdownTimeoutMs: 30000\n');
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /shutdownTimeoutMs must be shorter than terminationGracePeriodSeconds/);
    });
  });
});
