// An in-process Kubernetes API server for tests (DESIGN.md "Testing infrastructure"): plain node:http, an in-memory
// store, and the list/watch/get/create/replace/patch/delete/status protocol for the kinds the operator and the
// Domains API touch, so the real @kubernetes/client-node informers and typed APIs can be driven against it.
//
// How to call it from client-node v2 (checked by test/integration/kube-apiserver.test.ts):
//   const kc = server.kubeConfig();                       // or KUBECONFIG=server.kubeconfigFile() for a child
//   const custom = kc.makeApiClient(CustomObjectsApi);
//   // Patches default to JSON Patch (an array of ops). For a merge patch, set the content type per call:
//   await custom.patchNamespacedCustomObjectStatus(
//     { group: 'linkplane.io', version: 'v1alpha1', namespace, plural: 'domains', name, body: { status: { phase } } },
//     setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
//   );
//   // An informer over domains (the list function must return the list body):
//   const path = `/apis/linkplane.io/v1alpha1/namespaces/${namespace}/domains`;
//   const informer = makeInformer(kc, path, () => custom.listNamespacedCustomObject({ group, version, namespace, plural }));
//   // Errors are ApiException with `.code` (404, 409, ...) and `.body` (the Status object as a JSON string).
//
// Kubernetes semantics kept: a global increasing resourceVersion (string); metadata.generation starts at 1 and grows
// only when something outside metadata/status changes; writes that change nothing keep the resourceVersion and
// emit no event; status is dropped on create and ignored on the main resource for kinds with a status subresource;
// delete with finalizers sets deletionTimestamp and the object goes when its finalizers are emptied; deleting an
// object deletes the objects whose ownerReferences name only owners that are gone (background propagation).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';

export type KubeKind = 'Domain' | 'Certificate' | 'Ingress' | 'Lease' | 'Event' | 'events.k8s.io/Event' | 'Secret'
  | 'ConfigMap' | 'Service' | 'ServiceAccount' | 'Pod' | 'Deployment' | 'PodDisruptionBudget';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface KubeMetadata {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: KubeMetadata;
  [key: string]: unknown;
}

export interface KubeRequestRecord {
  method: string;
  /** The URL path without the query, e.g. `/apis/linkplane.io/v1alpha1/namespaces/ns/domains/d1/status`. */
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  body: unknown;
}

export interface FailureRule {
  method?: string;
  path?: string | RegExp;
  code: number;
  /** How many matching requests fail; default 1. */
  times?: number;
}

export interface KubeApiServer {
  readonly url: string;
  readonly token: string;
  /** Every request received, in order (watches included). Clear with `requests.length = 0`. */
  readonly requests: KubeRequestRecord[];
  kubeConfig(): KubeConfig;
  /** A kubeconfig file (JSON, which is YAML) for child processes: `KUBECONFIG=<this>`. */
  kubeconfigFile(): string;
  get<T extends KubeObject = KubeObject>(kind: KubeKind, namespace: string, name: string): T | undefined;
  list<T extends KubeObject = KubeObject>(kind: KubeKind, namespace?: string): T[];
  /** Every Event, core v1 and events.k8s.io/v1, in creation order. */
  events<T extends KubeObject = KubeObject>(): T[];
  create<T extends KubeObject = KubeObject>(kind: KubeKind, object: T): T;
  /** Replaces the object (as PUT): status is kept for kinds with a status subresource. */
  update<T extends KubeObject = KubeObject>(kind: KubeKind, object: T): T;
  /** Merge-patches `status` only (as PATCH .../status), e.g. to play cert-manager on a Certificate. */
  patchStatus<T extends KubeObject = KubeObject>(kind: KubeKind, namespace: string, name: string, status: Record<string, unknown>): T;
  /** Deletes as the API does (finalizers, owner garbage collection); false when there was nothing to delete. */
  delete(kind: KubeKind, namespace: string, name: string): boolean;
  /** Ends the open watches (all, or of one kind): the client re-watches from its last resourceVersion. */
  closeWatches(kind?: KubeKind): number;
  /** Forgets the watch history and sends `ERROR 410 Gone` on the open watches, then ends them: the client re-lists. */
  expireWatches(kind?: KubeKind): number;
  /** How many watches are open (all, or of one kind). */
  watchCount(kind?: KubeKind): number;
  /** Makes the next matching requests fail with a Status of that code. */
  failRequests(rule: FailureRule): void;
  readonly resourceVersion: string;
  stop(): Promise<void>;
}

interface ResourceType {
  kind: string;
  group: string;
  version: string;
  plural: string;
  singular: string;
  statusSubresource: boolean;
}

const RESOURCES: Record<KubeKind, ResourceType> = {
  Domain: { kind: 'Domain', group: 'linkplane.io', version: 'v1alpha1', plural: 'domains', singular: 'domain', statusSubresource: true },
  Certificate: { kind: 'Certificate', group: 'cert-manager.io', version: 'v1', plural: 'certificates', singular: 'certificate', statusSubresource: true },
  Ingress: { kind: 'Ingress', group: 'networking.k8s.io', version: 'v1', plural: 'ingresses', singular: 'ingress', statusSubresource: true },
  Lease: { kind: 'Lease', group: 'coordination.k8s.io', version: 'v1', plural: 'leases', singular: 'lease', statusSubresource: false },
  Event: { kind: 'Event', group: '', version: 'v1', plural: 'events', singular: 'event', statusSubresource: false },
  'events.k8s.io/Event': { kind: 'Event', group: 'events.k8s.io', version: 'v1', plural: 'events', singular: 'event', statusSubresource: false },
  Secret: { kind: 'Secret', group: '', version: 'v1', plural: 'secrets', singular: 'secret', statusSubresource: false },
  // What `helm install` of the chart creates (with domains off), and the pods of its `helm test` hooks.
  ConfigMap: { kind: 'ConfigMap', group: '', version: 'v1', plural: 'configmaps', singular: 'configmap', statusSubresource: false },
  Service: { kind: 'Service', group: '', version: 'v1', plural: 'services', singular: 'service', statusSubresource: true },
  ServiceAccount: { kind: 'ServiceAccount', group: '', version: 'v1', plural: 'serviceaccounts', singular: 'serviceaccount', statusSubresource: false },
  Pod: { kind: 'Pod', group: '', version: 'v1', plural: 'pods', singular: 'pod', statusSubresource: true },
  Deployment: { kind: 'Deployment', group: 'apps', version: 'v1', plural: 'deployments', singular: 'deployment', statusSubresource: true },
  PodDisruptionBudget: { kind: 'PodDisruptionBudget', group: 'policy', version: 'v1', plural: 'poddisruptionbudgets', singular: 'poddisruptionbudget', statusSubresource: true },
};
const TYPES = Object.values(RESOURCES);

const apiVersionOf = (t: ResourceType): string => (t.group ? `${t.group}/${t.version}` : t.version);
const qualifiedName = (t: ResourceType): string => (t.group ? `${t.plural}.${t.group}` : t.plural);

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface HistoryEntry {
  rv: number;
  type: ResourceType;
  event: WatchEventType;
  object: KubeObject;
}

interface Watcher {
  type: ResourceType;
  namespace: string | undefined;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  res: ServerResponse;
}

/** A Kubernetes API error, answered as a `kind: Status` object. */
class StatusError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: number, reason: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): KubeObject {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, details: this.details, code: this.code };
  }
}

const REASONS: Record<number, string> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 409: 'Conflict',
  410: 'Expired', 415: 'UnsupportedMediaType', 422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable',
};

const notFound = (t: ResourceType, name: string): StatusError =>
  new StatusError(404, 'NotFound', `${qualifiedName(t)} "${name}" not found`, { name, group: t.group, kind: t.plural });

const conflict = (t: ResourceType, name: string): StatusError =>
  new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedName(t)} "${name}": the object has been modified; please apply your changes to the latest version and try again`, { name, group: t.group, kind: t.plural });

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** RFC 6902 JSON patch (add, remove, replace, move, copy, test). */
function jsonPatch(document: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw new StatusError(400, 'BadRequest', 'a JSON patch must be an array of operations');
  let doc = structuredClone(document);
  const parse = (pointer: unknown): string[] => {
    if (typeof pointer !== 'string' || (pointer !== '' && !pointer.startsWith('/'))) throw new StatusError(422, 'Invalid', `invalid JSON pointer ${String(pointer)}`);
    return pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  };
  const parentOf = (path: string[]): { parent: unknown; key: string } => {
    let node: unknown = doc;
    for (const segment of path.slice(0, -1)) {
      node = Array.isArray(node) ? node[Number(segment)] : isPlainObject(node) ? node[segment] : undefined;
      if (node === undefined) throw new StatusError(422, 'Invalid', `path /${path.join('/')} does not exist`);
    }
    return { parent: node, key: path[path.length - 1] ?? '' };
  };
  const read = (path: string[]): unknown => {
    if (path.length === 0) return doc;
    const { parent, key } = parentOf(path);
    const value = Array.isArray(parent) ? parent[Number(key)] : isPlainObject(parent) ? parent[key] : undefined;
    if (value === undefined) throw new StatusError(422, 'Invalid', `path /${path.join('/')} does not exist`);
    return value;
  };
  const remove = (path: string[]): unknown => {
    const value = read(path);
    const { parent, key } = parentOf(path);
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete (parent as Record<string, unknown>)[key];
    return value;
  };
  const add = (path: string[], value: unknown): void => {
    if (path.length === 0) {
      doc = value;
      return;
    }
    const { parent, key } = parentOf(path);
    if (Array.isArray(parent)) parent.splice(key === '-' ? parent.length : Number(key), 0, value);
    else if (isPlainObject(parent)) parent[key] = value;
    else throw new StatusError(422, 'Invalid', `path /${path.join('/')} has no parent object`);
  };
  for (const op of operations as Record<string, unknown>[]) {
    const path = parse(op.path);
    switch (op.op) {
      case 'add': add(path, structuredClone(op.value)); break;
      case 'remove': remove(path); break;
      case 'replace': remove(path); add(path, structuredClone(op.value)); break;
      case 'move': add(path, remove(parse(op.from))); break;
      case 'copy': add(path, structuredClone(read(parse(op.from)))); break;
      case 'test':
        if (!isDeepStrictEqual(read(path), op.value)) throw new StatusError(422, 'Invalid', `test operation failed at ${String(op.path)}`);
        break;
      default: throw new StatusError(422, 'Invalid', `unknown JSON patch operation ${String(op.op)}`);
    }
  }
  return doc;
}

function splitSelector(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) terms.push(current.trim());
  return terms.filter(Boolean);
}

function matchesLabels(labels: Record<string, string> | undefined, selector: string | undefined): boolean {
  if (!selector) return true;
  const has = (k: string): boolean => labels !== undefined && Object.hasOwn(labels, k);
  return splitSelector(selector).every((term) => {
    const set = /^(\S+)\s+(in|notin)\s+\((.*)\)$/.exec(term);
    if (set) {
      const values = set[3]!.split(',').map((v) => v.trim());
      const inSet = has(set[1]!) && values.includes(labels![set[1]!]!);
      return set[2] === 'in' ? inSet : !inSet;
    }
    const cmp = /^([^!=\s]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (cmp) {
      const equal = has(cmp[1]!) && labels![cmp[1]!] === cmp[3]!.trim();
      return cmp[2] === '!=' ? !equal : equal;
    }
    return term.startsWith('!') ? !has(term.slice(1).trim()) : has(term);
  });
}

function matchesFields(object: KubeObject, selector: string | undefined): boolean {
  if (!selector) return true;
  return splitSelector(selector).every((term) => {
    const cmp = /^([^!=\s]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!cmp) throw new StatusError(400, 'BadRequest', `invalid field selector term ${term}`);
    let node: unknown = object;
    for (const part of cmp[1]!.split('.')) node = isPlainObject(node) ? node[part] : undefined;
    const value = typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean' ? String(node) : '';
    const equal = value === cmp[3]!.trim();
    return cmp[2] === '!=' ? !equal : equal;
  });
}

const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Fields of one protobuf message: field number to its values (varints as numbers, length-delimited as bytes). */
function protobufFields(buf: Buffer): Map<number, Array<number | Buffer>> {
  const fields = new Map<number, Array<number | Buffer>>();
  let offset = 0;
  const varint = (): number => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = buf[offset++];
      if (byte === undefined) throw new Error('truncated varint');
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
      shift += 7;
    }
  };
  while (offset < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    let value: number | Buffer;
    if (wire === 0) value = varint();
    else if (wire === 2) {
      const length = varint();
      value = buf.subarray(offset, offset + length);
      offset += length;
    } else if (wire === 1) {
      value = buf.subarray(offset, offset + 8);
      offset += 8;
    } else if (wire === 5) {
      value = buf.subarray(offset, offset + 4);
      offset += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = fields.get(field);
    if (list) list.push(value);
    else fields.set(field, [value]);
  }
  return fields;
}

/**
 * A v1 Secret in Kubernetes' protobuf envelope ("k8s\0", then runtime.Unknown {typeMeta, raw}) as the JSON object
 * the store keeps: name, generateName, namespace, resourceVersion, labels, annotations, data, type, immutable.
 */
function decodeSecretProtobuf(body: Buffer): KubeObject {
  if (body.subarray(0, 4).toString('latin1') !== 'k8s\0') throw new Error('no k8s protobuf envelope');
  const unknown = protobufFields(body.subarray(4));
  const typeMeta = protobufFields((unknown.get(1)?.[0] as Buffer | undefined) ?? Buffer.alloc(0));
  const text = (fields: Map<number, Array<number | Buffer>>, n: number): string | undefined => {
    const value = fields.get(n)?.[0];
    return Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
  };
  if (text(typeMeta, 2) !== 'Secret') throw new Error(`kind ${text(typeMeta, 2) ?? '(none)'}`);
  const secret = protobufFields((unknown.get(2)?.[0] as Buffer | undefined) ?? Buffer.alloc(0));
  const map = (entries: Array<number | Buffer> | undefined, encode: (value: Buffer) => string): Record<string, string> | undefined => {
    if (!entries) return undefined;
    return Object.fromEntries(entries.map((entry) => {
      const kv = protobufFields(entry as Buffer);
      return [text(kv, 1) ?? '', encode((kv.get(2)?.[0] as Buffer | undefined) ?? Buffer.alloc(0))];
    }));
  };
  const meta = protobufFields((secret.get(1)?.[0] as Buffer | undefined) ?? Buffer.alloc(0));
  const metadata: KubeMetadata = {};
  for (const [n, key] of [[1, 'name'], [2, 'generateName'], [3, 'namespace'], [6, 'resourceVersion']] as const) {
    const value = text(meta, n);
    if (value) metadata[key] = value;
  }
  const labels = map(meta.get(11), (v) => v.toString('utf8'));
  const annotations = map(meta.get(12), (v) => v.toString('utf8'));
  if (labels) metadata.labels = labels;
  if (annotations) metadata.annotations = annotations;
  const object: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata };
  const data = map(secret.get(2), (v) => v.toString('base64'));
  if (data) object.data = data;
  const type = text(secret, 3);
  if (type) object.type = type;
  if (secret.get(5)?.[0] === 1) object.immutable = true;
  return object;
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', reject);
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (!text) return resolve(undefined);
      // Protobuf bodies: helm's release storage writes its Secrets with client-go's typed client, which speaks
      // protobuf to built-in kinds. Secrets are decoded (decodeSecretProtobuf); anything else is refused.
      if (req.headers['content-type']?.includes('protobuf')) {
        try {
          return resolve(decodeSecretProtobuf(Buffer.concat(chunks)));
        } catch (error) {
          return reject(new StatusError(415, 'UnsupportedMediaType', `protobuf bodies are understood for Secrets only: ${(error as Error).message}`));
        }
      }
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new StatusError(400, 'BadRequest', 'the request body is not valid JSON'));
      }
    });
  });
}

/** The object without metadata and status: what `generation` tracks. */
const specPart = (o: KubeObject): KubeObject => {
  const { metadata: _m, status: _s, ...rest } = o;
  return rest;
};

interface ParsedPath {
  type: ResourceType;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

export interface KubeApiServerOptions {
  /**
   * Also answer requests that carry no credentials. client-go (helm) sends no bearer token over plain http, so a
   * helm pointed at this server with `--kube-apiserver <url>` needs it; a wrong token is still refused.
   */
  anonymous?: boolean;
}

export async function startKubeApiServer(options: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  const token = randomBytes(16).toString('hex');
  const store = new Map<ResourceType, Map<string, KubeObject>>(TYPES.map((t) => [t, new Map()]));
  const history: HistoryEntry[] = [];
  const watchers = new Set<Watcher>();
  const requests: KubeRequestRecord[] = [];
  const failures: FailureRule[] = [];
  let revision = 1;
  let compactedBelow = 0;
  let tempDir: string | undefined;

  const keyOf = (namespace: string | undefined, name: string): string => `${namespace ?? ''}/${name}`;
  const bucket = (t: ResourceType): Map<string, KubeObject> => store.get(t)!;
  const objectsOf = (t: ResourceType, namespace?: string): KubeObject[] =>
    [...bucket(t).values()].filter((o) => namespace === undefined || o.metadata?.namespace === namespace);

  const matches = (w: Pick<Watcher, 'namespace' | 'labelSelector' | 'fieldSelector'>, o: KubeObject): boolean =>
    (w.namespace === undefined || o.metadata?.namespace === w.namespace) &&
    matchesLabels(o.metadata?.labels, w.labelSelector) &&
    matchesFields(o, w.fieldSelector);

  const send = (w: Watcher, type: string, object: KubeObject): void => {
    // A client that went away between its last event and the 'close' that unregisters it gets nothing more.
    if (w.res.writableEnded || w.res.destroyed) return;
    w.res.write(`${JSON.stringify({ type, object })}\n`);
  };

  const emit = (t: ResourceType, event: WatchEventType, object: KubeObject): void => {
    const entry = { rv: Number(object.metadata!.resourceVersion), type: t, event, object: structuredClone(object) };
    history.push(entry);
    for (const w of watchers) if (w.type === t && matches(w, object)) send(w, event, object);
  };

  const findByUid = (uid: string): KubeObject | undefined => {
    for (const objects of store.values()) for (const o of objects.values()) if (o.metadata?.uid === uid) return o;
    return undefined;
  };

  /** Background garbage collection: dependents whose owners are all gone are deleted. */
  const collectDependentsOf = (ownerUid: string): void => {
    for (const t of TYPES) {
      for (const o of [...bucket(t).values()]) {
        const refs = o.metadata?.ownerReferences ?? [];
        if (!refs.some((r) => r.uid === ownerUid)) continue;
        if (refs.every((r) => r.uid === ownerUid || findByUid(r.uid) === undefined)) deleteObject(t, o.metadata!.namespace, o.metadata!.name!);
      }
    }
  };

  const remove = (t: ResourceType, object: KubeObject): KubeObject => {
    bucket(t).delete(keyOf(object.metadata!.namespace, object.metadata!.name!));
    const gone = structuredClone(object);
    gone.metadata!.resourceVersion = String(++revision);
    emit(t, 'DELETED', gone);
    collectDependentsOf(gone.metadata!.uid!);
    return gone;
  };

  const current = (t: ResourceType, namespace: string | undefined, name: string): KubeObject => {
    const o = bucket(t).get(keyOf(namespace, name));
    if (!o) throw notFound(t, name);
    return o;
  };

  const createObject = (t: ResourceType, namespace: string | undefined, input: unknown): KubeObject => {
    if (!isPlainObject(input)) throw new StatusError(400, 'BadRequest', 'the body must be an object');
    const object = structuredClone(input) as KubeObject;
    const metadata: KubeMetadata = isPlainObject(object.metadata) ? object.metadata : {};
    if (namespace !== undefined && metadata.namespace !== undefined && metadata.namespace !== namespace) {
      throw new StatusError(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
    }
    let name = metadata.name;
    if (!name && metadata.generateName) name = `${metadata.generateName}${randomBytes(4).toString('hex').slice(0, 5)}`;
    if (!name) throw new StatusError(422, 'Invalid', 'metadata.name: Required value: name or generateName is required', { group: t.group, kind: t.kind });
    if (bucket(t).has(keyOf(namespace, name))) {
      throw new StatusError(409, 'AlreadyExists', `${qualifiedName(t)} "${name}" already exists`, { name, group: t.group, kind: t.plural });
    }
    object.apiVersion = apiVersionOf(t);
    object.kind = t.kind;
    delete metadata.deletionTimestamp;
    delete metadata.deletionGracePeriodSeconds;
    object.metadata = { ...metadata, name, namespace, uid: randomUUID(), resourceVersion: String(++revision), generation: 1, creationTimestamp: now() };
    if (t.statusSubresource) delete object.status;
    bucket(t).set(keyOf(namespace, name), object);
    emit(t, 'ADDED', object);
    return structuredClone(object);
  };

  /** Stores `next` as the new state of `old` (the caller has applied the write's rules to `next`). */
  const commitUpdate = (t: ResourceType, old: KubeObject, next: KubeObject): KubeObject => {
    const oldMeta = old.metadata!;
    if (!isPlainObject(next.metadata)) next.metadata = {};
    const meta = next.metadata;
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '' && meta.resourceVersion !== oldMeta.resourceVersion) {
      throw conflict(t, oldMeta.name!);
    }
    if (meta.name !== undefined && meta.name !== oldMeta.name) throw new StatusError(400, 'BadRequest', 'the name of the object does not match the name on the URL');
    next.apiVersion = old.apiVersion;
    next.kind = old.kind;
    next.metadata = {
      ...meta,
      name: oldMeta.name,
      namespace: oldMeta.namespace,
      uid: oldMeta.uid,
      creationTimestamp: oldMeta.creationTimestamp,
      resourceVersion: oldMeta.resourceVersion,
      generation: isDeepStrictEqual(specPart(old), specPart(next)) ? oldMeta.generation : (oldMeta.generation ?? 1) + 1,
    };
    delete next.metadata.generateName;
    if (oldMeta.generateName !== undefined) next.metadata.generateName = oldMeta.generateName;
    if (oldMeta.deletionTimestamp !== undefined) {
      next.metadata.deletionTimestamp = oldMeta.deletionTimestamp;
      next.metadata.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    } else {
      delete next.metadata.deletionTimestamp;
      delete next.metadata.deletionGracePeriodSeconds;
    }
    if (isDeepStrictEqual(old, next)) return structuredClone(old);
    if (next.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0) return remove(t, next);
    next.metadata.resourceVersion = String(++revision);
    bucket(t).set(keyOf(oldMeta.namespace, oldMeta.name!), next);
    emit(t, 'MODIFIED', next);
    return structuredClone(next);
  };

  const replaceObject = (t: ResourceType, namespace: string | undefined, name: string, input: unknown): KubeObject => {
    const old = current(t, namespace, name);
    if (!isPlainObject(input)) throw new StatusError(400, 'BadRequest', 'the body must be an object');
    const next = structuredClone(input) as KubeObject;
    if (t.statusSubresource) {
      if (old.status === undefined) delete next.status;
      else next.status = structuredClone(old.status);
    }
    return commitUpdate(t, old, next);
  };

  const applyPatch = (old: KubeObject, contentType: string | undefined, patch: unknown): KubeObject => {
    const type = (contentType ?? '').split(';')[0]!.trim();
    let result: unknown;
    if (type === 'application/json-patch+json') result = jsonPatch(old, patch);
    else if (type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json') result = mergePatch(old, patch);
    else throw new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json (got ${type})`);
    if (!isPlainObject(result)) throw new StatusError(422, 'Invalid', 'the patch did not produce an object');
    return result;
  };

  const patchObject = (t: ResourceType, namespace: string | undefined, name: string, contentType: string | undefined, patch: unknown): KubeObject => {
    const old = current(t, namespace, name);
    const next = applyPatch(old, contentType, patch);
    if (t.statusSubresource) {
      if (old.status === undefined) delete next.status;
      else next.status = structuredClone(old.status);
    }
    return commitUpdate(t, old, next);
  };

  /** A write to `/status`: only status changes (a resourceVersion in the body is still a precondition). */
  const writeStatus = (t: ResourceType, old: KubeObject, written: KubeObject): KubeObject => {
    const next = structuredClone(old);
    if (written.status === undefined) delete next.status;
    else next.status = structuredClone(written.status);
    const rv = isPlainObject(written.metadata) ? written.metadata.resourceVersion : undefined;
    if (rv !== undefined && rv !== '' && rv !== old.metadata!.resourceVersion) throw conflict(t, old.metadata!.name!);
    return commitUpdate(t, old, next);
  };

  const deleteObject = (t: ResourceType, namespace: string | undefined, name: string): KubeObject => {
    const old = current(t, namespace, name);
    if ((old.metadata!.finalizers ?? []).length === 0) return remove(t, old);
    if (old.metadata!.deletionTimestamp !== undefined) return structuredClone(old);
    const next = structuredClone(old);
    next.metadata!.deletionTimestamp = now();
    next.metadata!.deletionGracePeriodSeconds = 0;
    next.metadata!.resourceVersion = String(++revision);
    bucket(t).set(keyOf(namespace, name), next);
    emit(t, 'MODIFIED', next);
    return structuredClone(next);
  };

  const listObjects = (t: ResourceType, namespace: string | undefined, query: URLSearchParams): KubeObject => {
    const filter = { namespace, labelSelector: query.get('labelSelector') ?? undefined, fieldSelector: query.get('fieldSelector') ?? undefined };
    const items = objectsOf(t, namespace).filter((o) => matches(filter, o)).map((o) => structuredClone(o));
    return { apiVersion: apiVersionOf(t), kind: `${t.kind}List`, metadata: { resourceVersion: String(revision) }, items };
  };

  const openWatch = (t: ResourceType, namespace: string | undefined, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): void => {
    const watcher: Watcher = { type: t, namespace, labelSelector: query.get('labelSelector') ?? undefined, fieldSelector: query.get('fieldSelector') ?? undefined, res };
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();
    const from = query.get('resourceVersion') ?? '';
    if (from === '' || from === '0') {
      for (const o of objectsOf(t, namespace)) if (matches(watcher, o)) send(watcher, 'ADDED', o);
    } else {
      const since = Number(from);
      if (!Number.isFinite(since) || since < compactedBelow) {
        send(watcher, 'ERROR', new StatusError(410, 'Expired', `too old resource version: ${from} (${compactedBelow})`).toStatus());
        res.end();
        return;
      }
      for (const entry of history) if (entry.rv > since && entry.type === t && matches(watcher, entry.object)) send(watcher, entry.event, entry.object);
    }
    // A streaming list (sendInitialEvents, used by client-go's watch-list and so by helm's waits): the current
    // objects came as ADDED above; a bookmark marks where they end.
    if (query.get('sendInitialEvents') === 'true') {
      send(watcher, 'BOOKMARK', { apiVersion: apiVersionOf(t), kind: t.kind, metadata: { resourceVersion: String(revision), annotations: { 'k8s.io/initial-events-end': 'true' } } });
    }
    watchers.add(watcher);
    const forget = (): void => {
      watchers.delete(watcher);
    };
    req.on('close', forget);
    res.on('close', forget);
  };

  const parsePath = (pathname: string): ParsedPath | KubeObject => {
    const segments = pathname.split('/').filter(Boolean).map(decodeURIComponent);
    // No OpenAPI documents: clients that validate against them (helm's hooks) find no schema and skip the check.
    if (segments[0] === 'openapi' && segments[1] === 'v3' && segments.length === 2) {
      const paths = Object.fromEntries(['api/v1', ...new Set(TYPES.filter((t) => t.group).map((t) => `apis/${t.group}/${t.version}`))].map((p) => [p, { serverRelativeURL: `/openapi/v3/${p}` }]));
      return { paths };
    }
    if (segments[0] === 'openapi' && segments[1] === 'v3') {
      return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.33.0' }, paths: {}, components: { schemas: {} } };
    }
    if (segments[0] === 'version' && segments.length === 1) {
      return { major: '1', minor: '33', gitVersion: 'v1.33.0', platform: 'linux/amd64' };
    }
    if (segments[0] === 'api' && segments.length === 1) return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
    if (segments[0] === 'apis' && segments.length === 1) {
      const groups = [...new Set(TYPES.filter((t) => t.group).map((t) => t.group))].map((name) => {
        const version = { groupVersion: `${name}/${TYPES.find((t) => t.group === name)!.version}`, version: TYPES.find((t) => t.group === name)!.version };
        return { name, versions: [version], preferredVersion: version };
      });
      return { kind: 'APIGroupList', apiVersion: 'v1', groups };
    }
    const [group, version, rest] =
      segments[0] === 'api' ? ['', segments[1], segments.slice(2)] : segments[0] === 'apis' ? [segments[1], segments[2], segments.slice(3)] : [undefined, undefined, []];
    if (group === undefined || version === undefined) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    const inVersion = TYPES.filter((t) => t.group === group && t.version === version);
    if (rest.length === 0 && inVersion.length > 0) {
      const resources = inVersion.flatMap((t) => [
        { name: t.plural, singularName: t.singular, namespaced: true, kind: t.kind, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
        ...(t.statusSubresource ? [{ name: `${t.plural}/status`, singularName: '', namespaced: true, kind: t.kind, verbs: ['get', 'patch', 'update'] }] : []),
      ]);
      return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
    }
    const [namespace, plural, name, subresource] = rest[0] === 'namespaces' && rest.length >= 3 ? [rest[1], rest[2], rest[3], rest[4]] : rest.length === 1 ? [undefined, rest[0], undefined, undefined] : [];
    const type = inVersion.find((t) => t.plural === plural);
    if (!type || (subresource !== undefined && (subresource !== 'status' || !type.statusSubresource))) {
      throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    }
    return { type, namespace, name, subresource };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const contentType = req.headers['content-type'];
    const body = await readBody(req);
    requests.push({ method, path: url.pathname, query: Object.fromEntries(url.searchParams), contentType, body });
    const anonymous = options.anonymous === true && req.headers.authorization === undefined;
    if (!anonymous && req.headers.authorization !== `Bearer ${token}`) throw new StatusError(401, 'Unauthorized', 'Unauthorized');
    const failure = failures.find((f) => (f.method === undefined || f.method === method) && (f.path === undefined || (typeof f.path === 'string' ? url.pathname === f.path : f.path.test(url.pathname))));
    if (failure) {
      failure.times = (failure.times ?? 1) - 1;
      if (failure.times <= 0) failures.splice(failures.indexOf(failure), 1);
      throw new StatusError(failure.code, REASONS[failure.code] ?? 'InternalError', `injected failure ${failure.code}`);
    }
    if (url.pathname === '/openapi/v2') {
      // The OpenAPI v2 document clients fall back to, in its protobuf form: `swagger: "2.0"` and no definitions.
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.end(Buffer.from([0x0a, 0x03, ...Buffer.from('2.0')]));
      return;
    }
    const parsed = parsePath(url.pathname);
    if (!('type' in parsed) || parsed.type === undefined) return reply(res, 200, parsed);
    const { type: t, namespace, name, subresource } = parsed as ParsedPath;
    const bodyObject = (isPlainObject(body) ? body : {}) as KubeObject;
    if (name === undefined) {
      if (method === 'GET' && url.searchParams.get('watch') === 'true') return openWatch(t, namespace, url.searchParams, req, res);
      if (method === 'GET') return reply(res, 200, listObjects(t, namespace, url.searchParams));
      if (method === 'POST' && namespace !== undefined) return reply(res, 201, createObject(t, namespace, body));
      throw new StatusError(405, 'MethodNotAllowed', `${method} is not supported on a collection here`);
    }
    if (subresource === 'status') {
      const old = current(t, namespace, name);
      if (method === 'GET') return reply(res, 200, structuredClone(old));
      if (method === 'PUT') return reply(res, 200, writeStatus(t, old, bodyObject));
      if (method === 'PATCH') return reply(res, 200, writeStatus(t, old, applyPatch(old, contentType, body)));
      throw new StatusError(405, 'MethodNotAllowed', `${method} is not supported on status`);
    }
    if (method === 'GET') return reply(res, 200, structuredClone(current(t, namespace, name)));
    if (method === 'PUT') return reply(res, 200, replaceObject(t, namespace, name, body));
    if (method === 'PATCH') return reply(res, 200, patchObject(t, namespace, name, contentType, body));
    if (method === 'DELETE') return reply(res, 200, deleteObject(t, namespace, name));
    throw new StatusError(405, 'MethodNotAllowed', `${method} is not supported`);
  };

  const reply = (res: ServerResponse, code: number, body: unknown): void => {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const error = err instanceof StatusError ? err : new StatusError(500, 'InternalError', err instanceof Error ? err.message : String(err));
      if (!res.headersSent) reply(res, error.code, error.toStatus());
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  const typeOf = (kind: KubeKind): ResourceType => RESOURCES[kind];
  const watchersOf = (kind?: KubeKind): Watcher[] => [...watchers].filter((w) => kind === undefined || w.type === typeOf(kind));

  const kubeConfig = (): KubeConfig => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'linkplane-test', server: url, skipTLSVerify: true }],
      users: [{ name: 'linkplane-test', token }],
      contexts: [{ name: 'linkplane-test', cluster: 'linkplane-test', user: 'linkplane-test', namespace: 'default' }],
      currentContext: 'linkplane-test',
    });
    return kc;
  };

  return {
    url,
    token,
    requests,
    get resourceVersion() {
      return String(revision);
    },
    kubeConfig,
    kubeconfigFile() {
      tempDir ??= mkdtempSync(join(tmpdir(), 'lp-kube-'));
      const file = join(tempDir, 'kubeconfig');
      writeFileSync(file, kubeConfig().exportConfig());
      return file;
    },
    get<T extends KubeObject>(kind: KubeKind, namespace: string, name: string) {
      const o = bucket(typeOf(kind)).get(keyOf(namespace, name));
      return o === undefined ? undefined : (structuredClone(o) as T);
    },
    list<T extends KubeObject>(kind: KubeKind, namespace?: string) {
      return objectsOf(typeOf(kind), namespace).map((o) => structuredClone(o) as T);
    },
    events<T extends KubeObject>() {
      return [...objectsOf(RESOURCES.Event), ...objectsOf(RESOURCES['events.k8s.io/Event'])]
        .sort((a, b) => Number(a.metadata!.resourceVersion) - Number(b.metadata!.resourceVersion))
        .map((o) => structuredClone(o) as T);
    },
    create<T extends KubeObject>(kind: KubeKind, object: T) {
      return createObject(typeOf(kind), object.metadata?.namespace ?? 'default', object) as T;
    },
    update<T extends KubeObject>(kind: KubeKind, object: T) {
      return replaceObject(typeOf(kind), object.metadata?.namespace ?? 'default', object.metadata?.name ?? '', object) as T;
    },
    patchStatus<T extends KubeObject>(kind: KubeKind, namespace: string, name: string, status: Record<string, unknown>) {
      const t = typeOf(kind);
      const old = current(t, namespace, name);
      return writeStatus(t, old, mergePatch(old, { status }) as KubeObject) as T;
    },
    delete(kind: KubeKind, namespace: string, name: string) {
      if (!bucket(typeOf(kind)).has(keyOf(namespace, name))) return false;
      deleteObject(typeOf(kind), namespace, name);
      return true;
    },
    closeWatches(kind?: KubeKind) {
      const open = watchersOf(kind);
      for (const w of open) {
        watchers.delete(w);
        w.res.end();
      }
      return open.length;
    },
    expireWatches(kind?: KubeKind) {
      // Positions older than now are gone; a client that re-lists gets the current revision and may watch from it.
      compactedBelow = revision;
      history.length = 0;
      const open = watchersOf(kind);
      for (const w of open) {
        watchers.delete(w);
        send(w, 'ERROR', new StatusError(410, 'Expired', 'too old resource version').toStatus());
        w.res.end();
      }
      return open.length;
    },
    watchCount(kind?: KubeKind) {
      return watchersOf(kind).length;
    },
    failRequests(rule: FailureRule) {
      failures.push({ ...rule });
    },
    async stop() {
      for (const w of watchers) w.res.end();
      watchers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    },
  };
}
