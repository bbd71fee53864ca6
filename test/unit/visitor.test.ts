import { expect } from 'chai';
import { parseUserAgent, type UserAgentFacts } from '../../src/redirect/user-agent.ts';
import { VisitorProfiler, parseAcceptLanguage, quality, type VisitorRequest } from '../../src/redirect/visitor.ts';
import { BotVerifier } from '../../src/redirect/bots.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/platform/logger.ts';

const UA = {
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  androidPhone: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36',
  androidTablet: 'Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  androidReducedTablet: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  androidReducedPhone: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
  windowsChrome: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  macSafari: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15',
  linuxFirefox: 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
  ubuntuFirefox: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
  chromeOs: 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
};

describe('visitor User-Agent parsing', () => {
  const cases: [name: string, ua: string, expected: UserAgentFacts][] = [
    ['iPhone Safari', UA.iphone, { device: 'mobile', os: 'ios', browser: 'Mobile Safari' }],
    ['iPad Safari (iPadOS)', UA.ipad, { device: 'tablet', os: 'ios', browser: 'Mobile Safari' }],
    ['Android phone Chrome', UA.androidPhone, { device: 'mobile', os: 'android', browser: 'Chrome' }],
    ['Android tablet Chrome', UA.androidTablet, { device: 'tablet', os: 'android', browser: 'Chrome' }],
    ['reduced Android UA without "Mobile"', UA.androidReducedTablet, { device: 'tablet', os: 'android', browser: 'Chrome' }],
    ['reduced Android UA with "Mobile"', UA.androidReducedPhone, { device: 'mobile', os: 'android', browser: 'Chrome' }],
    ['Windows Chrome', UA.windowsChrome, { device: 'desktop', os: 'windows', browser: 'Chrome' }],
    ['macOS Safari', UA.macSafari, { device: 'desktop', os: 'macos', browser: 'Safari' }],
    ['Linux Firefox', UA.linuxFirefox, { device: 'desktop', os: 'linux', browser: 'Firefox' }],
    ['Ubuntu Firefox', UA.ubuntuFirefox, { device: 'desktop', os: 'linux', browser: 'Firefox' }],
    ['Chrome OS', UA.chromeOs, { device: 'desktop', os: 'other', browser: 'Chrome' }],
    ['a library', 'curl/8.4.0', { device: 'desktop', os: 'other', browser: null }],
    ['gibberish', 'zzz', { device: 'desktop', os: 'other', browser: null }],
  ];
  for (const [name, ua, expected] of cases) {
    it(`reads ${name} as ${expected.device} / ${expected.os} / ${expected.browser}`, () => {
      expect(parseUserAgent(ua)).to.deep.equal(expected);
    });
  }
});

describe('visitor Accept-Language', () => {
  const cases: [header: string, expected: string[]][] = [
    ['fr-CA,fr;q=0.9,en;q=0.8', ['fr-ca', 'fr', 'en']],
    ['en;q=0.5, de-DE, fr;q=0.8', ['de-de', 'fr', 'en']],
    ['da, en-GB;q=0.8, en;q=0.7, *;q=0.1', ['da', 'en-gb', 'en']],
    ['es;q=0.8, pt;q=0.8, it', ['it', 'es', 'pt']],
    ['de;q=0, nl', ['nl']],
    ['en;q=2, fr;q=abc, sv', ['sv']],
    ['EN-us, en-US', ['en-us']],
    ['<script>, en', ['en']],
    ['zh-Hant-TW, zh;q=0.9', ['zh-hant-tw', 'zh']],
    ['', []],
  ];
  for (const [header, expected] of cases) {
    it(`orders "${header}" as [${expected.join(', ')}]`, () => {
      expect(parseAcceptLanguage(header)).to.deep.equal(expected);
    });
  }

  it('keeps at most 20 languages', () => {
    const header = Array.from({ length: 30 }, (_, i) => `l${String.fromCharCode(97 + (i % 26))}${i >= 26 ? 'x' : ''};q=0.${String(99 - i).padStart(2, '0')}`).join(',');
    const languages = parseAcceptLanguage(header);
    expect(languages).to.have.length(20);
    expect(languages[0]).to.equal('la');
  });
});

describe('visitor quality', () => {
  it('scores a plain browser 100 and takes points off for missing browser headers', () => {
    expect(quality('human', false, true, true)).to.equal(100);
    expect(quality('human', false, false, true)).to.equal(80);
    expect(quality('human', false, false, false)).to.equal(70);
    expect(quality('datacenter', false, false, false)).to.equal(5);
  });

  it('puts verified bots in the middle and unverified automation low', () => {
    expect(quality('search_bot', true, false, false)).to.equal(50);
    expect(quality('search_bot', false, false, false)).to.equal(25);
    expect(quality('library', false, true, true)).to.equal(10);
    expect(quality('headless', false, true, true)).to.equal(5);
    expect(quality('security_scanner', false, true, true)).to.equal(0);
    expect(quality('unknown', false, false, false)).to.equal(10);
  });
});

describe('visitor profile', () => {
  const profilers: VisitorProfiler[] = [];
  const aProfiler = async (env: Record<string, string> = {}) => {
    const redirect = loadConfig('redirect', { NODE_ENV: 'test', MONGODB_URI: 'mongodb://db.invalid', ...env }).redirect;
    const { logger } = createLogger({ level: 'silent', name: 'test' });
    const profiler = await VisitorProfiler.open({ redirect, secretKey: 'z'.repeat(32), logger, verifyBot: new BotVerifier({ maxInFlight: 0 }) });
    profilers.push(profiler);
    return profiler;
  };
  const aRequest = (overrides: Partial<VisitorRequest> = {}): VisitorRequest => ({
    headers: { 'user-agent': UA.iphone, accept: 'text/html', 'accept-language': 'fr-CA,fr;q=0.9,en;q=0.8' },
    remoteAddress: '::ffff:203.0.113.77',
    query: new URLSearchParams('a=1'),
    visitorId: 'vis_abc',
    visit: 'repeat',
    now: new Date('2026-03-02T10:15:00Z'),
    ...overrides,
  });

  after(() => {
    for (const profiler of profilers) profiler.close();
  });

  it('profiles a browser visit from its request', async () => {
    const profile = (await aProfiler()).profile(aRequest({ headers: { ...aRequest().headers, referer: 'https://news.example/item' } }));
    expect(profile).to.deep.equal({
      ip: '203.0.113.77',
      ipStored: '203.0.113.0',
      userAgent: UA.iphone,
      device: 'mobile',
      os: 'ios',
      browser: 'Mobile Safari',
      languages: ['fr-ca', 'fr', 'en'],
      country: null,
      region: null,
      city: null,
      asn: null,
      timezone: null,
      localHour: 10,
      weekday: 1,
      visitorType: 'human',
      verifiedBot: false,
      botName: null,
      proxyType: null,
      quality: 100,
      referer: 'https://news.example/item',
      hasUtm: false,
      visit: 'repeat',
      visitorId: 'vis_abc',
    });
  });

  it('sees a utm_* parameter anywhere in the query', async () => {
    const profiler = await aProfiler();
    expect(profiler.profile(aRequest({ query: new URLSearchParams('x=1&utm_campaign=spring') })).hasUtm).to.equal(true);
    expect(profiler.profile(aRequest({ query: new URLSearchParams('utm=1&xutm_source=a') })).hasUtm).to.equal(false);
  });

  it('calls a request without User-Agent unknown, with a low quality', async () => {
    const profile = (await aProfiler()).profile(aRequest({ headers: {} }));
    expect(profile).to.include({ userAgent: '', visitorType: 'unknown', device: 'desktop', os: 'other', browser: null, quality: 10 });
    expect(profile.languages).to.deep.equal([]);
  });

  it('classifies a bot, names it and gives it a bot quality', async () => {
    const profile = (await aProfiler()).profile(aRequest({ headers: { 'user-agent': 'Twitterbot/1.0' } }));
    expect(profile).to.include({ visitorType: 'social_preview', botName: 'Twitterbot', verifiedBot: false, quality: 25 });
  });

  it('gives the same answer for a User-Agent served from its cache', async () => {
    const profiler = await aProfiler();
    const first = profiler.profile(aRequest({ headers: { 'user-agent': UA.androidTablet } }));
    const second = profiler.profile(aRequest({ headers: { 'user-agent': UA.androidTablet } }));
    expect(second).to.deep.equal(first);
    expect(second).to.include({ device: 'tablet', os: 'android' });
  });

  it('keeps the address per IP_STORAGE and takes it from X-Forwarded-For per TRUSTED_PROXY_HOPS', async () => {
    const request = aRequest({ headers: { 'user-agent': UA.iphone, 'x-forwarded-for': '6.6.6.6, 2001:db8:aa:bb::1' }, remoteAddress: '10.0.0.2' });
    const hashed = (await aProfiler({ IP_STORAGE: 'hash', TRUSTED_PROXY_HOPS: '1' })).profile(request);
    expect(hashed.ip).to.equal('2001:db8:aa:bb::1');
    expect(hashed.ipStored).to.match(/^[0-9a-f]{32}$/);
    const none = (await aProfiler({ IP_STORAGE: 'none', TRUSTED_PROXY_HOPS: '1' })).profile(request);
    expect({ ip: none.ip, ipStored: none.ipStored }).to.deep.equal({ ip: '2001:db8:aa:bb::1', ipStored: null });
    const direct = (await aProfiler()).profile(request);
    expect({ ip: direct.ip, ipStored: direct.ipStored }).to.deep.equal({ ip: '10.0.0.2', ipStored: '10.0.0.0' });
  });

  it('computes local hour and weekday in the time zone a trusted edge gives, across midnight', async () => {
    const profiler = await aProfiler({ TRUST_EDGE_HEADERS: 'true' });
    const late = new Date('2026-03-01T23:30:00Z'); // Sunday in UTC
    const tokyo = profiler.profile(aRequest({ now: late, headers: { 'user-agent': UA.iphone, 'x-geo-timezone': 'Asia/Tokyo' } }));
    expect({ timezone: tokyo.timezone, localHour: tokyo.localHour, weekday: tokyo.weekday }).to.deep.equal({ timezone: 'Asia/Tokyo', localHour: 8, weekday: 1 });
    const bogus = profiler.profile(aRequest({ now: late, headers: { 'user-agent': UA.iphone, 'x-geo-timezone': 'Nowhere/Land' } }));
    expect({ timezone: bogus.timezone, localHour: bogus.localHour, weekday: bogus.weekday }).to.deep.equal({ timezone: null, localHour: 23, weekday: 7 });
  });

  it('calls an edge-verified visitor with a browser User-Agent automated, and a headless browser headless', async () => {
    const profiler = await aProfiler({ TRUST_EDGE_HEADERS: 'true' });
    const verified = profiler.profile(aRequest({ headers: { 'user-agent': UA.windowsChrome, 'cf-verified-bot': 'true' } }));
    expect(verified).to.include({ visitorType: 'automated', verifiedBot: true, quality: 50 });
    const headless = profiler.profile(
      aRequest({ headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36' } }),
    );
    expect(headless).to.include({ visitorType: 'headless', botName: 'HeadlessChrome', quality: 5, os: 'linux' });
  });
});
