// Grafana dashboards for Linkplane, written as JSON by `node scripts/monitoring/generate.ts` into
// charts/linkplane/files/dashboards/ (the chart ships them as ConfigMaps for Grafana's dashboard sidecar).
// Every panel's query is run against a real Prometheus by test/e2e/prometheus.test.ts.
import { SLOS } from './rules.ts';

export interface Target { expr: string; legendFormat: string }
export interface Panel { title: string; type: 'timeseries' | 'stat'; unit: string; description: string; targets: Target[] }
export interface Row { title: string; panels: Panel[] }
export interface DashboardSpec {
  uid: string;
  title: string;
  description: string;
  /** The metric whose `instance` values fill the instance variable. */
  instanceMetric: string;
  rows: Row[];
}

/** The selector every raw-metric query carries: the chosen namespace and instances. */
const S = 'namespace=~"$namespace", instance=~"$instance"';
/** Recording rules are aggregated by namespace: they only carry the namespace. */
const N = 'namespace=~"$namespace"';
const RATE = '$__rate_interval';

const ts = (title: string, unit: string, description: string, ...targets: Target[]): Panel => ({ title, type: 'timeseries', unit, description, targets });
const stat = (title: string, unit: string, description: string, ...targets: Target[]): Panel => ({ title, type: 'stat', unit, description, targets });
const t = (expr: string, legendFormat: string): Target => ({ expr, legendFormat });

const quantiles = (metric: string, selector: string, by = ''): Target[] => [0.5, 0.99].map((q) =>
  t(`histogram_quantile(${q}, sum by (le${by ? `, ${by}` : ''}) (rate(${metric}_bucket{${selector}}[${RATE}])))`, `p${q * 100}${by ? ` {{${by}}}` : ''}`));

const overview: DashboardSpec = {
  uid: 'linkplane-overview',
  title: 'Linkplane / Overview',
  description: 'Service level objectives and their error budgets, traffic and the state of the asynchronous work.',
  instanceMetric: 'process_start_time_seconds',
  rows: [
    {
      title: 'Service level objectives (30 days)',
      panels: [
        stat('Error budget remaining', 'percentunit', 'Share of the 30-day error budget left, per SLO (below 0: the objective is missed).',
          t(`linkplane:slo_error_budget_remaining:ratio30d{${N}}`, '{{slo}}')),
        stat('Burn rate (1 h)', 'none', 'How fast each budget burns: 1 spends it in exactly 30 days, 14.4 pages.',
          t(`linkplane:slo_burn_rate:1h{${N}}`, '{{slo}}')),
        ...SLOS.map((slo) => ts(`${slo.id}: bad ratio`, 'percentunit', `Ratio of ${slo.what}, over 5 minutes and 1 hour; objective ${(slo.objective * 100).toFixed(1)} %.`,
          t(`linkplane:${slo.stem}:ratio_rate5m{${N}}`, '5m'),
          t(`linkplane:${slo.stem}:ratio_rate1h{${N}}`, '1h'),
          t(`1 - linkplane:slo_objective:ratio{slo="${slo.id}"}`, 'budget'))),
      ],
    },
    {
      title: 'Traffic and backlog',
      panels: [
        ts('Redirects', 'reqps', 'Short-link requests per second by outcome.',
          t(`sum by (outcome) (rate(linkplane_redirects_total{${S}}[${RATE}]))`, '{{outcome}}')),
        ts('API requests', 'reqps', 'API requests per second by status.',
          t(`sum by (status) (rate(http_request_duration_seconds_count{process="api", ${S}}[${RATE}]))`, '{{status}}')),
        ts('Work waiting', 'short', 'Messages waiting on JetStream for the workers.',
          t(`max by (consumer) (linkplane_webhook_consumer_pending_messages{${S}})`, '{{consumer}}'),
          t(`max(linkplane_click_consumer_pending{${S}})`, 'click-ingest')),
        ts('Outbox backlog age', 's', 'Age of the oldest event not yet published.',
          t(`max(linkplane_outbox_oldest_unpublished_age_seconds{${S}})`, 'oldest event')),
      ],
    },
  ],
};

const redirect: DashboardSpec = {
  uid: 'linkplane-redirect',
  title: 'Linkplane / Redirect',
  description: 'The redirect process: answers by outcome, latency, resolution cache and click capture.',
  instanceMetric: 'linkplane_redirects_total',
  rows: [
    {
      title: 'Answers',
      panels: [
        ts('Throughput by outcome', 'reqps', 'Short-link requests per second: redirected, blocked, not_found, interstitial, gone, error.',
          t(`sum by (outcome) (rate(linkplane_redirects_total{${S}}[${RATE}]))`, '{{outcome}}')),
        ts('Latency', 's', 'Time to answer a short link (p50, p99).',
          ...quantiles('http_request_duration_seconds', `process="redirect", route="redirect", ${S}`)),
        ts('Answers by status', 'reqps', 'Short-link answers per second by HTTP status.',
          t(`sum by (status) (rate(http_request_duration_seconds_count{process="redirect", route="redirect", ${S}}[${RATE}]))`, '{{status}}')),
      ],
    },
    {
      title: 'Resolution cache',
      panels: [
        ts('Cache hit ratio', 'percentunit', 'hit / (hit + miss + negative_hit) over 5 minutes.',
          t(`linkplane:redirect_cache_hits:ratio_rate5m{${N}}`, 'hit ratio')),
        ts('Cache lookups', 'ops', 'Lookups per second by result.',
          t(`sum by (result) (rate(linkplane_redirect_cache_lookups_total{${S}}[${RATE}]))`, '{{result}}')),
        ts('Cache entries', 'short', 'Links and remembered misses held per pod.',
          t(`linkplane_redirect_cache_entries{${S}}`, '{{instance}}')),
      ],
    },
    {
      title: 'Click capture',
      panels: [
        ts('Clicks published and dropped', 'ops', 'Clicks acknowledged by JetStream, and clicks dropped from a full buffer.',
          t(`sum(rate(linkplane_clicks_published_total{${S}}[${RATE}]))`, 'published'),
          t(`sum(rate(linkplane_clicks_dropped_total{${S}}[${RATE}]))`, 'dropped')),
        ts('Click buffer depth', 'short', 'Clicks held in memory per pod (waiting for NATS or its ack).',
          t(`linkplane_click_buffer_depth{${S}}`, '{{instance}}')),
        ts('Click publish failures', 'ops', 'Failed publishes per second (the click is retried).',
          t(`sum by (instance) (rate(linkplane_click_publish_failures_total{${S}}[${RATE}]))`, '{{instance}}')),
      ],
    },
  ],
};

const API_SEL = `process="api", ${S}`;
const api: DashboardSpec = {
  uid: 'linkplane-api',
  title: 'Linkplane / API',
  description: 'The REST API: requests by route and status, latency, rate limiting.',
  instanceMetric: 'http_request_duration_seconds_count{process="api"}',
  rows: [
    {
      title: 'Requests',
      panels: [
        ts('Requests by status', 'reqps', 'Requests per second by HTTP status.',
          t(`sum by (status) (rate(http_request_duration_seconds_count{${API_SEL}}[${RATE}]))`, '{{status}}')),
        ts('Requests by route', 'reqps', 'Requests per second by route template (top 10).',
          t(`topk(10, sum by (method, route) (rate(http_request_duration_seconds_count{${API_SEL}}[${RATE}])))`, '{{method}} {{route}}')),
        ts('5xx by route', 'reqps', 'Server errors per second by route template.',
          t(`sum by (method, route) (rate(http_request_duration_seconds_count{status=~"5..", ${API_SEL}}[${RATE}])) or vector(0)`, '{{method}} {{route}}')),
      ],
    },
    {
      title: 'Latency',
      panels: [
        ts('Latency', 's', 'API request duration (p50, p99).', ...quantiles('http_request_duration_seconds', `${API_SEL}, route=~"/v1/.*"`)),
        ts('p99 by route', 's', 'The slowest routes (p99, top 10).',
          t(`topk(10, histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{${API_SEL}, route=~"/v1/.*"}[${RATE}]))))`, '{{route}}')),
      ],
    },
    {
      title: 'Rate limiting',
      panels: [
        ts('Rate-limited requests', 'reqps', 'Requests answered 429 rate_limited, by route.',
          t(`sum by (route) (rate(http_request_duration_seconds_count{status="429", ${API_SEL}}[${RATE}])) or vector(0)`, '{{route}}')),
        ts('Rate-limited share', 'percentunit', 'Share of API requests answered 429.',
          t(`(sum(rate(http_request_duration_seconds_count{status="429", ${API_SEL}}[${RATE}])) or vector(0)) / sum(rate(http_request_duration_seconds_count{${API_SEL}}[${RATE}]))`, '429 share')),
      ],
    },
  ],
};

const webhooks: DashboardSpec = {
  uid: 'linkplane-webhooks',
  title: 'Linkplane / Webhooks and events',
  description: 'Event fan-out and webhook delivery: outcomes, attempts, failing endpoints, lag.',
  instanceMetric: 'linkplane_webhook_deliveries_total',
  rows: [
    {
      title: 'Deliveries',
      panels: [
        ts('Deliveries by outcome', 'ops', 'Delivery attempts per second: succeeded, failed, dropped.',
          t(`sum by (outcome) (rate(linkplane_webhook_deliveries_total{${S}}[${RATE}]))`, '{{outcome}}')),
        ts('Deliveries by attempt', 'ops', 'Attempts per second by attempt number (1: first try).',
          t(`sum by (attempt) (rate(linkplane_webhook_deliveries_total{${S}}[${RATE}]))`, 'attempt {{attempt}}')),
        ts('Failure ratio', 'percentunit', 'Failed / (succeeded + failed) attempts.',
          t(`linkplane:webhook_delivery_failures:ratio_rate5m{${N}}`, '5m'),
          t(`linkplane:webhook_delivery_failures:ratio_rate30m{${N}}`, '30m')),
        ts('Delivery duration', 's', 'Time to the receiver\'s answer (p50, p99) by outcome.',
          ...quantiles('linkplane_webhook_delivery_duration_seconds', S, 'outcome')),
      ],
    },
    {
      title: 'Endpoints and lag',
      panels: [
        stat('Failing endpoints', 'short', 'Endpoints disabled after exhausting their retries.',
          t(`max(linkplane_webhook_endpoints_failing{${S}})`, 'failing')),
        ts('Consumer pending', 'short', 'Messages not yet delivered to the fan-out and delivery consumers.',
          t(`max by (consumer) (linkplane_webhook_consumer_pending_messages{${S}})`, '{{consumer}}')),
        ts('Fan-out', 'ops', 'Delivery messages written by the fan-out per second.',
          t(`sum by (result) (rate(linkplane_webhook_fanout_deliveries_total{${S}}[${RATE}]))`, '{{result}}')),
        ts('Events published', 'ops', 'Outbox rows published to JetStream, and failed attempts.',
          t(`sum(rate(linkplane_outbox_published_total{${S}}[${RATE}]))`, 'published'),
          t(`sum(rate(linkplane_outbox_publish_failures_total{${S}}[${RATE}]))`, 'failed')),
      ],
    },
  ],
};

const domains: DashboardSpec = {
  uid: 'linkplane-domains',
  title: 'Linkplane / Domains and operator',
  description: 'Custom domains: phases, reconciles, leader election, domain events.',
  instanceMetric: 'linkplane_operator_leader',
  rows: [
    {
      title: 'Domains',
      panels: [
        stat('Domains by phase', 'short', 'Domain objects per phase, as the leader sees them.',
          t(`max by (phase) (linkplane_operator_domains{${S}})`, '{{phase}}')),
        ts('Phases over time', 'short', 'Domain objects per phase.',
          t(`max by (phase) (linkplane_operator_domains{${S}})`, '{{phase}}')),
        stat('Earliest certificate expiry', 's', 'Time left until the first custom-domain certificate expires (cert-manager renews 30 days ahead).',
          t(`min(linkplane_operator_certificate_earliest_expiry_timestamp_seconds{${S}}) - time()`, 'time left')),
        ts('Domain events handled', 'ops', 'DOMAINS messages applied by the worker, by result.',
          t(`sum by (result) (rate(linkplane_domain_events_total{${S}}[${RATE}])) or vector(0)`, '{{result}}')),
      ],
    },
    {
      title: 'Operator',
      panels: [
        stat('Leader', 'short', '1 for the replica that holds the Lease.', t(`linkplane_operator_leader{${S}}`, '{{instance}}')),
        ts('Reconciles by result', 'ops', 'Reconciles per second: success, requeue, error.',
          t(`sum by (result) (rate(linkplane_operator_reconcile_duration_seconds_count{${S}}[${RATE}]))`, '{{result}}')),
        ts('Reconcile errors', 'ops', 'Failed reconciles per second (requeued with a rate limit).',
          t(`sum by (instance) (rate(linkplane_operator_reconcile_errors_total{${S}}[${RATE}]))`, '{{instance}}')),
        ts('Reconcile duration', 's', 'Reconcile duration (p50, p99).', ...quantiles('linkplane_operator_reconcile_duration_seconds', S)),
      ],
    },
  ],
};

const WORKER = `process="worker", ${S}`;
const workers: DashboardSpec = {
  uid: 'linkplane-workers',
  title: 'Linkplane / Workers',
  description: 'The worker: click ingestion, outbox relay, consumers pending, and the Node.js runtime of every process.',
  instanceMetric: 'process_start_time_seconds',
  rows: [
    {
      title: 'Click ingestion',
      panels: [
        ts('Clicks ingested', 'ops', 'Clicks written to MongoDB per second, and failed batches.',
          t(`sum(rate(linkplane_clicks_ingested_total{${S}}[${RATE}]))`, 'ingested'),
          t(`sum(rate(linkplane_click_ingest_failures_total{${S}}[${RATE}]))`, 'failed batches')),
        ts('Ingestion lag', 's', 'Time from a click to its write (p50, p99).', ...quantiles('linkplane_click_ingest_lag_seconds', S)),
        ts('Clicks pending', 'short', 'Clicks on CLICKS not yet delivered to the ingestion.',
          t(`max(linkplane_click_consumer_pending{${S}})`, 'pending')),
      ],
    },
    {
      title: 'Outbox and consumers',
      panels: [
        ts('Outbox backlog age', 's', 'Age of the oldest unpublished event (0: empty).',
          t(`max(linkplane_outbox_oldest_unpublished_age_seconds{${S}})`, 'oldest')),
        ts('Outbox throughput', 'ops', 'Events published per second, and failed attempts.',
          t(`sum(rate(linkplane_outbox_published_total{${S}}[${RATE}]))`, 'published'),
          t(`sum(rate(linkplane_outbox_publish_failures_total{${S}}[${RATE}]))`, 'failed')),
        ts('Consumer pending', 'short', 'Messages waiting per JetStream consumer.',
          t(`max by (consumer) (linkplane_webhook_consumer_pending_messages{${S}})`, '{{consumer}}'),
          t(`max(linkplane_click_consumer_pending{${S}})`, 'click-ingest')),
      ],
    },
    {
      title: 'Runtime (every process)',
      panels: [
        ts('CPU', 'percentunit', 'CPU seconds per second, per process instance.',
          t(`sum by (instance) (rate(process_cpu_seconds_total{${S}}[${RATE}]))`, '{{instance}}')),
        ts('Resident memory', 'bytes', 'Resident set size per process instance.', t(`process_resident_memory_bytes{${S}}`, '{{instance}}')),
        ts('Event loop lag (p99)', 's', 'Node.js event loop delay, p99.', t(`nodejs_eventloop_lag_p99_seconds{${S}}`, '{{instance}}')),
        ts('Worker requests', 'reqps', 'Health and metrics requests on the worker port.',
          t(`sum by (route) (rate(http_request_duration_seconds_count{${WORKER}}[${RATE}]))`, '{{route}}')),
      ],
    },
  ],
};

export const DASHBOARDS: readonly DashboardSpec[] = [overview, redirect, api, webhooks, domains, workers];

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/** The Grafana dashboard JSON (schema 39) of a spec: rows of panels, 8 units tall, laid out left to right. */
export function grafanaJson(spec: DashboardSpec): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const row of spec.rows) {
    panels.push({ type: 'row', id: id++, title: row.title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });
    y += 1;
    const width = Math.max(6, Math.floor(24 / Math.min(row.panels.length, 4)));
    row.panels.forEach((panel, i) => {
      const x = (i * width) % 24;
      if (i > 0 && x === 0) y += 8;
      panels.push({
        type: panel.type,
        id: id++,
        title: panel.title,
        description: panel.description,
        datasource: DATASOURCE,
        gridPos: { h: 8, w: width, x, y },
        fieldConfig: { defaults: { unit: panel.unit }, overrides: [] },
        options: panel.type === 'stat'
          ? { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', graphMode: 'none', textMode: 'auto' }
          : { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } },
        targets: panel.targets.map((target, n) => ({ refId: String.fromCharCode(65 + n), datasource: DATASOURCE, expr: target.expr, legendFormat: target.legendFormat })),
      });
    });
    y += 8;
  }
  const instanceQuery = `label_values(${spec.instanceMetric.includes('{') ? spec.instanceMetric.replace('{', '{namespace=~"$namespace", ') : `${spec.instanceMetric}{namespace=~"$namespace"}`}, instance)`;
  return {
    uid: spec.uid,
    title: spec.title,
    description: spec.description,
    tags: ['linkplane'],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    timezone: 'browser',
    links: [{ type: 'dashboards', tags: ['linkplane'], asDropdown: true, title: 'Linkplane', includeVars: true, keepTime: true }],
    templating: {
      list: [
        { type: 'datasource', name: 'datasource', label: 'Data source', query: 'prometheus', current: {}, hide: 0 },
        {
          type: 'query', name: 'namespace', label: 'Namespace', datasource: DATASOURCE, refresh: 2, sort: 1,
          query: { query: 'label_values(process_start_time_seconds{process=~"api|redirect|worker"}, namespace)', refId: 'namespace' },
          definition: 'label_values(process_start_time_seconds{process=~"api|redirect|worker"}, namespace)',
          multi: true, includeAll: true, allValue: '.+', current: {},
        },
        {
          type: 'query', name: 'instance', label: 'Instance', datasource: DATASOURCE, refresh: 2, sort: 1,
          query: { query: instanceQuery, refId: 'instance' }, definition: instanceQuery,
          multi: true, includeAll: true, allValue: '.+', current: {},
        },
      ],
    },
    annotations: { list: [] },
    panels,
  };
}
