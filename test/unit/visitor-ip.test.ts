import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { IpPrivacy, clientIp, normalizeIp, truncateIp } from '../../src/platform/client-ip.ts';

describe('visitor client IP', () => {
  const cases: [name: string, xff: string | undefined, socket: string | undefined, hops: number, expected: string | null][] = [
    ['the socket address without trusted proxies', '198.51.100.7', '203.0.113.5', 0, '203.0.113.5'],
    ['the right-most entry behind one proxy', '198.51.100.7, 192.0.2.1', '10.0.0.2', 1, '192.0.2.1'],
    ['the second entry from the right behind two proxies', '6.6.6.6, 198.51.100.7, 10.0.0.9', '10.0.0.2', 2, '198.51.100.7'],
    ['the left-most entry when the header has fewer entries than hops', '198.51.100.7', '10.0.0.2', 3, '198.51.100.7'],
    ['the socket address when a trusted proxy sent no header', undefined, '203.0.113.5', 1, '203.0.113.5'],
    ['IPv4 out of an IPv4-mapped socket address', undefined, '::ffff:203.0.113.5', 0, '203.0.113.5'],
    ['IPv4 out of an IPv4-mapped forwarded address', '::FFFF:198.51.100.7', '10.0.0.2', 1, '198.51.100.7'],
    ['IPv6 in its canonical form', '2001:DB8:0:0:0:0:0:1', '10.0.0.2', 1, '2001:db8::1'],
    ['an address without the port a proxy added', '198.51.100.7:51234', '10.0.0.2', 1, '198.51.100.7'],
    ['a bracketed IPv6 address without its port', '[2001:db8::7]:443', '10.0.0.2', 1, '2001:db8::7'],
    ['nothing for a forged, malformed entry at the trusted position', 'not-an-ip', '10.0.0.2', 1, null],
    ['nothing for an empty entry', '198.51.100.7, ', '10.0.0.2', 1, null],
    ['nothing without a socket address', undefined, undefined, 0, null],
  ];
  for (const [name, xff, socket, hops, expected] of cases) {
    it(`takes ${name}`, () => {
      const headers = xff === undefined ? {} : { 'x-forwarded-for': xff };
      expect(clientIp(headers, socket, hops)).to.equal(expected);
    });
  }

  it('ignores X-Forwarded-For entries a client wrote left of the trusted hops', () => {
    expect(clientIp({ 'x-forwarded-for': '1.1.1.1, 2.2.2.2, 198.51.100.7' }, '10.0.0.2', 1)).to.equal('198.51.100.7');
  });

  it('refuses IPv4 shorthands no proxy writes', () => {
    for (const text of ['127.1', '0x7f000001', '01.2.3.4', '256.1.1.1', '']) expect(normalizeIp(text), text).to.equal(null);
  });
});

describe('visitor IP storage', () => {
  const SECRET = 'a-secret-key-of-at-least-32-characters';
  const MONDAY = new Date('2026-03-02T08:00:00Z');
  const MONDAY_NIGHT = new Date('2026-03-02T23:59:59Z');
  const TUESDAY = new Date('2026-03-03T00:00:01Z');

  it('truncates IPv4 to its /24 and IPv6 to its /48', () => {
    const privacy = new IpPrivacy('truncate', SECRET);
    expect(privacy.store('203.0.113.77', MONDAY)).to.equal('203.0.113.0');
    expect(privacy.store('2001:db8:1:2:3:4:5:6', MONDAY)).to.equal('2001:db8:1::');
    expect(truncateIp('2001:db8:abcd:ffff::1')).to.equal('2001:db8:abcd::');
  });

  it('hashes with a key of the day: 32 hex characters, equal within a UTC day, different the next day', () => {
    const privacy = new IpPrivacy('hash', SECRET);
    const monday = privacy.store('203.0.113.77', MONDAY);
    expect(monday).to.match(/^[0-9a-f]{32}$/);
    expect(privacy.store('203.0.113.77', MONDAY_NIGHT)).to.equal(monday);
    expect(privacy.store('203.0.113.78', MONDAY)).to.not.equal(monday);
    expect(privacy.store('203.0.113.77', TUESDAY)).to.not.equal(monday);
  });

  it('derives the hash from the secret key, so it cannot be recomputed without it', () => {
    const dayKey = createHmac('sha256', SECRET).update('linkplane/ip-hash/2026-03-02').digest();
    const expected = createHmac('sha256', dayKey).update('203.0.113.77').digest('hex').slice(0, 32);
    expect(new IpPrivacy('hash', SECRET).store('203.0.113.77', MONDAY)).to.equal(expected);
    expect(new IpPrivacy('hash', `${SECRET}-other`).store('203.0.113.77', MONDAY)).to.not.equal(expected);
  });

  it('keeps nothing with `none`, and nothing for an unknown address', () => {
    expect(new IpPrivacy('none', SECRET).store('203.0.113.77', MONDAY)).to.equal(null);
    expect(new IpPrivacy('truncate', SECRET).store(null, MONDAY)).to.equal(null);
    expect(new IpPrivacy('hash', SECRET).store(null, MONDAY)).to.equal(null);
  });
});
