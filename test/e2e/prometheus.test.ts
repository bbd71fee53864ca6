// The monitoring, proven against a real Prometheus: it scrapes real api, redirect, worker and operator processes
// (own temp dir, free port, 1 s scrape and evaluation intervals) with the chart's rule file loaded. After real
// traffic (redirects, 404s, API calls, webhook deliveries to a receiver that always fails, a domain whose DNS never
// verifies, a certificate two days from expiry), every recording rule and every dashboard panel query must return data, the alerts that traffic
// deserves must go pending or firing and the SLO alerts must stay silent. Every /metrics passes
// `promtool check metrics`, carries no unbounded label values, and every metric a rule or dashboard names exists.
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import dns2 from 'dns2';
import { load } from 'js-yaml';
import { readFile } from 'node:fs/promises';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { freePort, ROOT, spawnProcess, waitForHttp, type Spawned } from '../helpers/processes.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube-apiserver.ts';
import { TestPrometheus, promtool, type Sample } from '../helpers/prometheus.ts';
import { until } from '../helpers/wait.ts';
import { spawn } from 'node:child_process';
import { RULES_FILE } from '../../scripts/monitoring/generate.ts';
import { DASHBOARDS, grafanaJson } from '../../scripts/monitoring/dashboards.ts';
import { labelValuesMetric, metricNames } from '../../scripts/monitoring/promql.ts';

const NAMESPACE = 'linkplane-e2e';
const GOOD_HOST = 'links.good.test';
const TOKEN = 'lp-verify-0123456789abcdef';

interface RuleFile { groups: Array<{ name: string; rules: Array<{ record?: string; alert?: string; expr: string }> }> }
interface GrafanaTarget { expr: string }
interface GrafanaPanel { type: string; title: string; targets?: GrafanaTarget[] }
interface GrafanaDashboard { title: string; panels: GrafanaPanel[]; templating: { list: Array<{ name: string; type: string; definition?: string }> } }

/** A dashboard query as Grafana would send it with "All" instances of the test's namespace selected. */
function asGrafanaSends(expr: string): string {
  return expr.replaceAll('$namespace', NAMESPACE).replaceAll('$instance', '.+').replaceAll('$__rate_interval', '1m');
}

/** Metric family and sample names in a Prometheus text exposition. */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const family = /^# TYPE (\S+) /.exec(line);
    if (family) names.add(family[1]!);
    else if (line !== '' && !line.startsWith('#')) names.add(/^[^{\s]+/.exec(line)![0]);
  }
  return names;
}

describe('monitoring against a real Prometheus (api, redirect, worker, operator)', function () {
  this.timeout(180_000);
  let mongo: TestMongo;
  let tenants: Tenants;
  let kube: KubeApiServer;
  let dns: ReturnType<typeof dns2.createServer>;
  let receiver: Server;
  let prometheus: TestPrometheus;
  const procs: Spawned[] = [];
  const ports: Record<'api' | 'redirect' | 'worker' | 'operator', number> = { api: 0, redirect: 0, worker: 0, operator: 0 };
  let shortBase = '';
  let rules: RuleFile;
  const dashboards = DASHBOARDS.map((spec) => grafanaJson(spec) as unknown as GrafanaDashboard);
  const scrapes = new Map<string, string>();

  before(async function () {
    rules = load(await readFile(RULES_FILE, 'utf8')) as RuleFile;
    mongo = await startTestMongo();
    tenants = await Tenants.open(mongo);
    // A webhook receiver that always fails: every delivery and retry is a failure.
    receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(500).end('down')));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    // A DNS server that knows one customer's records: that domain verifies and gets a Certificate; any other
    // never verifies and goes to Error.
    const dnsPort = await freePort();
    const { Packet } = dns2;
    dns = dns2.createServer({
      udp: true,
      handle: (request, send) => {
        const response = Packet.createResponseFromRequest(request);
        for (const question of request.questions) {
          if (question.name.toLowerCase() === `_linkplane.${GOOD_HOST}` && question.type === Packet.TYPE.TXT) {
            response.answers.push(Packet.createResourceFromQuestion(question, { type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data: `linkplane-verify=${TOKEN}` }));
          }
          if (question.name.toLowerCase() === GOOD_HOST && question.type === Packet.TYPE.CNAME) {
            response.answers.push(Packet.createResourceFromQuestion(question, { type: Packet.TYPE.CNAME, class: Packet.CLASS.IN, ttl: 1, domain: 'ingress.linkplane.test' }));
          }
        }
        void send(response);
      },
    });
    await dns.listen({ udp: { port: dnsPort, address: '127.0.0.1' } });
    kube = await startKubeApiServer();

    ports.api = await freePort();
    ports.worker = await freePort();
    ports.operator = await freePort();
    const { env, base } = await shortLinkEnv(mongo, {
      API_PORT: String(ports.api),
      WORKER_PORT: String(ports.worker),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '400ms,400ms,400ms,400ms',
    });
    shortBase = base;
    ports.redirect = Number(new URL(base).port);
    for (const name of ['api', 'redirect', 'worker'] as const) procs.push(spawnProcess(name, env));
    const operator = spawn(process.execPath, ['operator/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '', POD_NAME: 'op-0', POD_NAMESPACE: NAMESPACE, KUBECONFIG: kube.kubeconfigFile(),
        NATS_URL: env.NATS_URL!, NATS_PREFIX: env.NATS_PREFIX!, INGRESS_SERVICE_NAME: 'linkplane-redirect',
        DOMAIN_CNAME_TARGET: 'ingress.linkplane.test', DNS_RESOLVERS: `127.0.0.1:${dnsPort}`, DNS_CHECK_BACKOFF: '50ms',
        DNS_GIVE_UP_AFTER: '200ms', LEASE_DURATION_MS: '2000', LEASE_RENEW_MS: '200', OPERATOR_METRICS_PORT: String(ports.operator),
        HOST: '127.0.0.1', LOG_LEVEL: 'silent',
      },
      stdio: 'pipe',
    });
    let operatorOutput = '';
    operator.stdout.on('data', (d: Buffer) => (operatorOutput += d.toString()));
    operator.stderr.on('data', (d: Buffer) => (operatorOutput += d.toString()));
    const operatorExited = new Promise<number | null>((resolve) => operator.once('exit', (code) => resolve(code)));
    procs.push({
      child: operator,
      output: () => operatorOutput,
      exited: operatorExited,
      stop: () => {
        if (operator.exitCode === null) operator.kill('SIGTERM');
        return operatorExited;
      },
    });
    // Four processes starting at once on a shared machine: a generous bound on waiting, not a timing assertion.
    await Promise.all(Object.values(ports).map((port, i) => waitForHttp(`http://127.0.0.1:${port}/readyz`, procs[i]!, 90_000)));

    prometheus = await TestPrometheus.start({
      ruleFiles: [RULES_FILE],
      targets: Object.entries(ports).map(([job, port]) => ({ job, port, labels: { namespace: NAMESPACE } })),
    });

    // Rates need a scrape before the traffic: counters first seen already counted show no rate.
    await until(async () => (await prometheus.query('up == 1')).length === 4 || false, 60_000, 'every target scraped');

    // Traffic, spread over a few scrapes: links created through the API, followed on the redirect process, unknown slugs, webhook deliveries.
    const workspace = await tenants.aWorkspace();
    const { key } = await tenants.aWorkspaceKey(workspace._id);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`http://127.0.0.1:${ports.api}${path}`, {
        method, headers: { ...bearer(key), 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const hook = await call('POST', '/v1/webhooks', { url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`, events: ['link.created'] });
    expect(hook.status, JSON.stringify(hook.body)).to.equal(201);
    const slugs: string[] = [];
    for (let round = 0; round < 6; round++) {
      const link = await call('POST', '/v1/links', { url: `https://example.com/${round}` });
      expect(link.status, JSON.stringify(link.body)).to.equal(201);
      slugs.push(link.body.slug as string);
      expect((await call('GET', '/v1/links/lnk_missing')).status).to.equal(404);
      for (const slug of [...slugs, 'no-such-slug']) await (await fetch(`${shortBase}/${slug}`, { redirect: 'manual' })).arrayBuffer();
      await call('GET', '/v1/links');
      await new Promise((resolve) => setTimeout(resolve, 600));
    }
    for (const [hostname, domainId] of [['links.broken.test', 'dom_broken'], [GOOD_HOST, 'dom_good']] as const) {
      kube.create('Domain', {
        apiVersion: 'linkplane.io/v1alpha1',
        kind: 'Domain',
        metadata: { name: hostname, namespace: NAMESPACE },
        spec: { hostname, tenant: workspace._id, domainId, verificationToken: TOKEN },
      });
    }
    // Playing cert-manager: the good domain's Certificate is issued, and expires in two days.
    const certificate = await until(() => kube.list('Certificate', NAMESPACE)[0] ?? false, 60_000, 'the operator creates a Certificate');
    kube.patchStatus('Certificate', NAMESPACE, certificate.metadata!.name!, {
      notAfter: new Date(Date.now() + 2 * 86_400_000).toISOString(),
      conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'Certificate is up to date and has not expired' }],
    });
    // Prometheus needs two scrapes after the traffic for rates: wait until it has seen the failed deliveries.
    await until(async () => (await prometheus.query('linkplane:webhook_delivery_failures:ratio_rate5m > 0')).length > 0 || false, 60_000, 'webhook failures seen by Prometheus')
      .catch(async (error: unknown) => {
        const seen = await prometheus.query('linkplane_webhook_deliveries_total');
        throw new Error(`${String(error)}: deliveries ${JSON.stringify(seen)}\n${procs[2]!.output()}\n${prometheus.logs()}`);
      });

    for (const [name, port] of Object.entries(ports)) scrapes.set(name, await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
  });

  after(async function () {
    await prometheus?.stop();
    const codes = await Promise.all(procs.map((p) => p.stop()));
    await kube?.stop();
    await dns?.close();
    receiver?.close();
    await tenants?.close();
    await mongo?.stop();
    expect(codes, 'every process exits cleanly').to.deep.equal([0, 0, 0, 0]);
  });

  it('scrapes every process', async function () {
    const targets = await prometheus.targets();
    expect(targets.map((t) => [t.labels.job, t.health, t.lastError]).sort()).to.deep.equal(
      ['api', 'operator', 'redirect', 'worker'].map((job) => [job, 'up', '']),
    );
  });

  it('serves /metrics that promtool check metrics accepts, from every process', async function () {
    for (const [name, text] of scrapes) {
      const { code, output } = await promtool(['check', 'metrics'], text);
      expect(output, `${name} /metrics`).to.equal('');
      expect(code, `${name} /metrics`).to.equal(0);
    }
  });

  it('names every metric and label the Prometheus way: our own families under linkplane_, snake_case labels', function () {
    for (const [name, text] of scrapes) {
      for (const [, family, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
        expect(family, `${name}: ${family}`).to.match(/^(linkplane_[a-z0-9_]+|process_[a-z0-9_]+|nodejs_[a-z0-9_]+|http_request_duration_seconds)$/);
        if (type === 'counter') expect(family, `${name}: counter ${family}`).to.match(/_total$/);
        if (type === 'histogram') expect(family, `${name}: histogram ${family}`).to.match(/_(seconds|bytes)$/);
      }
      for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) {
        for (const [, label] of (/\{(.*)\}/.exec(line)?.[1] ?? '').matchAll(/([^=,]+)="(?:[^"\\]|\\.)*"/g)) {
          expect(label, `${name}: ${line}`).to.match(/^[a-z][a-z0-9_]*$/);
        }
      }
    }
  });

  it('labels no series with an id, a URL, a host name or a raw path (bounded cardinality)', function () {
    for (const [name, text] of scrapes) {
      for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) {
        const labels = /\{(.*)\}/.exec(line)?.[1] ?? '';
        expect(labels, `${name}: ${line}`).not.to.match(/"(lnk|ws|wh|evt|dlv|dom|key|ptr)_|https?:|example\.com|no-such-slug|(good|broken)\.test/);
      }
    }
  });

  it('exposes every metric a rule or a dashboard names (rule names are defined by a rule)', function () {
    const exposed = new Set([...scrapes.values()].flatMap((text) => [...exposedNames(text)]));
    const recorded = new Set(rules.groups.flatMap((g) => g.rules.flatMap((r) => (r.record ? [r.record] : []))));
    const named = new Map<string, string>();
    for (const group of rules.groups) for (const rule of group.rules) for (const name of metricNames(rule.expr)) named.set(name, rule.record ?? rule.alert!);
    for (const dashboard of dashboards) {
      for (const panel of dashboard.panels) for (const target of panel.targets ?? []) for (const name of metricNames(target.expr)) named.set(name, `${dashboard.title}: ${panel.title}`);
      for (const variable of dashboard.templating.list) {
        const metric = variable.definition ? labelValuesMetric(variable.definition) : null;
        if (metric) for (const name of metricNames(metric)) named.set(name, `${dashboard.title}: $${variable.name}`);
      }
    }
    expect(named.size).to.be.greaterThan(30);
    // Series Prometheus itself adds for every scrape target (the absence alerts select on `up`), never in an exposition.
    const perTarget = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped', 'scrape_samples_post_metric_relabeling', 'scrape_series_added']);
    const missing = [...named].filter(([name]) => (name.includes(':') ? !recorded.has(name) : !exposed.has(name) && !perTarget.has(name)));
    expect(missing, 'named but not exposed').to.deep.equal([]);
  });

  it('evaluates every rule without error, and every recording rule returns data', async function () {
    const groups = await prometheus.rules();
    const all = groups.flatMap((g) => g.rules);
    expect(all.length).to.equal(rules.groups.flatMap((g) => g.rules).length);
    const records = [...new Set(all.filter((r) => r.type === 'recording').map((r) => r.name))];
    const empty = await until(async () => {
      const broken = (await prometheus.rules()).flatMap((g) => g.rules).filter((r) => r.health !== 'ok');
      if (broken.length > 0) throw new Error(`rules failing: ${JSON.stringify(broken)}`);
      const answers = await Promise.all(records.map(async (name) => [name, (await prometheus.query(name)).length] as const));
      const missing = answers.filter(([, n]) => n === 0).map(([name]) => name);
      return missing.length === 0 ? missing : false;
    }, 60_000, 'every recording rule has data').catch(async (error: unknown) => {
      const missing = [];
      for (const name of records) if ((await prometheus.query(name)).length === 0) missing.push(name);
      throw new Error(`${String(error)}: ${missing.join(', ')}`);
    });
    expect(empty).to.deep.equal([]);
  });

  it('answers every dashboard panel query and variable with data', async function () {
    const queries: Array<[string, string]> = [];
    for (const dashboard of dashboards) {
      for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
        expect(panel.targets?.length ?? 0, `${dashboard.title}: ${panel.title}`).to.be.greaterThan(0);
        for (const target of panel.targets!) queries.push([`${dashboard.title}: ${panel.title}`, asGrafanaSends(target.expr)]);
      }
      for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
        queries.push([`${dashboard.title}: $${variable.name}`, asGrafanaSends(labelValuesMetric(variable.definition!)!)]);
      }
    }
    const empty = async (): Promise<string[]> => {
      const out: string[] = [];
      for (const [where, expr] of queries) if ((await prometheus.query(expr)).length === 0) out.push(`${where}: ${expr}`);
      return out;
    };
    await until(async () => (await empty()).length === 0 || false, 60_000, 'every panel has data').catch(async () => {
      expect(await empty(), 'panels without data').to.deep.equal([]);
    });
    expect(queries.length).to.be.greaterThan(60);
  });

  it('raises the alerts the traffic deserves (pending or firing) and keeps the SLO alerts silent', async function () {
    const expected = ['LinkplaneWebhookDeliveryFailures', 'LinkplaneWebhookEndpointsFailing', 'LinkplaneDomainsInError', 'LinkplaneCertificateExpiringSoon'];
    const active = await until(async () => {
      const alerts = await prometheus.alerts();
      return expected.every((name) => alerts.some((a) => a.labels.alertname === name)) ? alerts : false;
    }, 60_000, `alerts ${expected.join(', ')} active`).catch(async (error: unknown) => {
      throw new Error(`${String(error)}; active: ${JSON.stringify(await prometheus.alerts())}`);
    });
    for (const name of expected) {
      const alert = active.find((a) => a.labels.alertname === name)!;
      expect(alert.state).to.be.oneOf(['pending', 'firing']);
      expect(alert.labels.namespace, `${name} names its namespace`).to.equal(NAMESPACE);
    }
    const budget: Sample[] = await prometheus.query('linkplane:slo_error_budget_remaining:ratio30d{slo="redirect-availability"}');
    expect(Number(budget[0]!.value[1]), 'no redirect failed: the whole budget is left').to.equal(1);
    // Availability, not latency: how fast a shared test machine answers is not this test's business.
    const silent = active.filter((a) => /AvailabilityBudgetBurn|OperatorNoLeader|ClicksDropped|ClickIngestionStalled|OutboxBacklogAging/.test(a.labels.alertname!));
    expect(silent).to.deep.equal([]);
  });
});
