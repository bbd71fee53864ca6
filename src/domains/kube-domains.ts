// The api's side of the operator contract: it creates and deletes `Domain` objects; the operator does the rest
// (DNS verification, certificate, route) and reports back over NATS. Nothing else in the api talks to Kubernetes.
import { ApiException, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { UpstreamError } from '../platform/errors.ts';
import type { Config } from '../config/config.ts';

export const DOMAIN_GROUP = 'linkplane.io';
export const DOMAIN_VERSION = 'v1alpha1';
export const DOMAIN_PLURAL = 'domains';
export const DOMAIN_ID_LABEL = 'linkplane.io/domain-id';

export interface DomainObjectSpec {
  hostname: string;
  /** The workspace id. */
  tenant: string;
  domainId: string;
  verificationToken: string;
  /** Omitted: the operator's default issuer. */
  issuerRef?: { name: string; kind: string };
}

export interface DomainObject {
  apiVersion: string;
  kind: 'Domain';
  metadata: { name: string; namespace: string; labels: Record<string, string>; uid?: string };
  spec: DomainObjectSpec;
}

/** The cluster refused or could not be reached; the request may be retried (answered `internal`). */
export class ClusterError extends UpstreamError {
  readonly operation: string;
  constructor(operation: string, cause: unknown) {
    super('kubernetes', `The Kubernetes API failed to ${operation} the Domain object; retry later.`, cause);
    this.operation = operation;
  }
}

/** Another `Domain` object already holds this hostname in the cluster. */
export class DomainObjectExistsError extends Error {
  readonly hostname: string;
  constructor(hostname: string, cause: unknown) {
    super(`A Domain object named "${hostname}" already exists`, { cause });
    this.name = 'DomainObjectExistsError';
    this.hostname = hostname;
  }
}

const statusOf = (error: unknown): number | undefined => (error instanceof ApiException ? error.code : undefined);

/** `Domain` objects in one namespace, named after their hostname (punycode is a valid object name). */
export class KubeDomains {
  private readonly api: CustomObjectsApi;
  readonly namespace: string;

  constructor(api: CustomObjectsApi, namespace: string) {
    this.api = api;
    this.namespace = namespace;
  }

  /** Null when no cluster is configured (all-in-one, development): connecting a domain then answers 503. */
  static fromConfig(domains: Config['domains']): KubeDomains | null {
    if (domains.kube === 'off') return null;
    const kc = new KubeConfig();
    if (domains.kube === 'in-cluster') kc.loadFromCluster();
    else if (domains.kubeconfig !== null) kc.loadFromFile(domains.kubeconfig);
    else kc.loadFromDefault();
    return new KubeDomains(kc.makeApiClient(CustomObjectsApi), domains.namespace);
  }

  manifest(spec: DomainObjectSpec): DomainObject {
    return {
      apiVersion: `${DOMAIN_GROUP}/${DOMAIN_VERSION}`,
      kind: 'Domain',
      metadata: { name: spec.hostname, namespace: this.namespace, labels: { [DOMAIN_ID_LABEL]: spec.domainId } },
      spec,
    };
  }

  /** Throws DomainObjectExistsError when the name is taken, ClusterError on any other failure. */
  async create(spec: DomainObjectSpec): Promise<void> {
    try {
      await this.api.createNamespacedCustomObject({ ...this.coordinates(), body: this.manifest(spec) });
    } catch (error) {
      if (statusOf(error) === 409) throw new DomainObjectExistsError(spec.hostname, error);
      throw new ClusterError('create', error);
    }
  }

  async get(hostname: string): Promise<DomainObject | null> {
    try {
      return (await this.api.getNamespacedCustomObject({ ...this.coordinates(), name: hostname })) as DomainObject;
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw new ClusterError('read', error);
    }
  }

  /**
   * Deletes the object for this hostname if it belongs to `domainId` (an object of a later connection of the same
   * hostname is left alone). False when there was none. The operator's finalizer removes certificate and route.
   */
  async delete(hostname: string, domainId: string): Promise<boolean> {
    const existing = await this.get(hostname);
    if (!existing || existing.spec?.domainId !== domainId) return false;
    try {
      await this.api.deleteNamespacedCustomObject({
        ...this.coordinates(),
        name: hostname,
        // Only this very object: a concurrent re-creation under the same name has another uid.
        ...(existing.metadata.uid ? { body: { preconditions: { uid: existing.metadata.uid } } } : {}),
      });
      return true;
    } catch (error) {
      if (statusOf(error) === 404) return false;
      throw new ClusterError('delete', error);
    }
  }

  private coordinates() {
    return { group: DOMAIN_GROUP, version: DOMAIN_VERSION, namespace: this.namespace, plural: DOMAIN_PLURAL };
  }
}
