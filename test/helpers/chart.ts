// Rendering and checking the Helm chart the way a cluster would see it: helm (from the npm package, see
// scripts/helm.ts) renders charts/linkplane, and every rendered object must pass the schema of its kind:
// Kubernetes (kubernetes-models), cert-manager and Prometheus Operator (@kubernetes-models/*).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { loadAll } from 'js-yaml';
import type { Model } from '@kubernetes-models/base';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { ClusterIssuer } from '@kubernetes-models/cert-manager/cert-manager.io/v1/ClusterIssuer';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { helmPath } from '../../scripts/helm.ts';

export const CHART = path.resolve(import.meta.dirname, '../../charts/linkplane');
export const RELEASE = 'lp';
export const NAMESPACE = 'linkplane-test';
/** What `--api-versions` says of a cluster running the Prometheus Operator. */
export const PROMETHEUS_OPERATOR = ['--api-versions', 'monitoring.coreos.com/v1/ServiceMonitor', '--api-versions', 'monitoring.coreos.com/v1/PrometheusRule'];

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: unknown;
}

// Every kind the chart may render needs a schema check here, so a new template cannot skip validation.
const MODELS: Record<string, new (data: never) => Model<unknown>> = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Pod': Pod,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'cert-manager.io/v1/ClusterIssuer': ClusterIssuer,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
};

export function validate(object: K8sObject): void {
  const type = `${object.apiVersion}/${object.kind}`;
  const Model = MODELS[type];
  if (Model === undefined) assert.fail(`no schema check for ${type} ${object.metadata.name}`);
  new Model(object as never).validate();
}

export interface HelmResult { code: number; stdout: string; stderr: string }

export async function helm(...args: string[]): Promise<HelmResult> {
  const binary = await helmPath();
  return new Promise((resolve) => {
    execFile(binary, args, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The SECRET_KEY renders get: without a cluster the chart refuses to invent one (it would change on every render).
 * Arguments given to render() come later and win, e.g. `--set secrets.secretKey=` to see the refusal.
 */
export const TEST_SECRET_KEY = 'test-secret-key-of-the-chart-tests-0123456789';
/** The arguments that give a render TEST_SECRET_KEY, for tests that call helm('template', ...) themselves. */
export const WITH_SECRET_KEY = ['--set', `secrets.secretKey=${TEST_SECRET_KEY}`];

export async function render(...args: string[]): Promise<K8sObject[]> {
  const result = await helm('template', RELEASE, CHART, '--namespace', NAMESPACE, ...WITH_SECRET_KEY, ...args);
  assert.equal(result.code, 0, result.stderr);
  // Templates that render nothing leave empty documents behind.
  return loadAll(result.stdout).filter((document): document is K8sObject => document !== null);
}

// Objects of a kind (and of one process), typed with the kubernetes-models interface the schema check used.
export function find<T>(objects: K8sObject[], kind: string, component?: string): T[] {
  return objects.filter((o) => o.kind === kind &&
    (component === undefined || o.metadata.labels?.['app.kubernetes.io/component'] === component)) as T[];
}

export function one<T>(objects: K8sObject[], kind: string, component?: string): T {
  const found = find<T>(objects, kind, component);
  assert.equal(found.length, 1, `exactly one ${kind} ${component ?? ''}`);
  return found[0]!;
}

/** The ConfigMap of the processes' environment (the others hold dashboards). */
export function configOf(objects: K8sObject[]): IConfigMap {
  const found = objects.filter((o) => o.kind === 'ConfigMap' && o.metadata.name === `${RELEASE}-linkplane`) as IConfigMap[];
  assert.equal(found.length, 1, 'exactly one configuration ConfigMap');
  return found[0]!;
}
