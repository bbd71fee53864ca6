// The chart's NATS cluster settings: every member in NATS_URL, the stream replicas, and a click spool that fits the
// pod's /tmp.
import assert from 'node:assert/strict';
import { configOf, helm, render, CHART } from '../helpers/chart.ts';
import { loadConfig } from '../../src/config/config.ts';

describe('chart: NATS cluster settings', function () {
  this.timeout(120_000);

  it('renders a comma-separated NATS_URL and NATS_REPLICAS that the processes accept', async () => {
    const objects = await render('--set', 'config.natsUrl=nats://nats-0.nats:4222\\, nats://nats-1.nats:4222\\,nats://nats-2.nats:4222', '--set', 'config.natsReplicas=3');
    const data = configOf(objects).data ?? {};
    assert.equal(data.NATS_REPLICAS, '3');
    const config = loadConfig('redirect', { ...data, MONGODB_URI: 'mongodb://db', SECRET_KEY: 'k'.repeat(32) });
    assert.deepEqual(config.nats.servers, ['nats://nats-0.nats:4222', 'nats://nats-1.nats:4222', 'nats://nats-2.nats:4222']);
    assert.equal(config.nats.replicas, 3);
  });

  it('leaves NATS_REPLICAS to the processes by default, and keeps the click spool below the 64Mi /tmp', async () => {
    const data = configOf(await render()).data ?? {};
    assert.equal(data.NATS_REPLICAS, undefined);
    assert.ok(Number(data.CLICK_SPOOL_MAX_MB) < 64, `CLICK_SPOOL_MAX_MB ${data.CLICK_SPOOL_MAX_MB}`);
  });

  it('refuses a NATS_URL list with an entry that is not a NATS URL, and replicas beyond 5', async () => {
    const list = await helm('template', 'x', CHART, '--set', 'config.natsUrl=nats://a:4222\\,http://b:4222');
    assert.notEqual(list.code, 0);
    assert.match(list.stderr, /natsUrl/);
    const replicas = await helm('template', 'x', CHART, '--set', 'config.natsReplicas=7');
    assert.notEqual(replicas.code, 0);
    assert.match(replicas.stderr, /natsReplicas/);
  });
});
