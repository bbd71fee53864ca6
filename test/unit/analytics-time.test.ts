import { expect } from 'chai';
import { GRAIN_MS, canonicalZone, decompose, isoInZone, nextPeriod, periodStart, zonedTime } from '../../src/analytics/time.ts';
import { timeBuckets, autoGranularity } from '../../src/analytics/analytics.service.ts';
import { ValidationError } from '../../src/platform/errors.ts';

const at = (iso: string) => Date.parse(iso);
const H = 3_600_000;

describe('analytics time zones and rollup buckets', () => {
  it('finds local midnights across DST changes, and 23- and 25-hour days in New York', () => {
    const zone = 'America/New_York';
    expect(new Date(zonedTime(zone, 2026, 2, 8)).toISOString()).to.equal('2026-03-08T05:00:00.000Z');
    expect(zonedTime(zone, 2026, 2, 9) - zonedTime(zone, 2026, 2, 8)).to.equal(23 * H);
    expect(zonedTime(zone, 2026, 10, 2) - zonedTime(zone, 2026, 10, 1)).to.equal(25 * H);
    expect(isoInZone(at('2026-03-08T05:00:00Z'), zone)).to.equal('2026-03-08T00:00:00-05:00');
    expect(isoInZone(at('2026-03-09T04:00:00Z'), zone)).to.equal('2026-03-09T00:00:00-04:00');
  });

  it('handles half- and quarter-hour offsets (Kolkata +5:30, Kathmandu +5:45)', () => {
    expect(new Date(zonedTime('Asia/Kolkata', 2026, 0, 15)).toISOString()).to.equal('2026-01-14T18:30:00.000Z');
    expect(new Date(zonedTime('Asia/Kathmandu', 2026, 0, 15)).toISOString()).to.equal('2026-01-14T18:15:00.000Z');
    expect(isoInZone(at('2026-01-14T18:15:00Z'), 'Asia/Kathmandu')).to.equal('2026-01-15T00:00:00+05:45');
    expect(new Date(periodStart(at('2026-01-14T19:10:00Z'), 'Asia/Kolkata', 'hour')).toISOString()).to.equal('2026-01-14T18:30:00.000Z');
  });

  it('writes the seconds of instants read one after the other in the same minute, across a DST change, in UTC and before 1970', () => {
    const zone = 'America/New_York';
    expect(isoInZone(at('2026-11-01T05:59:07.250Z'), zone)).to.equal('2026-11-01T01:59:07-04:00');
    expect(isoInZone(at('2026-11-01T05:59:59.999Z'), zone)).to.equal('2026-11-01T01:59:59-04:00');
    // One minute later the same wall-clock hour comes again, an hour behind UTC.
    expect(isoInZone(at('2026-11-01T06:00:00Z'), zone)).to.equal('2026-11-01T01:00:00-05:00');
    expect(isoInZone(at('2026-11-01T06:00:42Z'), zone)).to.equal('2026-11-01T01:00:42-05:00');
    expect(isoInZone(at('2026-11-01T06:00:05Z'), 'UTC')).to.equal('2026-11-01T06:00:05Z');
    expect(isoInZone(at('1969-12-31T23:59:58.500Z'), 'UTC')).to.equal('1969-12-31T23:59:58Z');
    expect(isoInZone(at('1969-12-31T23:59:03Z'), 'UTC')).to.equal('1969-12-31T23:59:03Z');
  });

  it('starts ISO weeks on Monday and months on the 1st, in the zone', () => {
    const zone = 'America/New_York';
    const sunday = at('2026-03-08T12:00:00Z');
    expect(isoInZone(periodStart(sunday, zone, 'week'), zone)).to.equal('2026-03-02T00:00:00-05:00');
    expect(isoInZone(nextPeriod(periodStart(sunday, zone, 'week'), zone, 'week'), zone)).to.equal('2026-03-09T00:00:00-04:00');
    expect(isoInZone(periodStart(sunday, zone, 'month'), zone)).to.equal('2026-03-01T00:00:00-05:00');
  });

  it('cuts a range into the largest UTC buckets it wholly contains', () => {
    const runs = decompose(at('2026-01-14T18:30:00Z'), at('2026-01-17T18:30:00Z'));
    expect(runs.map((r) => [r.grain, new Date(r.from).toISOString(), new Date(r.to).toISOString()])).to.deep.equal([
      ['q', '2026-01-14T18:30:00.000Z', '2026-01-14T19:00:00.000Z'],
      ['h', '2026-01-14T19:00:00.000Z', '2026-01-15T00:00:00.000Z'],
      ['d', '2026-01-15T00:00:00.000Z', '2026-01-17T00:00:00.000Z'],
      ['s', '2026-01-17T00:00:00.000Z', '2026-01-17T18:00:00.000Z'],
      ['q', '2026-01-17T18:00:00.000Z', '2026-01-17T18:30:00.000Z'],
    ]);
    // A New York day (05:00 to 05:00 UTC): an hour, three quarter-days, five hours.
    expect(decompose(at('2026-01-14T05:00:00Z'), at('2026-01-15T05:00:00Z')).map((r) => [r.grain, (r.to - r.from) / H])).to.deep.equal([
      ['h', 1],
      ['s', 18],
      ['h', 5],
    ]);
    // Every run lies on its grain, and the runs tile the range.
    for (let i = 0; i < 200; i++) {
      const from = at('2026-01-01T00:00:00Z') + Math.floor(Math.random() * 4000) * 900_000;
      const to = from + Math.floor(Math.random() * 1000) * 900_000;
      const cut = decompose(from, to);
      let at_ = from;
      for (const run of cut) {
        expect(run.from, `${from} ${to}`).to.equal(at_);
        expect(run.from % GRAIN_MS[run.grain] + (run.to % GRAIN_MS[run.grain])).to.equal(0);
        at_ = run.to;
      }
      expect(at_).to.equal(to);
    }
    expect(decompose(at('2026-01-14T10:15:00Z'), at('2026-01-14T10:45:00Z')).map((r) => r.grain)).to.deep.equal(['q']);
    expect(decompose(at('2026-01-14T10:00:00Z'), at('2026-01-14T10:00:00Z'))).to.deep.equal([]);
  });

  it('makes zero-filled buckets cut by the range, and refuses more than 1,000', () => {
    const zone = 'America/New_York';
    const days = timeBuckets(at('2026-03-07T05:00:00Z'), at('2026-03-10T04:00:00Z'), zone, 'day', 'granularity');
    expect(days.map((b) => (b.end - b.start) / H)).to.deep.equal([24, 23, 24]);
    const cut = timeBuckets(at('2026-03-07T12:00:00Z'), at('2026-03-08T10:00:00Z'), zone, 'day', 'granularity');
    expect(cut.map((b) => [isoInZone(b.start, zone), isoInZone(b.end, zone)])).to.deep.equal([
      ['2026-03-07T07:00:00-05:00', '2026-03-08T00:00:00-05:00'],
      ['2026-03-08T00:00:00-05:00', '2026-03-08T06:00:00-04:00'],
    ]);
    expect(() => timeBuckets(at('2026-01-01T00:00:00Z'), at('2026-03-01T00:00:00Z'), 'UTC', 'hour', 'granularity'))
      .to.throw(ValidationError)
      .with.property('details')
      .that.deep.equals([{ path: 'granularity', message: 'the range holds more than 1000 hour buckets; choose a coarser granularity or a shorter range' }]);
    expect(autoGranularity(24 * H)).to.equal('hour');
    expect(autoGranularity(30 * 24 * H)).to.equal('day');
    expect(autoGranularity(365 * 24 * H)).to.equal('month');
  });

  it('knows IANA zone names and no others', () => {
    expect(canonicalZone('Asia/Kathmandu')).to.equal('Asia/Kathmandu');
    expect(canonicalZone('america/new_york')).to.equal('America/New_York');
    expect(canonicalZone('Mars/Olympus')).to.equal(null);
    expect(canonicalZone('')).to.equal(null);
    // Asked again (answered from the names kept): the same answers.
    expect([canonicalZone('america/new_york'), canonicalZone('Mars/Olympus'), canonicalZone('Asia/Kathmandu')]).to.deep.equal(['America/New_York', null, 'Asia/Kathmandu']);
  });
});
