import { expect } from 'chai';
import { RequestDurationHistogram } from '../../src/platform/metrics.ts';

/** count and sum of one series, from the histogram's own values. */
async function countAndSum(h: RequestDurationHistogram, method: string, route: string, status: string): Promise<[number | undefined, number | undefined]> {
  const { values } = await h.get();
  const of = (metric: string) =>
    values.find((v) => v.metricName === metric && v.labels.method === method && v.labels.route === route && v.labels.status === status)?.value;
  return [of('http_request_duration_seconds_count'), of('http_request_duration_seconds_sum')];
}

describe('request duration histogram', () => {
  it('keeps each method, route and status apart, in runs and interleaved, and forgets all on reset', async () => {
    const h = new RequestDurationHistogram();
    h.observe('GET', 'redirect', 302, 0.001);
    h.observe('GET', 'redirect', 302, 0.002);
    h.observe('GET', 'redirect', 404, 0.5);
    h.observe('GET', 'redirect', 302, 0.003);
    h.observe('HEAD', 'redirect', 302, 0.004);
    h.observe('GET', '/v1/links', 302, 0.005);
    h.observe('GET', 'redirect', 302, 0.006);
    const [count, sum] = await countAndSum(h, 'GET', 'redirect', '302');
    expect(count).to.equal(4);
    expect(sum).to.be.closeTo(0.012, 1e-9);
    expect(await countAndSum(h, 'GET', 'redirect', '404')).to.deep.equal([1, 0.5]);
    expect(await countAndSum(h, 'HEAD', 'redirect', '302')).to.deep.equal([1, 0.004]);
    expect(await countAndSum(h, 'GET', '/v1/links', '302')).to.deep.equal([1, 0.005]);
    // le buckets are cumulative: of the four GET 302s, 0.001 and 0.002 fall at or below 0.0025.
    const { values } = await h.get();
    const le = values.find((v) => v.metricName === 'http_request_duration_seconds_bucket' && v.labels.status === '302' && v.labels.method === 'GET' && v.labels.route === 'redirect' && v.labels.le === 0.0025);
    expect(le?.value).to.equal(2);

    h.reset();
    expect(await countAndSum(h, 'GET', 'redirect', '302')).to.deep.equal([undefined, undefined]);
    h.observe('GET', 'redirect', 302, 0.25);
    expect(await countAndSum(h, 'GET', 'redirect', '302')).to.deep.equal([1, 0.25]);
  });
});
