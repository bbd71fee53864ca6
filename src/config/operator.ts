// The operator's configuration: read once from the environment, every bad variable named together, frozen.
import { hostname } from 'node:os';
import { ConfigError, IPV4, parseResolver, type DefaultObserver, type ResolverAddress } from './config.ts';

export { parseResolver, type ResolverAddress };

type Env = Record<string, string | undefined>;

export interface OperatorConfig {
  /** This replica's identity in the Lease (the pod name). */
  readonly identity: string;
  /** The namespace whose `Domain` objects this operator reconciles (and where its Lease lives). */
  readonly namespace: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly kubeconfig: string | null;
  readonly nats: { readonly url: string; readonly prefix: string; readonly duplicateWindowMs: number };
  readonly certificate: { readonly issuerName: string; readonly issuerKind: 'ClusterIssuer' | 'Issuer' };
  readonly ingress: { readonly className: string; readonly serviceName: string; readonly servicePort: number };
  readonly dns: {
    /** Resolvers to ask (`ip` or `ip:port`); empty: the system's. */
    readonly resolvers: readonly ResolverAddress[];
    /** Delay before each further check; the last one repeats. */
    readonly backoffMs: readonly number[];
    /** Counted from the first check of a generation; past it the domain goes to Error. */
    readonly giveUpAfterMs: number;
    readonly cnameTarget: string | null;
    readonly aTargets: readonly string[];
    readonly txtPrefix: string;
  };
  readonly lease: { readonly name: string; readonly durationMs: number; readonly renewMs: number };
  readonly metricsPort: number;
  readonly host: string;
}

const PORT_MAX = 65535;
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `250ms`, `30s`, `5m`, `72h` in milliseconds; null when malformed or below 1 ms. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,9})(ms|s|m|h)$/.exec(text.trim());
  if (!match) return null;
  const ms = Number(match[1]) * DURATION_UNITS[match[2]!]!;
  return ms >= 1 && ms <= 365 * 86_400_000 ? ms : null;
}

export function loadOperatorConfig(env: Env = process.env, observe?: DefaultObserver): OperatorConfig {
  const problems: string[] = [];
  const text = (name: string, fallback: string): string => {
    observe?.(name, fallback);
    const raw = env[name];
    return raw === undefined || raw.trim() === '' ? fallback : raw.trim();
  };
  const optional = (name: string): string | null => {
    const raw = env[name];
    return raw === undefined || raw.trim() === '' ? null : raw.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    observe?.(name, String(fallback));
    const raw = optional(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      problems.push(`${name}: expected an integer between ${min} and ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  };
  const oneOf = <T extends string>(name: string, fallback: T, allowed: readonly T[]): T => {
    observe?.(name, fallback);
    const raw = optional(name);
    if (raw === null) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      problems.push(`${name}: must be one of ${allowed.join(', ')}, got "${raw}"`);
      return fallback;
    }
    return raw as T;
  };
  const duration = (name: string, fallback: string): number => {
    const raw = text(name, fallback);
    const value = parseDuration(raw);
    if (value === null) problems.push(`${name}: expected a duration such as 30s, 5m or 72h, got "${raw}"`);
    return value ?? parseDuration(fallback)!;
  };
  const list = (name: string): string[] =>
    (optional(name) ?? '')
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== '');

  const backoffRaw = text('DNS_CHECK_BACKOFF', '10s,30s,1m,5m,15m');
  const backoff = backoffRaw.split(',').map((part) => parseDuration(part));
  if (backoff.some((value) => value === null)) {
    problems.push(`DNS_CHECK_BACKOFF: expected comma-separated durations such as 10s,30s,1m, got "${backoffRaw}"`);
  }
  const resolvers: ResolverAddress[] = [];
  for (const entry of list('DNS_RESOLVERS')) {
    const parsed = parseResolver(entry);
    if (parsed === null) problems.push(`DNS_RESOLVERS: expected ip or ip:port, got "${entry}"`);
    else resolvers.push(parsed);
  }
  const aTargets = list('DOMAIN_A_TARGETS');
  for (const ip of aTargets) {
    if (!IPV4.test(ip)) problems.push(`DOMAIN_A_TARGETS: not an IPv4 address: "${ip}"`);
  }
  const cnameTarget = optional('DOMAIN_CNAME_TARGET')?.toLowerCase().replace(/\.$/, '') ?? null;
  if (cnameTarget === null && aTargets.length === 0) {
    problems.push('DOMAIN_CNAME_TARGET or DOMAIN_A_TARGETS: at least one is needed to verify where a domain points');
  }
  const natsUrl = text('NATS_URL', 'nats://127.0.0.1:4222');
  if (!/^(nats|tls):\/\/./.test(natsUrl)) problems.push(`NATS_URL: expected nats:// or tls://, got "${natsUrl}"`);
  const natsPrefix = text('NATS_PREFIX', '');
  if (!/^[A-Za-z0-9_-]*$/.test(natsPrefix)) problems.push('NATS_PREFIX: letters, digits, "_" and "-" only');
  const serviceName = optional('INGRESS_SERVICE_NAME');
  if (serviceName === null) problems.push('INGRESS_SERVICE_NAME: required (the redirect Service custom domains route to)');
  const namespace = optional('OPERATOR_NAMESPACE') ?? optional('POD_NAMESPACE');
  if (namespace === null) problems.push('POD_NAMESPACE or OPERATOR_NAMESPACE: required (the namespace to watch)');
  const durationMs = int('LEASE_DURATION_MS', 15_000, 100, 600_000);
  const renewMs = int('LEASE_RENEW_MS', 5_000, 10, 600_000);
  if (renewMs >= durationMs) problems.push(`LEASE_RENEW_MS: must be shorter than LEASE_DURATION_MS (${durationMs}), got ${renewMs}`);

  const config: OperatorConfig = {
    identity: text('POD_NAME', hostname()),
    namespace: namespace ?? '',
    logLevel: oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    kubeconfig: optional('KUBECONFIG'),
    nats: {
      url: natsUrl,
      prefix: natsPrefix,
      duplicateWindowMs: int('NATS_DUPLICATE_WINDOW_MS', 3_600_000, 1000, 7 * 86_400_000),
    },
    certificate: {
      issuerName: text('CERT_ISSUER_NAME', 'letsencrypt'),
      issuerKind: oneOf('CERT_ISSUER_KIND', 'ClusterIssuer', ['ClusterIssuer', 'Issuer'] as const),
    },
    ingress: {
      className: text('INGRESS_CLASS', 'nginx'),
      serviceName: serviceName ?? '',
      servicePort: int('INGRESS_SERVICE_PORT', 8081, 1, PORT_MAX),
    },
    dns: {
      resolvers,
      backoffMs: backoff.every((value) => value !== null) ? backoff : [10_000, 30_000, 60_000, 300_000, 900_000],
      giveUpAfterMs: duration('DNS_GIVE_UP_AFTER', '72h'),
      cnameTarget,
      aTargets,
      txtPrefix: text('DOMAIN_TXT_PREFIX', '_linkplane'),
    },
    lease: { name: text('LEASE_NAME', 'linkplane-operator'), durationMs, renewMs },
    metricsPort: int('OPERATOR_METRICS_PORT', 8083, 0, PORT_MAX),
    host: text('HOST', '0.0.0.0'),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (child !== null && typeof child === 'object') deepFreeze(child as object);
  }
  return Object.freeze(value);
}
