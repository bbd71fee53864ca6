// The operator's Kubernetes client adapter: the few REST calls it makes (get, list, create, replace, merge patch,
// delete), on node:http(s) with the credentials @kubernetes/client-node's KubeConfig resolves, plus the client's
// own informers for watching. Every write names this replica (fieldManager, User-Agent), and every write is
// refused once this replica stops being the leader, so a replica that lost its Lease cannot act.
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { makeInformer, type KubeConfig, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';

export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  constructor(method: string, path: string, status: number, reason: string, message: string) {
    super(`${method} ${path}: ${status} ${reason}: ${message}`);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = reason;
  }
}

/** A write attempted by a replica that is not (or no longer) the leader. */
export class NotLeaderError extends Error {
  constructor(method: string, path: string) {
    super(`not the leader: refusing ${method} ${path}`);
    this.name = 'NotLeaderError';
  }
}

/** A client-node informer typed with the operator's own object shapes. */
export interface Watched<T> extends ObjectCache<T> {
  on(verb: 'add' | 'update' | 'delete', callback: (object: T) => void): void;
  on(verb: 'error', callback: (error?: unknown) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export const isNotFound = (error: unknown): boolean => error instanceof KubeApiError && error.status === 404;
export const isConflict = (error: unknown): boolean => error instanceof KubeApiError && error.status === 409;

export interface Resource {
  group: string;
  version: string;
  plural: string;
}

export const RESOURCES = {
  domains: { group: 'linkplane.io', version: 'v1alpha1', plural: 'domains' },
  certificates: { group: 'cert-manager.io', version: 'v1', plural: 'certificates' },
  ingresses: { group: 'networking.k8s.io', version: 'v1', plural: 'ingresses' },
  leases: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' },
  events: { group: '', version: 'v1', plural: 'events' },
} as const satisfies Record<string, Resource>;

export function collectionPath(resource: Resource, namespace: string): string {
  const base = resource.group === '' ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  return `${base}/namespaces/${encodeURIComponent(namespace)}/${resource.plural}`;
}

export interface KubeClientOptions {
  /** Who writes: sent as fieldManager and in the User-Agent. */
  identity: string;
  /** Asked before every write; false refuses it (leader election). Reads are always allowed. */
  mayWrite?: () => boolean;
  timeoutMs?: number;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export class KubeClient {
  readonly config: KubeConfig;
  private readonly identity: string;
  private readonly mayWrite: () => boolean;
  private readonly timeoutMs: number;

  constructor(config: KubeConfig, options: KubeClientOptions) {
    this.config = config;
    this.identity = options.identity;
    this.mayWrite = options.mayWrite ?? (() => true);
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** The same client with another write guard (the controller's writes need the lease; the elector's own do not). */
  withWriteGuard(mayWrite: () => boolean): KubeClient {
    return new KubeClient(this.config, { identity: this.identity, mayWrite, timeoutMs: this.timeoutMs });
  }

  async get<T>(resource: Resource, namespace: string, name: string): Promise<T | null> {
    try {
      return await this.call<T>('GET', `${collectionPath(resource, namespace)}/${encodeURIComponent(name)}`);
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  list<T extends KubernetesObject>(resource: Resource, namespace: string, labelSelector?: string): Promise<{ metadata?: { resourceVersion?: string }; items: T[] }> {
    const query = labelSelector === undefined ? '' : `?labelSelector=${encodeURIComponent(labelSelector)}`;
    return this.call('GET', `${collectionPath(resource, namespace)}${query}`);
  }

  create<T>(resource: Resource, namespace: string, body: unknown): Promise<T> {
    return this.call('POST', collectionPath(resource, namespace), body);
  }

  replace<T>(resource: Resource, namespace: string, name: string, body: unknown): Promise<T> {
    return this.call('PUT', `${collectionPath(resource, namespace)}/${encodeURIComponent(name)}`, body);
  }

  /** RFC 7386 merge patch; `subresource: 'status'` writes the status only. */
  mergePatch<T>(resource: Resource, namespace: string, name: string, patch: unknown, subresource?: 'status'): Promise<T> {
    const path = `${collectionPath(resource, namespace)}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
    return this.call('PATCH', path, patch, 'application/merge-patch+json');
  }

  /** Deletes; an object already gone is not an error (false). */
  async delete(resource: Resource, namespace: string, name: string): Promise<boolean> {
    try {
      await this.call('DELETE', `${collectionPath(resource, namespace)}/${encodeURIComponent(name)}`);
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /**
   * A client-node informer over one namespaced collection (list, then watch; re-lists after a 410). The objects are
   * the JSON as sent (timestamps stay strings), hence the operator's own types rather than client-node's models.
   */
  informer<T extends { metadata: { name: string } }>(resource: Resource, namespace: string, labelSelector?: string): Watched<T> {
    const informer = makeInformer<KubernetesObject>(
      this.config,
      collectionPath(resource, namespace),
      async () => {
        const list = await this.list<KubernetesObject>(resource, namespace, labelSelector);
        return { apiVersion: 'v1', kind: 'List', metadata: list.metadata ?? {}, items: list.items };
      },
      labelSelector,
    );
    return informer as unknown as Watched<T>;
  }

  private async call<T>(method: Method, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const write = method !== 'GET';
    if (write && !this.mayWrite()) throw new NotLeaderError(method, path);
    const cluster = this.config.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig names no current cluster');
    const url = new URL(cluster.server.replace(/\/+$/, '') + path);
    // fieldManager records who wrote (managedFields); DELETE takes no fieldManager.
    if (write && method !== 'DELETE') url.searchParams.set('fieldManager', this.identity);
    const options: RequestOptions & { headers: Record<string, string> } = {
      method,
      headers: { Accept: 'application/json', 'User-Agent': `linkplane-operator/${this.identity}` },
      timeout: this.timeoutMs,
    };
    await this.config.applyToHTTPSOptions(options);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) options.headers['Content-Type'] = contentType;
    const plain = url.protocol === 'http:';
    // The options carry an https.Agent built from the kubeconfig's TLS settings; plain http must not get it.
    if (plain) delete options.agent;
    const send = plain ? httpRequest : httpsRequest;
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = send(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${this.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
    const parsed = parseJson(text);
    if (status >= 200 && status < 300) return parsed as T;
    const failure = (parsed ?? {}) as { reason?: string; message?: string };
    throw new KubeApiError(method, path, status, failure.reason ?? 'Unknown', failure.message ?? text.slice(0, 200));
  }
}

function parseJson(text: string): unknown {
  if (text === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
