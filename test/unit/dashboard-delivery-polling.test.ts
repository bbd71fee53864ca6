// The webhook delivery log polls while more attempts are coming, and stops once none is.
import { expect } from 'chai';
import { moreAttemptsComing } from '../../web/src/screens/webhooks/delivery-polling.ts';

describe('dashboard delivery log polling', () => {
  const now = Date.parse('2026-11-24T12:00:00Z');

  it('goes on while an attempt is pending or a retry is due later', () => {
    expect(moreAttemptsComing([{ outcome: 'pending', next_retry_at: null }], now)).to.equal(true);
    expect(moreAttemptsComing([{ outcome: 'failed', next_retry_at: '2026-11-24T12:01:00Z' }], now)).to.equal(true);
  });

  it('stops when the only retry times shown are those of attempts already retried', () => {
    const log = [
      { outcome: 'failed' as const, next_retry_at: null },
      { outcome: 'failed' as const, next_retry_at: '2026-11-24T11:59:00Z' },
      { outcome: 'succeeded' as const, next_retry_at: null },
    ];
    expect(moreAttemptsComing(log, now)).to.equal(false);
  });
});
