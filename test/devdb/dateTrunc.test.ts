import { expect } from 'chai';
import { truncateDate, tzOffset } from '../../src/devdb/dateTrunc.ts';

describe('devdb $dateTrunc arithmetic', () => {
  const at = (iso: string) => new Date(iso);

  it('truncates to the day in a timezone west of UTC', () => {
    expect(truncateDate(at('2024-01-01T02:00:00Z'), 'day', 1, 'America/Los_Angeles', 'sun').toISOString()).to.equal('2023-12-31T08:00:00.000Z');
  });

  it('uses 2000-01-01 as the reference for multi-unit bins', () => {
    expect(truncateDate(at('2000-01-04T12:00:00Z'), 'day', 2, 'UTC', 'sun').toISOString()).to.equal('2000-01-03T00:00:00.000Z');
    expect(truncateDate(at('2024-05-17T00:00:00Z'), 'month', 3, 'UTC', 'sun').toISOString()).to.equal('2024-04-01T00:00:00.000Z');
    expect(truncateDate(at('1999-12-31T23:59:00Z'), 'hour', 5, 'UTC', 'sun').toISOString()).to.equal('1999-12-31T19:00:00.000Z');
  });

  it('reads fixed offsets and IANA names', () => {
    expect(tzOffset('-08:00', 0)).to.equal(-8 * 3_600_000);
    expect(tzOffset('+0530', 0)).to.equal(5.5 * 3_600_000);
    expect(tzOffset('Europe/Paris', Date.UTC(2024, 6, 1))).to.equal(2 * 3_600_000);
  });
});
