// The Prometheus rules the chart ships, checked by promtool (Debian's `prometheus` package): the file is valid,
// every alert has unit tests that fire it and keep it silent (test/prometheus/alerts.test.yaml), every runbook
// link lands on a section of docs/runbooks.md, and the file is what scripts/monitoring generates.
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { load } from 'js-yaml';
import { RULES_FILE, stale } from '../../scripts/monitoring/generate.ts';
import { RUNBOOK_URL } from '../../scripts/monitoring/rules.ts';
import { promtool } from '../helpers/prometheus.ts';
import { ROOT } from '../helpers/processes.ts';

const UNIT_TESTS = path.join(ROOT, 'test/prometheus/alerts.test.yaml');

interface Rule { record?: string; alert?: string; expr: string; labels?: Record<string, string>; annotations?: Record<string, string> }
interface UnitTests {
  rule_files: string[];
  tests: Array<{ name: string; alert_rule_test?: Array<{ alertname: string; exp_alerts: Array<{ exp_labels: Record<string, string> }> }> }>;
}

describe('Prometheus rules (promtool)', function () {
  this.timeout(60_000);
  let rules: Rule[];
  let unitTests: UnitTests;

  before(async () => {
    rules = (load(await readFile(RULES_FILE, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((g) => g.rules);
    unitTests = load(await readFile(UNIT_TESTS, 'utf8')) as UnitTests;
  });

  it('are what scripts/monitoring/generate.ts writes (rules and dashboards)', async () => {
    expect(await stale()).to.deep.equal([]);
  });

  it('pass promtool check rules', async () => {
    const { code, output } = await promtool(['check', 'rules', RULES_FILE]);
    expect(code, output).to.equal(0);
    expect(output).to.match(/SUCCESS: \d+ rules found/);
  });

  it('pass their promtool unit tests', async () => {
    expect(path.resolve(path.dirname(UNIT_TESTS), unitTests.rule_files[0]!)).to.equal(RULES_FILE);
    const { code, output } = await promtool(['test', 'rules', UNIT_TESTS]);
    expect(code, output).to.equal(0);
    expect(output).to.contain('SUCCESS');
  });

  it('has unit tests that fire every alert at each of its severities, and that keep it silent on healthy series', () => {
    const cases = unitTests.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const rule of rules.filter((r) => r.alert)) {
      const mine = cases.filter((c) => c.alertname === rule.alert);
      const fired = mine.flatMap((c) => c.exp_alerts.map((a) => a.exp_labels.severity));
      expect(fired, `${rule.alert} fires at ${rule.labels!.severity}`).to.include(rule.labels!.severity);
      expect(mine.some((c) => c.exp_alerts.length === 0), `${rule.alert} has a silent case`).to.equal(true);
    }
  });

  it('give every alert a severity, a summary, a description and a runbook section that exists', async () => {
    const runbooks = await readFile(path.join(ROOT, 'docs/runbooks.md'), 'utf8');
    const anchors = new Set([...runbooks.matchAll(/^## (.+)$/gm)].map((m) => m[1]!.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-')));
    for (const rule of rules.filter((r) => r.alert)) {
      expect(rule.labels?.severity, rule.alert).to.be.oneOf(['critical', 'warning', 'info']);
      expect(rule.annotations?.summary, rule.alert).to.be.a('string').and.not.empty;
      expect(rule.annotations?.description, rule.alert).to.contain('{{ $labels.namespace }}');
      const url = rule.annotations?.runbook_url ?? '';
      expect(url.startsWith(`${RUNBOOK_URL}#`), url).to.equal(true);
      expect(anchors.has(url.split('#')[1]!), `docs/runbooks.md has a section for ${rule.alert}`).to.equal(true);
    }
  });

  it('define each recording rule once', () => {
    const records = rules.flatMap((r) => (r.record ? [`${r.record}${JSON.stringify(r.labels ?? {})}`] : []));
    expect(new Set(records).size).to.equal(records.length);
  });
});
