// Prometheus rules for Linkplane: the SLIs the alerts and dashboards share (recording rules, one definition of
// each ratio) and the alerts, each with a severity, a summary, a description naming the labels that locate the
// problem, and a runbook section. `node scripts/monitoring/generate.ts` writes them to the chart
// (charts/linkplane/files/prometheus-rules.yaml), which ships them as a PrometheusRule; promtool checks and
// unit-tests that file (test/prometheus/).
//
// Every expression aggregates by `namespace` (one Linkplane installation per namespace), so the rules work for
// several installations in one Prometheus. SLOs follow the SRE workbook's multi-window, multi-burn-rate alerts.

export const RUNBOOK_URL = 'https://github.com/linkplane/linkplane/blob/main/docs/runbooks.md';

export interface RecordingRule { record: string; expr: string; labels?: Record<string, string> }
export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: 'critical' | 'warning' | 'info' };
  annotations: { summary: string; description: string; runbook_url: string };
}
export interface RuleGroup { name: string; rules: Array<RecordingRule | AlertingRule> }

/** One service level objective: what fraction of events may be bad, and the ratio of bad events over a window. */
export interface Slo {
  /** The `slo` label of the budget rules and the alert name's stem. */
  id: string;
  alert: string;
  what: string;
  objective: number;
  /** The recording rule stem: linkplane:<stem>:ratio_rate<window>. */
  stem: string;
  /** The bad-event ratio over a window, aggregated by namespace. */
  ratio: (window: string) => string;
}

const REDIRECTS = 'http_request_duration_seconds_count{process="redirect",route="redirect"}';
const API = 'http_request_duration_seconds_count{process="api",route=~"/v1/.*"}';

export const SLOS: readonly Slo[] = [
  {
    id: 'redirect-availability',
    alert: 'LinkplaneRedirectAvailabilityBudgetBurn',
    what: 'short-link requests answered with an error',
    objective: 0.999,
    stem: 'redirect_errors',
    ratio: (w) => `sum by (namespace) (rate(linkplane_redirects_total{outcome="error"}[${w}])) / sum by (namespace) (rate(linkplane_redirects_total[${w}]))`,
  },
  {
    id: 'redirect-latency',
    alert: 'LinkplaneRedirectLatencyBudgetBurn',
    what: 'short-link requests slower than 100 ms',
    objective: 0.99,
    stem: 'redirect_slow',
    ratio: (w) => `1 - sum by (namespace) (rate(http_request_duration_seconds_bucket{process="redirect",route="redirect",le="0.1"}[${w}])) / sum by (namespace) (rate(${REDIRECTS}[${w}]))`,
  },
  {
    id: 'api-availability',
    alert: 'LinkplaneApiAvailabilityBudgetBurn',
    what: 'API requests answered with a 5xx',
    objective: 0.999,
    stem: 'api_errors',
    ratio: (w) => `1 - sum by (namespace) (rate(http_request_duration_seconds_count{process="api",route=~"/v1/.*",status!~"5.."}[${w}])) / sum by (namespace) (rate(${API}[${w}]))`,
  },
  {
    id: 'api-latency',
    alert: 'LinkplaneApiLatencyBudgetBurn',
    what: 'API requests slower than 500 ms',
    objective: 0.99,
    stem: 'api_slow',
    ratio: (w) => `1 - sum by (namespace) (rate(http_request_duration_seconds_bucket{process="api",route=~"/v1/.*",le="0.5"}[${w}])) / sum by (namespace) (rate(${API}[${w}]))`,
  },
];

/** The windows of the SRE workbook's burn-rate alerts, and 30 days for the error budget. */
export const WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d', '30d'] as const;

/** Fast burn pages (2 % of the 30-day budget in an hour, 5 % in six); slow burn opens a ticket (10 % in 3 days). */
const BURNS = {
  critical: [{ long: '1h', short: '5m', factor: 14.4 }, { long: '6h', short: '30m', factor: 6 }],
  warning: [{ long: '1d', short: '2h', factor: 3 }, { long: '3d', short: '6h', factor: 1 }],
} as const;

export const sliRecord = (slo: Slo, window: string): string => `linkplane:${slo.stem}:ratio_rate${window}`;

function runbook(alert: string): string {
  return `${RUNBOOK_URL}#${alert.toLowerCase()}`;
}

function number(n: number): string {
  return String(Number(n.toPrecision(6)));
}

function sloRules(): RuleGroup[] {
  const slis: RecordingRule[] = SLOS.flatMap((slo) => WINDOWS.map((w) => ({ record: sliRecord(slo, w), expr: slo.ratio(w) })));
  const budgets: RecordingRule[] = SLOS.flatMap((slo) => {
    const budget = number(1 - slo.objective);
    return [
      { record: 'linkplane:slo_objective:ratio', expr: `vector(${number(slo.objective)})`, labels: { slo: slo.id } },
      { record: 'linkplane:slo_error_budget_remaining:ratio30d', expr: `1 - ${sliRecord(slo, '30d')} / ${budget}`, labels: { slo: slo.id } },
      { record: 'linkplane:slo_burn_rate:1h', expr: `${sliRecord(slo, '1h')} / ${budget}`, labels: { slo: slo.id } },
    ];
  });
  const alerts: AlertingRule[] = SLOS.flatMap((slo) => (['critical', 'warning'] as const).map((severity) => {
    const budget = number(1 - slo.objective);
    const expr = BURNS[severity]
      .map(({ long, short, factor }) => `(${sliRecord(slo, long)} > (${factor} * ${budget}) and ${sliRecord(slo, short)} > (${factor} * ${budget}))`)
      .join('\nor\n');
    const pace = severity === 'critical' ? 'fast enough to exhaust the 30-day budget within days' : 'faster than the 30-day budget allows';
    return {
      alert: slo.alert,
      expr,
      for: severity === 'critical' ? '2m' : '15m',
      labels: { severity },
      annotations: {
        summary: `Linkplane is spending its ${slo.id} error budget ${severity === 'critical' ? 'fast' : 'steadily'}`,
        description: `In namespace {{ $labels.namespace }}, ${slo.what} are {{ $value | humanizePercentage }} of all (objective: at most ${number((1 - slo.objective) * 100)} %), ${pace}.`,
        runbook_url: runbook(slo.alert),
      },
    };
  }));
  return [
    { name: 'linkplane-slis', rules: [...slis, ...budgets] },
    { name: 'linkplane-slo-alerts', rules: alerts },
  ];
}

const WEBHOOK_FAILURES = (w: string): string =>
  `(sum by (namespace) (rate(linkplane_webhook_deliveries_total{outcome="failed"}[${w}])) or 0 * sum by (namespace) (rate(linkplane_webhook_deliveries_total[${w}])))` +
  ` / sum by (namespace) (rate(linkplane_webhook_deliveries_total{outcome=~"succeeded|failed"}[${w}]))`;

function operationalRules(): RuleGroup[] {
  const ratios: RecordingRule[] = [
    { record: 'linkplane:webhook_delivery_failures:ratio_rate5m', expr: WEBHOOK_FAILURES('5m') },
    { record: 'linkplane:webhook_delivery_failures:ratio_rate30m', expr: WEBHOOK_FAILURES('30m') },
    {
      record: 'linkplane:redirect_cache_hits:ratio_rate5m',
      expr: 'sum by (namespace) (rate(linkplane_redirect_cache_lookups_total{result="hit"}[5m])) / sum by (namespace) (rate(linkplane_redirect_cache_lookups_total[5m]))',
    },
  ];
  const alert = (a: Omit<AlertingRule, 'annotations'> & { summary: string; description: string }): AlertingRule => ({
    alert: a.alert,
    expr: a.expr,
    ...(a.for ? { for: a.for } : {}),
    labels: a.labels,
    annotations: { summary: a.summary, description: a.description, runbook_url: runbook(a.alert) },
  });
  const alerts: AlertingRule[] = [
    alert({
      alert: 'LinkplaneWebhookDeliveryFailures',
      expr: 'linkplane:webhook_delivery_failures:ratio_rate30m > 0.25',
      for: '15m',
      labels: { severity: 'warning' },
      summary: 'Many webhook deliveries fail',
      description: 'In namespace {{ $labels.namespace }}, {{ $value | humanizePercentage }} of webhook delivery attempts failed over 30 minutes (threshold 25 %).',
    }),
    alert({
      alert: 'LinkplaneWebhookConsumerLag',
      expr: 'max by (namespace, consumer) (linkplane_webhook_consumer_pending_messages) > 1000',
      for: '15m',
      labels: { severity: 'warning' },
      summary: 'Webhook work is piling up on JetStream',
      description: 'In namespace {{ $labels.namespace }}, consumer {{ $labels.consumer }} has {{ $value }} messages not yet delivered to a worker.',
    }),
    alert({
      alert: 'LinkplaneWebhookEndpointsFailing',
      expr: 'max by (namespace) (linkplane_webhook_endpoints_failing) > 0',
      for: '1h',
      labels: { severity: 'info' },
      summary: 'Webhook endpoints are disabled after exhausting their retries',
      description: 'In namespace {{ $labels.namespace }}, {{ $value }} webhook endpoints are in the failing state and receive no events until re-enabled.',
    }),
    alert({
      alert: 'LinkplaneClicksDropped',
      expr: 'sum by (namespace, instance) (increase(linkplane_clicks_dropped_total[10m])) > 0',
      labels: { severity: 'critical' },
      summary: 'Redirect pods are dropping clicks',
      description: 'Redirect {{ $labels.instance }} in namespace {{ $labels.namespace }} dropped {{ $value | humanize }} clicks in 10 minutes: its click buffer was full while NATS did not accept them.',
    }),
    alert({
      alert: 'LinkplaneClickSpoolFilling',
      expr: 'max by (namespace, instance) (linkplane_click_spool_bytes / (linkplane_click_spool_max_bytes > 0)) > 0.5',
      labels: { severity: 'warning' },
      summary: 'Redirect pods are spooling clicks to disk',
      description: 'Redirect {{ $labels.instance }} in namespace {{ $labels.namespace }} has filled {{ $value | humanizePercentage }} of its click spool while NATS did not accept clicks; when it is full, clicks are dropped.',
    }),
    alert({
      alert: 'LinkplaneClickPublishFailing',
      expr: 'sum by (namespace, instance) (rate(linkplane_click_publish_failures_total[5m])) > 0',
      for: '5m',
      labels: { severity: 'warning' },
      summary: 'Redirect pods cannot publish clicks to NATS',
      description: 'Redirect {{ $labels.instance }} in namespace {{ $labels.namespace }} fails to publish clicks ({{ $value | humanize }}/s); they wait in its buffer, and are dropped when it fills.',
    }),
    alert({
      alert: 'LinkplaneOutboxBacklogAging',
      expr: 'max by (namespace) (linkplane_outbox_oldest_unpublished_age_seconds) > 300',
      for: '5m',
      labels: { severity: 'warning' },
      summary: 'Events wait in the outbox',
      description: 'In namespace {{ $labels.namespace }}, the oldest unpublished event is {{ $value | humanizeDuration }} old: webhooks and domain events are late.',
    }),
    alert({
      alert: 'LinkplaneClickIngestionLagging',
      expr: 'histogram_quantile(0.99, sum by (namespace, le) (rate(linkplane_click_ingest_lag_seconds_bucket[10m]))) > 300',
      for: '10m',
      labels: { severity: 'warning' },
      summary: 'Clicks reach MongoDB late',
      description: 'In namespace {{ $labels.namespace }}, 1 % of clicks are written more than {{ $value | humanizeDuration }} after they happened: analytics, rotator limits and A/B weights lag behind.',
    }),
    alert({
      alert: 'LinkplaneClickIngestionStalled',
      expr: 'max by (namespace) (linkplane_click_consumer_pending) > 0\nand\nsum by (namespace) (rate(linkplane_clicks_ingested_total[10m])) == 0',
      for: '10m',
      labels: { severity: 'critical' },
      summary: 'Click ingestion has stopped',
      description: 'In namespace {{ $labels.namespace }}, {{ $value }} clicks wait on the CLICKS stream and no worker has written any for 10 minutes.',
    }),
    alert({
      alert: 'LinkplaneOperatorReconcileErrors',
      expr: 'sum by (namespace, instance) (rate(linkplane_operator_reconcile_errors_total[15m]))\n/\nsum by (namespace, instance) (rate(linkplane_operator_reconcile_duration_seconds_count[15m])) > 0.1',
      for: '15m',
      labels: { severity: 'warning' },
      summary: 'Domain reconciles fail',
      description: 'Operator {{ $labels.instance }} in namespace {{ $labels.namespace }}: {{ $value | humanizePercentage }} of Domain reconciles failed over 15 minutes.',
    }),
    alert({
      alert: 'LinkplaneDomainsInError',
      expr: 'max by (namespace) (linkplane_operator_domains{phase="Error"}) > 0',
      for: '30m',
      labels: { severity: 'warning' },
      summary: 'Custom domains are stuck in Error',
      description: 'In namespace {{ $labels.namespace }}, {{ $value }} Domain objects have been in phase Error for 30 minutes: their short links are not served on them.',
    }),
    ...(['warning', 'critical'] as const).map((severity) => alert({
      alert: 'LinkplaneCertificateExpiringSoon',
      expr: `min by (namespace) (linkplane_operator_certificate_earliest_expiry_timestamp_seconds) - time() < ${severity === 'critical' ? 3 : 14} * 86400`,
      for: severity === 'critical' ? '10m' : '1h',
      labels: { severity },
      summary: 'A custom-domain certificate expires soon',
      description: `In namespace {{ $labels.namespace }}, a custom-domain certificate expires in {{ $value | humanizeDuration }} (threshold ${severity === 'critical' ? 3 : 14} days): cert-manager has not renewed it.`,
    })),
    // Replicas that report but none leads; or none reports any more (every pod gone, pending or crash-looping), which
    // the first part cannot see: a namespace whose operator reported within the last day but reports nothing now.
    // absent() would not say which namespace, and would fire for installations without an operator.
    alert({
      alert: 'LinkplaneOperatorNoLeader',
      expr:
        'max by (namespace) (linkplane_operator_leader) < 1\n' +
        'or\n' +
        '(0 * max by (namespace) (max_over_time(linkplane_operator_leader[1d])) unless max by (namespace) (linkplane_operator_leader))',
      for: '5m',
      labels: { severity: 'critical' },
      summary: 'No operator replica leads',
      description: 'In namespace {{ $labels.namespace }}, no operator replica has held the Lease for 5 minutes, or none reports at all: custom domains are neither verified, certified nor routed.',
    }),
  ];
  return [
    { name: 'linkplane-ratios', rules: ratios },
    { name: 'linkplane-alerts', rules: alerts },
  ];
}

/**
 * Scrape targets of the processes. Prometheus Operator names a ServiceMonitor's job after the Service, so the file
 * selects the jobs and namespace of a release named `linkplane` in namespace `linkplane`; the chart's PrometheusRule
 * puts its own release's in their place (JOB_PREFIX, TARGET_NAMESPACE). Selecting by job keeps other applications'
 * `up` series out, and absent() carries the job and namespace of its equality matchers into the alert.
 */
export const JOB_PREFIX = 'linkplane-';
export const TARGET_NAMESPACE = 'linkplane';
export const TARGET_PROCESSES = ['api', 'redirect', 'worker'] as const;

function targetRules(): RuleGroup[] {
  const all = `up{namespace="${TARGET_NAMESPACE}", job=~"${JOB_PREFIX}(${TARGET_PROCESSES.join('|')})"}`;
  // One rule: targets all down per job, or a job without any target (one absent() per job, each naming it).
  const alerts: AlertingRule[] = [{
    alert: 'LinkplaneProcessDown',
    expr: [`sum by (namespace, job) (${all}) == 0`, ...TARGET_PROCESSES.map((process) => `absent(up{namespace="${TARGET_NAMESPACE}", job="${JOB_PREFIX}${process}"})`)].join('\nor\n'),
    for: '5m',
    labels: { severity: 'critical' },
    annotations: {
      summary: 'A Linkplane process has no target up',
      description: 'In namespace {{ $labels.namespace }}, no target of job {{ $labels.job }} has answered a scrape for 5 minutes, or none is discovered at all: every pod is gone, pending, crash-looping or unreachable.',
      runbook_url: runbook('LinkplaneProcessDown'),
    },
  }];
  alerts.push({
    alert: 'LinkplaneTargetDown',
    expr: `${all} == 0`,
    for: '10m',
    labels: { severity: 'warning' },
    annotations: {
      summary: 'A Linkplane pod does not answer scrapes',
      description: 'In namespace {{ $labels.namespace }}, {{ $labels.instance }} of job {{ $labels.job }} has not answered a scrape for 10 minutes while others may still serve.',
      runbook_url: runbook('LinkplaneTargetDown'),
    },
  });
  return [{ name: 'linkplane-targets', rules: alerts }];
}

export function ruleGroups(): RuleGroup[] {
  return [...sloRules(), ...operationalRules(), ...targetRules()];
}
