// The shapes the operator reads and writes: the `Domain` custom resource and the few fields it uses of the
// cert-manager Certificate and the Ingress it owns.

export const GROUP = 'linkplane.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'Domain';
export const PLURAL = 'domains';
export const FINALIZER = 'linkplane.io/cleanup';
/** Set to any value on a Domain in Error to verify DNS again; the operator removes it once it has acted. */
export const RETRY_ANNOTATION = 'linkplane.io/retry';
export const DOMAIN_ID_LABEL = 'linkplane.io/domain-id';
/** On the Certificates and Ingresses the operator creates; its informers watch only those. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'linkplane-operator';

export type Phase = 'PendingVerification' | 'PendingSSL' | 'Active' | 'Error';
export type ConditionType = 'DNSVerified' | 'CertificateReady' | 'Ready';
export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: ConditionType;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration: number;
}

export interface DnsRecord {
  type: 'TXT' | 'CNAME' | 'A';
  name: string;
  value: string;
}

export interface DnsCheck {
  attempts: number;
  firstCheckedAt: string;
  lastCheckedAt: string;
  lastError?: string;
}

export interface DomainStatus {
  phase?: Phase;
  conditions?: Condition[];
  observedGeneration?: number;
  dnsRecords?: DnsRecord[];
  certificateName?: string;
  lastEventPhase?: Phase;
  lastEventGeneration?: number;
  dnsCheck?: DnsCheck;
}

export interface IssuerRef {
  name: string;
  kind: string;
  group?: string;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface Domain {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: { hostname: string; tenant: string; domainId: string; verificationToken: string; issuerRef?: IssuerRef };
  status?: DomainStatus;
}

export interface CertificateCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
}

export interface Certificate {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: {
    secretName: string;
    dnsNames: string[];
    issuerRef: IssuerRef;
  };
  /** cert-manager's status; notAfter is when the issued certificate expires (RFC 3339). */
  status?: { conditions?: CertificateCondition[]; lastFailureTime?: string; notAfter?: string };
}

export interface Ingress {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: unknown;
}

export function domainKey(domain: { metadata: ObjectMeta }): string {
  return `${domain.metadata.namespace ?? ''}/${domain.metadata.name}`;
}

export function certificateName(domain: Domain): string {
  return domain.metadata.name;
}

export function ownerReference(domain: Domain): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: domain.metadata.name,
    uid: domain.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}
