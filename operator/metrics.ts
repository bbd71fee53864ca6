// The operator's metrics and its small HTTP server: /metrics (Prometheus), /healthz (alive), /readyz (caches
// synced and NATS connected).
import { createServer } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Phase } from './domain.ts';

const PHASES: readonly Phase[] = ['PendingVerification', 'PendingSSL', 'Active', 'Error'];

export type ReconcileResult = 'success' | 'requeue' | 'error';

export interface OperatorMetricsSources {
  /** Domains per phase, counted from the informer cache when scraped. */
  phases: () => ReadonlyMap<Phase, number>;
  isLeader: () => boolean;
  /** Expiry (Unix seconds) of every issued Certificate the operator owns. */
  certificateExpiries?: () => number[];
}

/**
 * `linkplane_operator_certificate_earliest_expiry_timestamp_seconds`: when the first of the custom-domain
 * certificates expires. One series, not one per certificate: host names would make the label unbounded (the
 * runbook lists the certificates). No sample at all while no certificate is issued, so an alert on it cannot
 * mistake "none yet" for "expired in 1970".
 */
class EarliestExpiry {
  readonly name = 'linkplane_operator_certificate_earliest_expiry_timestamp_seconds';
  readonly help = 'When the earliest-expiring issued custom-domain Certificate expires (Unix seconds); absent while none is issued';
  readonly type = 'gauge';
  readonly aggregator = 'omit';
  private readonly expiries: () => number[];

  constructor(expiries: () => number[]) {
    this.expiries = expiries;
  }

  get(): Promise<MetricObjectWithValues<MetricValue<string>>> {
    const all = this.expiries();
    const values = all.length === 0 ? [] : [{ labels: {}, value: Math.min(...all) }];
    return Promise.resolve({ name: this.name, help: this.help, type: 'gauge' as never, aggregator: 'omit', collect: () => undefined, values });
  }

  reset(): void {}
}

export class OperatorMetrics {
  readonly registry = new Registry();
  private readonly duration: Histogram<'result'>;
  private readonly errors: Counter;

  constructor(sources: OperatorMetricsSources, options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) {
      collectDefaultMetrics({ register: this.registry });
      // prom-client's totals of the per-type nodejs_active_* gauges are gauges named like counters, which promtool
      // check metrics refuses; the per-type gauges stay (as in the other processes).
      for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) this.registry.removeSingleMetric(name);
    }
    this.duration = new Histogram({
      name: 'linkplane_operator_reconcile_duration_seconds',
      help: 'Duration of a Domain reconcile, by result',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    // Every result exists from the start at 0, so rates and ratios over it are 0 rather than empty.
    for (const result of ['success', 'requeue', 'error'] as const) this.duration.zero({ result });
    this.errors = new Counter({
      name: 'linkplane_operator_reconcile_errors_total',
      help: 'Reconciles that failed and were requeued with a rate limit',
      registers: [this.registry],
    });
    new Gauge({
      name: 'linkplane_operator_domains',
      help: 'Domain objects by phase, as this replica sees them',
      labelNames: ['phase'],
      registers: [this.registry],
      collect() {
        const counts = sources.phases();
        for (const phase of PHASES) this.set({ phase }, counts.get(phase) ?? 0);
      },
    });
    if (sources.certificateExpiries) this.registry.registerMetric(new EarliestExpiry(sources.certificateExpiries) as never);
    new Gauge({
      name: 'linkplane_operator_leader',
      help: '1 when this replica holds the Lease and acts, else 0',
      registers: [this.registry],
      collect() {
        this.set(sources.isLeader() ? 1 : 0);
      },
    });
  }

  observeReconcile(result: ReconcileResult, seconds: number): void {
    this.duration.observe({ result }, seconds);
    if (result === 'error') this.errors.inc();
  }
}

export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startOpsServer(options: {
  host: string;
  port: number;
  registry: Registry;
  ready: () => Record<string, boolean>;
}): Promise<OpsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405).end();
    } else if (path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
    } else if (path === '/readyz') {
      const checks = options.ready();
      const ok = Object.values(checks).every(Boolean);
      res.writeHead(ok ? 200 : 503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: ok ? 'ok' : 'unavailable', checks }));
    } else if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': options.registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
