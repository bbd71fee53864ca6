import { expect } from 'chai';
import { OperatorMetrics } from '../../operator/metrics.ts';
import type { Phase } from '../../operator/domain.ts';

describe('operator metrics', () => {
  function metrics(expiries: () => number[]) {
    return new OperatorMetrics({ phases: () => new Map<Phase, number>([['Error', 2]]), isLeader: () => true, certificateExpiries: expiries });
  }

  it('reports the earliest certificate expiry as one series, and none while no certificate is issued', async () => {
    let expiries: number[] = [];
    const { registry } = metrics(() => expiries);
    const before = await registry.metrics();
    expect(before).to.contain('# TYPE linkplane_operator_certificate_earliest_expiry_timestamp_seconds gauge');
    expect(before).not.to.match(/^linkplane_operator_certificate_earliest_expiry_timestamp_seconds /m);
    expiries = [1_800_000_000, 1_790_000_000.5, 1_795_000_000];
    expect(await registry.metrics()).to.match(/^linkplane_operator_certificate_earliest_expiry_timestamp_seconds 1790000000.5$/m);
  });

  it('starts every reconcile result at 0 and counts phases and leadership at scrape', async () => {
    const text = await metrics(() => []).registry.metrics();
    for (const result of ['success', 'requeue', 'error']) expect(text).to.contain(`linkplane_operator_reconcile_duration_seconds_count{result="${result}"} 0`);
    expect(text).to.contain('linkplane_operator_domains{phase="Error"} 2');
    expect(text).to.contain('linkplane_operator_domains{phase="Active"} 0');
    expect(text).to.match(/^linkplane_operator_leader 1$/m);
  });

  it('exposes no gauge named like a counter (promtool check metrics)', async () => {
    const text = await metrics(() => []).registry.metrics();
    const gauges = [...text.matchAll(/^# TYPE (\S+) gauge$/gm)].map((m) => m[1]!);
    expect(gauges.filter((name) => name.endsWith('_total'))).to.deep.equal([]);
    expect(gauges).to.include('nodejs_active_handles');
  });
});
