import { Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValueWithName } from 'prom-client';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

interface Series {
  labels: { method: string; route: string; status: string };
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * `http_request_duration_seconds` by method, route template and status, exposed through prom-client's registry
 * in its histogram format. Kept by hand because it is observed on every request: a series is found by one map
 * lookup on a precomputed key, where prom-client's own histogram hashes and validates its labels each time.
 */
export class RequestDurationHistogram {
  readonly name = 'http_request_duration_seconds';
  readonly help = 'HTTP request duration by route template and status';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  /** The series observed last: requests in a row mostly share method, route and status (no key to build and hash). */
  private last: { method: string; route: string; status: number; series: Series } | null = null;

  observe(method: string, route: string, status: number, seconds: number): void {
    const last = this.last;
    let s: Series | undefined;
    if (last !== null && last.status === status && last.method === method && last.route === route) {
      s = last.series;
    } else {
      const key = `${method} ${status} ${route}`;
      s = this.series.get(key);
      if (!s) {
        s = { labels: { method, route, status: String(status) }, buckets: new Float64Array(BUCKETS.length), sum: 0, count: 0 };
        this.series.set(key, s);
      }
      this.last = { method, route, status, series: s };
    }
    for (let i = 0; i < BUCKETS.length; i++) {
      if (seconds <= BUCKETS[i]!) {
        s.buckets[i]! += 1;
        break;
      }
    }
    s.sum += seconds;
    s.count += 1;
  }

  get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const values: MetricValueWithName<string>[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: 'histogram' as never, aggregator: 'sum', collect: () => undefined, values });
  }

  reset(): void {
    this.series.clear();
    this.last = null;
  }
}

export interface HttpMetrics {
  registry: Registry;
  requestDuration: RequestDurationHistogram;
}

const GAUGES_NAMED_LIKE_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** One registry per process (no prom-client global), so tests can build several processes side by side. */
export function createMetrics(processName: string): HttpMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ process: processName });
  collectDefaultMetrics({ register: registry });
  // prom-client also exposes these totals as gauges named like counters, which Prometheus tooling flags (promtool:
  // "non-counter metrics should not have _total suffix"). Each is the sum of its per-type gauge, which stays:
  // `sum without (type) (nodejs_active_handles)`.
  for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
  const requestDuration = new RequestDurationHistogram();
  registry.registerMetric(requestDuration as never);
  return { registry, requestDuration };
}
