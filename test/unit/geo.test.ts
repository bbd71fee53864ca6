import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reader } from 'maxmind';
import { GeoDatabases, LocalClock, edgeGeo, mergeGeo, type GeoFacts } from '../../src/redirect/geo.ts';
import { VisitorProfiler, type VisitorRequest } from '../../src/redirect/visitor.ts';
import { BotVerifier } from '../../src/redirect/bots.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildMmdb, writeMmdb, type MmdbEntry } from '../helpers/mmdb-writer.ts';
import { AsnRanges, openAsnPaths, openCountryDbPath } from '../../src/redirect/open-geo-data.ts';

const aCity = (country: string, region: string, city: string, timeZone: string) => ({
  country: { iso_code: country, names: { en: country, de: `${country} (de)` } },
  subdivisions: [{ iso_code: 'X', names: { en: region } }],
  city: { geoname_id: 123_456, names: { en: city } },
  location: { latitude: 48.1374, longitude: 11.5755, time_zone: timeZone, accuracy_radius: 20 },
});

const CITY: MmdbEntry[] = [
  { network: '203.0.113.0/24', data: aCity('DE', 'Bavaria', 'Munich', 'Europe/Berlin') },
  { network: '198.51.100.0/24', data: aCity('US', 'California', 'San Francisco', 'America/Los_Angeles') },
  { network: '2001:db8:1::/48', data: aCity('JP', 'Tokyo', 'Tokyo', 'Asia/Tokyo') },
  // Country known, city not: the shape of many GeoLite records.
  { network: '192.0.2.0/24', data: { country: { iso_code: 'FR', names: { en: 'France' } } } },
];
const ASN: MmdbEntry[] = [
  { network: '203.0.113.0/24', data: { autonomous_system_number: 3320, autonomous_system_organization: 'Deutsche Telekom AG' } },
  { network: '198.51.100.0/24', data: { autonomous_system_number: 4_200_000_000, autonomous_system_organization: 'Private use' } },
];
const ANONYMOUS: MmdbEntry[] = [
  { network: '198.51.100.1/32', data: { is_anonymous: true, is_anonymous_vpn: true } },
  { network: '198.51.100.2/32', data: { is_anonymous: true, is_tor_exit_node: true, is_hosting_provider: true } },
  { network: '198.51.100.3/32', data: { is_anonymous: true, is_public_proxy: true } },
  { network: '198.51.100.4/32', data: { is_anonymous: true, is_hosting_provider: true } },
  { network: '198.51.100.5/32', data: { is_anonymous: true, is_residential_proxy: true } },
];

describe('MaxMind DB writer (test helper), read back with the maxmind library', () => {
  for (const recordSize of [24, 28, 32] as const) {
    it(`finds IPv4 and IPv6 networks in an IPv6 tree with ${recordSize}-bit records`, () => {
      const reader = new Reader<Record<string, unknown>>(buildMmdb(CITY, { recordSize }));
      expect(reader.get('203.0.113.77')).to.deep.equal(CITY[0]!.data);
      expect(reader.get('2001:db8:1:ffff::1')).to.deep.equal(CITY[2]!.data);
      expect(reader.get('203.0.114.1')).to.equal(null);
      expect(reader.get('2001:db8:2::1')).to.equal(null);
      expect(reader.metadata.recordSize).to.equal(recordSize);
    });
  }

  it('writes an IPv4-only tree and the metadata readers check', () => {
    const reader = new Reader<Record<string, unknown>>(
      buildMmdb(ASN, { ipVersion: 4, recordSize: 24, databaseType: 'GeoLite2-ASN', buildEpoch: 1_700_000_000 }),
    );
    expect(reader.get('198.51.100.200')).to.deep.equal(ASN[1]!.data);
    expect(reader.metadata).to.include({ ipVersion: 4, databaseType: 'GeoLite2-ASN', binaryFormatMajorVersion: 2, recordSize: 24 });
    expect(reader.metadata.buildEpoch.toISOString()).to.equal('2023-11-14T22:13:20.000Z');
  });

  it('lets a later, narrower network override an earlier one only inside it', () => {
    const reader = new Reader<Record<string, unknown>>(
      buildMmdb([
        { network: '10.0.0.0/8', data: { name: 'wide' } },
        { network: '10.1.2.0/24', data: { name: 'narrow' } },
      ]),
    );
    expect(reader.get('10.1.2.3')).to.deep.equal({ name: 'narrow' });
    expect(reader.get('10.1.3.3')).to.deep.equal({ name: 'wide' });
    expect(reader.get('10.255.0.1')).to.deep.equal({ name: 'wide' });
  });

  it('encodes every value type, and strings past the one- and two-byte size forms', () => {
    const data = {
      short: 'x',
      medium: 'm'.repeat(200),
      long: 'l'.repeat(70_000),
      yes: true,
      no: false,
      zero: 0,
      small: 300,
      large: 3_000_000_000,
      huge: 18_000_000_000_000_000_000n,
      negative: -42,
      ratio: 0.25,
      list: [1, 'two', { three: 3 }],
      nested: { deeper: { deepest: 'ü' } },
    };
    const reader = new Reader<Record<string, unknown>>(buildMmdb([{ network: '192.0.2.0/24', data }]));
    expect(reader.get('192.0.2.1')).to.deep.equal(data);
  });
});

describe('GeoIP databases', () => {
  let dir: string;
  let geo: GeoDatabases;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'linkplane-geo-'));
    await writeMmdb(join(dir, 'city.mmdb'), CITY, { databaseType: 'GeoIP2-City' });
    await writeMmdb(join(dir, 'asn.mmdb'), ASN, { databaseType: 'GeoLite2-ASN', recordSize: 24 });
    await writeMmdb(join(dir, 'anonymous.mmdb'), ANONYMOUS, { databaseType: 'GeoIP2-Anonymous-IP', ipVersion: 4 });
    geo = await GeoDatabases.open({ cityDb: join(dir, 'city.mmdb'), asnDb: join(dir, 'asn.mmdb'), anonymousDb: join(dir, 'anonymous.mmdb') });
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads country, region, city and time zone from the City database and the ASN from the ASN database', () => {
    expect(geo.lookup('203.0.113.10')).to.deep.equal({
      country: 'DE',
      region: 'Bavaria',
      city: 'Munich',
      asn: 3320,
      timezone: 'Europe/Berlin',
      proxyType: null,
    });
    expect(geo.lookup('2001:db8:1::5')).to.include({ country: 'JP', city: 'Tokyo', asn: null });
  });

  it('maps the Anonymous IP flags to proxy types, the strongest claim first', () => {
    const proxyTypes = ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4', '198.51.100.5', '198.51.100.6'].map(
      (ip) => geo.lookup(ip).proxyType,
    );
    expect(proxyTypes).to.deep.equal(['VPN', 'TOR', 'PUB', 'DCH', 'SES', null]);
  });

  it('does not look an IPv6 address up in an IPv4-only database', () => {
    // c633:6401:: begins with the bits of 198.51.100.1, a VPN exit in the IPv4-only Anonymous IP database.
    expect(geo.lookup('c633:6401::1').proxyType).to.equal(null);
  });

  it('knows nothing about an address outside every database, or no address', () => {
    const nothing: GeoFacts = { country: null, region: null, city: null, asn: null, timezone: null, proxyType: null };
    expect(geo.lookup('100.64.0.1')).to.deep.equal(nothing);
    expect(geo.lookup(null)).to.deep.equal(nothing);
  });

  it('answers an address seen before from its cache, the same facts each time, which an edge merge leaves alone', () => {
    const first = geo.lookup('203.0.113.10');
    const again = geo.lookup('203.0.113.10');
    expect(again).to.equal(first);
    expect(Object.isFrozen(again)).to.equal(true);
    const merged = mergeGeo(again, { country: null, region: null, city: null, asn: 64500, timezone: null, proxyType: 'VPN' });
    expect(merged).to.include({ country: 'DE', asn: 3320, proxyType: 'VPN' });
    expect(geo.lookup('203.0.113.10')).to.include({ country: 'DE', asn: 3320, proxyType: null });
    // Other addresses keep their own answers.
    expect(geo.lookup('2001:db8:1::5')).to.include({ country: 'JP', city: 'Tokyo' });
    expect(geo.lookup('198.51.100.2').proxyType).to.equal('TOR');
  });

  it('works with any of the databases missing', async () => {
    const cityOnly = await GeoDatabases.open({ cityDb: join(dir, 'city.mmdb'), asnDb: null, anonymousDb: null });
    expect(cityOnly.lookup('198.51.100.1')).to.include({ country: 'US', asn: null, proxyType: null });
    const none = await GeoDatabases.open({ cityDb: null, asnDb: null, anonymousDb: null });
    expect(none.empty).to.equal(true);
    expect(none.lookup('198.51.100.1').country).to.equal(null);
  });

  describe('in the visitor profile', () => {
    const profilers: VisitorProfiler[] = [];
    const profilerWith = async (env: Record<string, string>) => {
      const redirect = loadConfig('redirect', {
        NODE_ENV: 'test',
        MONGODB_URI: 'mongodb://db.invalid',
        GEOIP_CITY_DB: join(dir, 'city.mmdb'),
        GEOIP_ASN_DB: join(dir, 'asn.mmdb'),
        GEOIP_ANONYMOUS_DB: join(dir, 'anonymous.mmdb'),
        ...env,
      }).redirect;
      const { logger } = createLogger({ level: 'silent', name: 'test' });
      const profiler = await VisitorProfiler.open({ redirect, secretKey: 's'.repeat(32), logger, verifyBot: new BotVerifier({ maxInFlight: 0 }) });
      profilers.push(profiler);
      return profiler;
    };
    const aRequest = (overrides: Partial<VisitorRequest> = {}): VisitorRequest => ({
      headers: {
        'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
        accept: 'text/html',
        'accept-language': 'de-DE,de;q=0.9',
      },
      remoteAddress: '203.0.113.10',
      query: new URLSearchParams(),
      visitorId: 'vis_1',
      visit: 'first',
      now: new Date('2026-03-02T23:30:00Z'),
      ...overrides,
    });

    after(() => {
      for (const profiler of profilers) profiler.close();
    });

    it('places the visitor from the database, with local hour and weekday in its time zone', async () => {
      const profile = (await profilerWith({})).profile(aRequest());
      expect(profile).to.include({ country: 'DE', region: 'Bavaria', city: 'Munich', asn: 3320, timezone: 'Europe/Berlin' });
      // 23:30 UTC on Monday is 00:30 on Tuesday in Berlin.
      expect({ localHour: profile.localHour, weekday: profile.weekday }).to.deep.equal({ localHour: 0, weekday: 2 });
    });

    const anonymised: [ip: string, visitorType: string, proxyType: string, quality: number][] = [
      ['198.51.100.1', 'vpn', 'VPN', 70],
      ['198.51.100.2', 'tor', 'TOR', 30],
      ['198.51.100.3', 'proxy', 'PUB', 45],
      ['198.51.100.4', 'datacenter', 'DCH', 35],
      ['198.51.100.5', 'proxy', 'SES', 45],
    ];
    for (const [ip, visitorType, proxyType, quality] of anonymised) {
      it(`classifies a browser from ${ip} as ${visitorType} (${proxyType})`, async () => {
        const profile = (await profilerWith({})).profile(aRequest({ remoteAddress: ip }));
        expect({ visitorType: profile.visitorType, proxyType: profile.proxyType, quality: profile.quality }).to.deep.equal({ visitorType, proxyType, quality });
      });
    }

    it('keeps a bot in its category when it comes from a datacenter, with the proxy type still reported', async () => {
      const profile = (await profilerWith({})).profile(aRequest({ remoteAddress: '198.51.100.4', headers: { 'user-agent': 'curl/8.4.0' } }));
      expect({ visitorType: profile.visitorType, proxyType: profile.proxyType }).to.deep.equal({ visitorType: 'library', proxyType: 'DCH' });
    });

    const EDGE = {
      'cf-ipcountry': 'CH',
      'cf-region': 'Zurich',
      'cf-ipcity': Buffer.from('Zürich', 'utf8').toString('latin1'),
      'cf-timezone': 'Europe/Zurich',
      'x-geo-asn': 'AS13030',
      'x-proxy-type': 'vpn',
      'x-verified-bot': 'true',
    };

    it('ignores edge headers unless TRUST_EDGE_HEADERS is on', async () => {
      const profile = (await profilerWith({})).profile(aRequest({ remoteAddress: '100.64.0.1', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0', ...EDGE } }));
      expect(profile).to.include({ country: null, city: null, asn: null, timezone: null, proxyType: null, visitorType: 'human', verifiedBot: false });
    });

    it('takes location, ASN, proxy type and a verified bot from trusted edge headers when the database has nothing', async () => {
      const profile = (await profilerWith({ TRUST_EDGE_HEADERS: 'true' })).profile(
        aRequest({ remoteAddress: '100.64.0.1', headers: { 'user-agent': 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', ...EDGE } }),
      );
      expect(profile).to.include({
        country: 'CH',
        region: 'Zurich',
        city: 'Zürich',
        asn: 13030,
        timezone: 'Europe/Zurich',
        proxyType: 'VPN',
        visitorType: 'search_bot',
        verifiedBot: true,
        quality: 50,
      });
    });

    it('prefers the database, and does not mix a header city of another country into its answer', async () => {
      const profiler = await profilerWith({ TRUST_EDGE_HEADERS: 'true' });
      // 192.0.2.0/24 has a country (FR) and nothing else.
      const sameCountry = profiler.profile(aRequest({ remoteAddress: '192.0.2.1', headers: { 'cf-ipcountry': 'FR', 'cf-ipcity': 'Lyon', 'cf-timezone': 'Europe/Paris' } }));
      expect(sameCountry).to.include({ country: 'FR', city: 'Lyon', timezone: 'Europe/Paris' });
      const otherCountry = profiler.profile(aRequest({ remoteAddress: '192.0.2.1', headers: { 'cf-ipcountry': 'CH', 'cf-ipcity': 'Zurich' } }));
      expect(otherCountry).to.include({ country: 'FR', city: null });
      const databaseWins = profiler.profile(aRequest({ remoteAddress: '203.0.113.10', headers: { 'x-geo-country': 'DE', 'x-geo-city': 'Berlin', 'x-geo-asn': '1' } }));
      expect(databaseWins).to.include({ country: 'DE', city: 'Munich', asn: 3320 });
    });
  });
});

describe('edge geo headers', () => {
  it('reads CloudFront headers', () => {
    expect(
      edgeGeo({
        'cloudfront-viewer-country': 'us',
        'cloudfront-viewer-country-region-name': 'Washington',
        'cloudfront-viewer-city': 'Seattle',
        'cloudfront-viewer-time-zone': 'America/Los_Angeles',
        'cloudfront-viewer-asn': '16509',
      }),
    ).to.deep.equal({ country: 'US', region: 'Washington', city: 'Seattle', asn: 16509, timezone: 'America/Los_Angeles', proxyType: null });
  });

  it('prefers the generic X-Geo-* headers over a CDN\'s', () => {
    expect(edgeGeo({ 'x-geo-country': 'NL', 'cf-ipcountry': 'BE', 'x-geo-region': 'North Holland', 'x-geo-timezone': 'Europe/Amsterdam' })).to.include({
      country: 'NL',
      region: 'North Holland',
      timezone: 'Europe/Amsterdam',
    });
  });

  it('treats the unknown (XX) and Tor (T1) placeholders, malformed countries, ASNs and proxy types as absent', () => {
    for (const country of ['XX', 'T1', 'xx', 'USA', '1']) expect(edgeGeo({ 'cf-ipcountry': country }).country, country).to.equal(null);
    for (const asn of ['AS', 'abc', '0', '99999999999']) expect(edgeGeo({ 'x-geo-asn': asn }).asn, asn).to.equal(null);
    expect(edgeGeo({ 'x-geo-asn': 'as64500' }).asn).to.equal(64500);
    expect(edgeGeo({ 'x-proxy-type': 'RES' }).proxyType).to.equal(null);
    expect(edgeGeo({ 'x-proxy-type': 'web' }).proxyType).to.equal('WEB');
  });

  it('merges header facts into database gaps without overriding the database', () => {
    const database: GeoFacts = { country: 'FR', region: null, city: null, asn: null, timezone: null, proxyType: 'DCH' };
    const edge: GeoFacts = { country: 'FR', region: 'Île-de-France', city: 'Paris', asn: 3215, timezone: 'Europe/Paris', proxyType: 'VPN' };
    expect(mergeGeo(database, edge)).to.deep.equal({ ...edge, proxyType: 'DCH' });
  });
});

describe('visitor local clock', () => {
  const clock = new LocalClock();
  const at = (iso: string, zone: string | null) => clock.at(new Date(iso), zone);

  it('gives hour and ISO weekday in UTC without a zone', () => {
    expect(at('2026-03-01T12:15:00Z', null)).to.deep.equal({ localHour: 12, weekday: 7 }); // Sunday
    expect(at('2026-03-02T00:00:00Z', null)).to.deep.equal({ localHour: 0, weekday: 1 }); // Monday
  });

  it('crosses the day boundary in both directions', () => {
    expect(at('2026-03-02T23:30:00Z', 'Asia/Tokyo')).to.deep.equal({ localHour: 8, weekday: 2 });
    expect(at('2026-03-02T03:00:00Z', 'America/Los_Angeles')).to.deep.equal({ localHour: 19, weekday: 7 });
    expect(at('2026-03-01T18:20:00Z', 'Asia/Kathmandu')).to.deep.equal({ localHour: 0, weekday: 1 }); // +05:45
  });

  it('follows daylight saving time on both sides of the change', () => {
    // Europe switches on 2026-03-29 at 01:00 UTC.
    expect(at('2026-03-29T00:59:00Z', 'Europe/Berlin').localHour).to.equal(1);
    expect(at('2026-03-29T01:00:00Z', 'Europe/Berlin').localHour).to.equal(3);
    expect(at('2026-07-01T12:00:00Z', 'Europe/Berlin').localHour).to.equal(14);
    expect(at('2026-12-01T12:00:00Z', 'Europe/Berlin').localHour).to.equal(13);
  });

  it('answers an unknown zone in UTC and reports it as no zone', () => {
    expect(at('2026-03-02T23:30:00Z', 'Mars/Olympus_Mons')).to.deep.equal({ localHour: 23, weekday: 1 });
    expect(clock.validZone('Mars/Olympus_Mons')).to.equal(null);
    expect(clock.validZone('Europe/Berlin')).to.equal('Europe/Berlin');
  });
});

describe('ASN ranges (the packaged open data format)', () => {
  const v4 = [
    '16777216,16777471,13335,"Cloudflare, Inc."', // 1.0.0.0-1.0.0.255
    '134744064,134744319,15169,Google LLC', // 8.8.8.0-8.8.8.255
    'not,a,row',
    '134744100,134744200,64512,Overlapping row, dropped',
    '134744320,134744575,0,AS0 is no network', // 8.8.9.0-8.8.9.255
    '1359103232,1359103487,20712,Andrews & Arnold Ltd', // 81.2.69.0-81.2.69.255
    '',
  ].join('\n');
  const v6 = [
    '2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,15169,Google LLC',
    '2a00:1450::,2a00:1450:ffff:ffff:ffff:ffff:ffff:ffff,15169,Google LLC',
    '2a00:1451::,2a00:1451::ff,64496,A tiny range',
    '2a00:1450:1::,2a00:1450:2::,64512,Unsorted, dropped',
    'zz::,zz::1,1,Malformed',
  ].join('\r\n');
  const ranges = AsnRanges.parse(v4, v6);

  it('keeps the well-formed, sorted rows and drops the rest', () => {
    expect(ranges.size).to.equal(6);
  });

  const cases: [ip: string, asn: number | null][] = [
    ['1.0.0.0', 13335],
    ['1.0.0.255', 13335],
    ['1.0.1.0', null],
    ['8.8.8.8', 15169],
    ['8.8.9.1', null],
    ['81.2.69.142', 20712],
    ['0.0.0.1', null],
    ['255.255.255.255', null],
    ['2001:4860:4860::8888', 15169],
    ['2001:4861::', null],
    ['2a00:1450:4001:82a::200e', 15169],
    ['2a00:1451::ff', 64496],
    ['2a00:1451::100', null],
    ['::ffff:8.8.8.8', 15169],
    ['::1', null],
    ['not an address', null],
  ];
  for (const [ip, asn] of cases) {
    it(`answers ${String(asn)} for ${ip}`, () => {
      expect(ranges.lookup(ip)).to.equal(asn);
    });
  }
});

describe('the packaged open geography data', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'linkplane-geo-open-'));
    await writeMmdb(join(dir, 'city.mmdb'), CITY, { databaseType: 'GeoIP2-City' });
    await writeMmdb(join(dir, 'asn.mmdb'), ASN, { databaseType: 'GeoLite2-ASN', recordSize: 24 });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('ships as dependencies', () => {
    expect(openCountryDbPath()).to.be.a('string');
    expect(openAsnPaths()).to.be.an('object');
  });

  it('places public addresses in their country and network when no database is configured', async () => {
    const geo = await GeoDatabases.open({ cityDb: null, asnDb: null, anonymousDb: null, openData: true });
    expect(geo.sources).to.deep.equal({ country: 'open-data', asn: 'open-data' });
    expect(geo.lookup('8.8.8.8')).to.deep.equal({ country: 'US', region: null, city: null, asn: 15169, timezone: null, proxyType: null });
    expect(geo.lookup('2001:4860:4860::8888')).to.include({ country: 'US', asn: 15169 });
    expect(geo.lookup('81.2.69.142')).to.include({ country: 'GB', asn: 20712 });
    expect(geo.lookup('10.1.2.3')).to.include({ country: null, asn: null });
    // A documentation range the registry data places in a country: reserved, so not looked up.
    expect(geo.lookup('203.0.113.77')).to.include({ country: null, asn: null });
  });

  it('is not used when turned off', async () => {
    const geo = await GeoDatabases.open({ cityDb: null, asnDb: null, anonymousDb: null, openData: false });
    expect(geo.empty).to.equal(true);
    expect(geo.lookup('8.8.8.8').country).to.equal(null);
  });

  it('gives way to a configured database of the same kind, and fills the kind that is not configured', async () => {
    // The test City database places 8.8.8.8 nowhere and 203.0.113.10 in Germany; the open data would say US for the former.
    const cityConfigured = await GeoDatabases.open({ cityDb: join(dir, 'city.mmdb'), asnDb: null, anonymousDb: null, openData: true });
    expect(cityConfigured.sources).to.deep.equal({ country: 'configured', asn: 'open-data' });
    expect(cityConfigured.lookup('8.8.8.8')).to.include({ country: null, asn: 15169 });
    expect(cityConfigured.lookup('203.0.113.10')).to.include({ country: 'DE', city: 'Munich' });
    const asnConfigured = await GeoDatabases.open({ cityDb: null, asnDb: join(dir, 'asn.mmdb'), anonymousDb: null, openData: true });
    expect(asnConfigured.sources).to.deep.equal({ country: 'open-data', asn: 'configured' });
    expect(asnConfigured.lookup('8.8.8.8')).to.include({ country: 'US', asn: null });
    expect(asnConfigured.lookup('203.0.113.10')).to.include({ asn: 3320 });
  });

  it('is on by default and turned off with GEOIP_OPEN_DATA=false', () => {
    const base = { NODE_ENV: 'test', MONGODB_URI: 'mongodb://db.invalid' };
    expect(loadConfig('redirect', base).redirect.geoip.openData).to.equal(true);
    expect(loadConfig('redirect', { ...base, GEOIP_OPEN_DATA: 'false' }).redirect.geoip.openData).to.equal(false);
  });
});
