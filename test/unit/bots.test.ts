import { expect } from 'chai';
import dns2 from 'dns2';
import { BotVerifier, classifyUserAgent, type BotType } from '../../src/redirect/bots.ts';
import { VisitorProfiler } from '../../src/redirect/visitor.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/platform/logger.ts';

const BOTS: [ua: string, type: BotType, name: string][] = [
  ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'search_bot', 'Googlebot'],
  [
    'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.71 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'search_bot',
    'Googlebot',
  ],
  ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', 'search_bot', 'bingbot'],
  ['Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)', 'search_bot', 'YandexBot'],
  ['Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)', 'search_bot', 'Baiduspider'],
  ['DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)', 'search_bot', 'DuckDuckBot'],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)', 'search_bot', 'Applebot'],
  ['facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)', 'social_preview', 'facebookexternalhit'],
  ['Twitterbot/1.0', 'social_preview', 'Twitterbot'],
  ['LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)', 'social_preview', 'LinkedInBot'],
  ['Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'social_preview', 'Slackbot'],
  ['Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)', 'social_preview', 'Discordbot'],
  ['WhatsApp/2.23.20.0 A', 'social_preview', 'WhatsApp'],
  ['TelegramBot (like TwitterBot)', 'social_preview', 'TelegramBot'],
  // Apple's Messages (iMessage) announces itself as Facebook's and X's crawlers.
  [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0',
    'social_preview',
    'facebookexternalhit',
  ],
  ['Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com', 'social_preview', 'SkypeUriPreview'],
  ['Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)', 'social_preview', 'Bluesky'],
  ['Mozilla/5.0 (compatible; ZulipURLPreview/1.0; +https://zulip.com/)', 'social_preview', 'ZulipURLPreview'],
  ['Synapse (bot; +https://github.com/matrix-org/synapse)', 'social_preview', 'Synapse'],
  ['Misskey/2024.8.0 (https://misskey.example)', 'social_preview', 'Misskey'],
  ['Mozilla/5.0 (compatible; Yahoo Link Preview; https://help.yahoo.com/kb/mail/yahoo-link-preview-SLN23615.html)', 'social_preview', 'Yahoo Link Preview'],
  ['Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)', 'seo_crawler', 'AhrefsBot'],
  ['Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)', 'seo_crawler', 'SemrushBot'],
  ['Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)', 'seo_crawler', 'MJ12bot'],
  ['Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)', 'seo_crawler', 'DotBot'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)', 'ai_crawler', 'GPTBot'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot', 'ai_crawler', 'ChatGPT-User'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)', 'ai_crawler', 'ClaudeBot'],
  ['Claude-User/1.0', 'ai_crawler', 'Claude-User'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)', 'ai_crawler', 'PerplexityBot'],
  ['CCBot/2.0 (https://commoncrawl.org/faq/)', 'ai_crawler', 'CCBot'],
  ['Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)', 'ai_crawler', 'Bytespider'],
  ['meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)', 'ai_crawler', 'meta-externalagent'],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15 (Applebot-Extended/0.1)', 'ai_crawler', 'Applebot-Extended'],
  ['Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)', 'monitoring', 'UptimeRobot'],
  ['Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)', 'monitoring', 'Pingdom'],
  ['Mozilla/5.0 (compatible; StatusCake)', 'monitoring', 'StatusCake'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 DatadogSynthetics', 'monitoring', 'Datadog Synthetics'],
  ['kube-probe/1.29', 'monitoring', 'kube-probe'],
  ['Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)', 'security_scanner', 'Nmap'],
  ['sqlmap/1.7.2#stable (https://sqlmap.org)', 'security_scanner', 'sqlmap'],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 (Nikto/2.5.0)', 'security_scanner', 'Nikto'],
  ['Mozilla/5.0 zgrab/0.x', 'security_scanner', 'zgrab'],
  ['Nuclei - Open-source project (github.com/projectdiscovery/nuclei)', 'security_scanner', 'Nuclei'],
  ['curl/8.4.0', 'library', 'curl'],
  ['Wget/1.21.4', 'library', 'Wget'],
  ['python-requests/2.31.0', 'library', 'python-requests'],
  ['Go-http-client/1.1', 'library', 'Go-http-client'],
  ['okhttp/4.12.0', 'library', 'okhttp'],
  ['axios/1.6.2', 'library', 'axios'],
  ['node-fetch/1.0 (+https://github.com/bitinn/node-fetch)', 'library', 'node-fetch'],
  ['undici', 'library', 'undici'],
  ['Java/17.0.2', 'library', 'Java'],
  ['libwww-perl/6.72', 'library', 'libwww-perl'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.28 Safari/537.36', 'headless', 'HeadlessChrome'],
  ['Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1', 'headless', 'PhantomJS'],
  ['Feedly/1.0 (+http://www.feedly.com/fetcher.html; 3 subscribers; like FeedFetcher-Google)', 'feed_reader', 'Feedly'],
  ['Mozilla/5.0 (Linux) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 (compatible; Inoreader/1.0; https://www.inoreader.com; 12 subscribers)', 'feed_reader', 'Inoreader'],
  ['NewsBlur Feed Fetcher - 5 subscribers - https://www.newsblur.com/site/123 (Mozilla/5.0)', 'feed_reader', 'NewsBlur'],
  ['Mozilla/5.0 (compatible; FooCrawler/1.0; +http://foo.example/bot)', 'automated', 'FooCrawler'],
  ['SomethingSpider/3.0', 'automated', 'SomethingSpider'],
];

/** Browsers, including in-app browsers whose names sound like bots' (Facebook, Instagram, Line, Google app). */
const HUMANS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15',
  'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
  'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 YaBrowser/23.11.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) GSA/292.0.585589000 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0.6099.119 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/121.0 Mobile/15E148 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 309.0.0.40.113',
  'Mozilla/5.0 (Linux; Android 13; SM-S911B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/119.0.6045.163 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/442.0.0.33.113;]',
  'Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36 Line/13.19.1',
  'Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 OPR/106.0.0.0',
];

describe('bot classification', () => {
  for (const [ua, type, name] of BOTS) {
    it(`classifies "${ua.slice(0, 70)}" as ${type} (${name})`, () => {
      const match = classifyUserAgent(ua);
      expect(match, ua).to.not.equal(null);
      expect({ type: match!.type, name: match!.name }).to.deep.equal({ type, name });
    });
  }

  it('covers every bot category with at least two User-Agents', () => {
    const counts = new Map<BotType, number>();
    for (const [, type] of BOTS) counts.set(type, (counts.get(type) ?? 0) + 1);
    const categories: BotType[] = ['search_bot', 'social_preview', 'seo_crawler', 'ai_crawler', 'monitoring', 'security_scanner', 'library', 'headless', 'feed_reader', 'automated'];
    for (const category of categories) expect(counts.get(category) ?? 0, category).to.be.at.least(2);
  });

  for (const ua of HUMANS) {
    it(`never takes the browser "${ua.slice(0, 90)}" for a bot`, () => {
      expect(classifyUserAgent(ua)).to.equal(null);
    });
  }

  it('names the operator family of crawlers that can be verified, and none for those that cannot', () => {
    expect(classifyUserAgent(BOTS[0]![0])!.family).to.equal('google');
    expect(classifyUserAgent('Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)')!.family).to.equal('bing');
    expect(classifyUserAgent('Twitterbot/1.0')!.family).to.equal(null);
    expect(classifyUserAgent('curl/8.4.0')!.family).to.equal(null);
  });
});

/** The reverse-lookup name of an IPv6 address: its 32 nibbles, last first, under ip6.arpa. */
function ip6Arpa(ip: string): string {
  const [head = '', tail = ''] = ip.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const missing = 8 - groups(head).length - groups(tail).length;
  const hex = [...groups(head), ...new Array<string>(missing).fill('0'), ...groups(tail)].map((group) => group.padStart(4, '0')).join('');
  return `${[...hex].reverse().join('.')}.ip6.arpa`;
}

/** A DNS server on loopback answering PTR, A and AAAA from a table, counting the questions it gets. */
async function startDns(records: { ptr: Record<string, string>; a: Record<string, string>; aaaa?: Record<string, string> }) {
  const { Packet } = dns2;
  const questions: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const question = request.questions[0];
      if (question) {
        questions.push(question.name);
        const answer = (record: { domain?: string; address?: string }) =>
          response.answers.push(Packet.createResourceFromQuestion(question, { ttl: 60, ...record }));
        const ptr = records.ptr[question.name];
        const a = records.a[question.name];
        const aaaa = records.aaaa?.[question.name];
        if (question.type === Packet.TYPE.PTR && ptr) answer({ domain: ptr });
        if (question.type === Packet.TYPE.A && a) answer({ address: a });
        if (question.type === Packet.TYPE.AAAA && aaaa) answer({ address: aaaa });
      }
      void send(response);
    },
  });
  await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return { server: `127.0.0.1:${server.addresses().udp!.port}`, questions, close: () => server.close() };
}

describe('bot verification by forward-confirmed reverse DNS', () => {
  let dns: Awaited<ReturnType<typeof startDns>>;
  const verifiers: BotVerifier[] = [];
  const verifier = (options: ConstructorParameters<typeof BotVerifier>[0] = {}) => {
    const created = new BotVerifier({ servers: [dns.server], timeoutMs: 1000, ...options });
    verifiers.push(created);
    return created;
  };

  before(async () => {
    dns = await startDns({
      ptr: {
        '1.66.249.66.in-addr.arpa': 'crawl-66-249-66-1.googlebot.com',
        // Anyone controlling 203.0.113.9 can publish this PTR; the name does not resolve back to it.
        '9.113.0.203.in-addr.arpa': 'crawl-66-249-66-2.googlebot.com',
        '7.40.55.157.in-addr.arpa': 'msnbot-157-55-40-7.search.msn.com',
        [ip6Arpa('2001:4860:8000:1::1')]: 'crawl-v6.googlebot.com',
      },
      a: {
        'crawl-66-249-66-1.googlebot.com': '66.249.66.1',
        'crawl-66-249-66-2.googlebot.com': '66.249.66.2',
        'msnbot-157-55-40-7.search.msn.com': '157.55.40.7',
      },
      aaaa: { 'crawl-v6.googlebot.com': '2001:4860:8000:1::1' },
    });
  });

  after(async () => {
    for (const created of verifiers) created.close();
    await dns.close();
  });

  it('confirms a Googlebot whose PTR name resolves back to its address, after a first unverified answer', async () => {
    const bots = verifier();
    expect(bots.isVerified('66.249.66.1', 'google')).to.equal(false);
    await bots.idle();
    expect(bots.isVerified('66.249.66.1', 'google')).to.equal(true);
    expect(await bots.confirmedHosts('66.249.66.1')).to.deep.equal(['crawl-66-249-66-1.googlebot.com']);
  });

  it('does not confirm a spoofed PTR whose forward lookup gives another address', async () => {
    const bots = verifier();
    expect(bots.isVerified('203.0.113.9', 'google')).to.equal(false);
    await bots.idle();
    expect(bots.isVerified('203.0.113.9', 'google')).to.equal(false);
    expect(dns.questions).to.include('crawl-66-249-66-2.googlebot.com');
  });

  it('does not confirm an address of one operator for another operator\'s claim', async () => {
    const bots = verifier();
    bots.isVerified('157.55.40.7', 'google');
    await bots.idle();
    expect(bots.isVerified('157.55.40.7', 'google')).to.equal(false);
    expect(bots.isVerified('157.55.40.7', 'bing')).to.equal(true);
  });

  it('confirms an IPv6 crawler through its AAAA record', async () => {
    const bots = verifier();
    bots.isVerified('2001:4860:8000:1::1', 'google');
    await bots.idle();
    expect(bots.isVerified('2001:4860:8000:1::1', 'google')).to.equal(true);
  });

  it('treats an address without PTR as unverified and remembers the verdict instead of asking again', async () => {
    const bots = verifier();
    bots.isVerified('198.51.100.20', 'google');
    await bots.idle();
    const asked = dns.questions.filter((name) => name === '20.100.51.198.in-addr.arpa').length;
    expect(bots.isVerified('198.51.100.20', 'google')).to.equal(false);
    await bots.idle();
    expect(dns.questions.filter((name) => name === '20.100.51.198.in-addr.arpa').length).to.equal(asked);
  });

  it('asks again once the verdict has expired', async () => {
    const bots = verifier({ ttlMs: 1000 });
    const start = Date.now();
    bots.isVerified('66.249.66.1', 'google', start);
    await bots.idle();
    expect(bots.isVerified('66.249.66.1', 'google', start + 500)).to.equal(true);
    const before = dns.questions.length;
    expect(bots.isVerified('66.249.66.1', 'google', start + 1500)).to.equal(false);
    await bots.idle();
    expect(dns.questions.length).to.be.greaterThan(before);
    expect(bots.isVerified('66.249.66.1', 'google', start + 1600)).to.equal(true);
  });

  it('marks the profile of a Googlebot verified only once its address is confirmed, never on the User-Agent alone', async () => {
    const bots = verifier();
    const { logger } = createLogger({ level: 'silent', name: 'test' });
    const redirect = loadConfig('redirect', { NODE_ENV: 'test', MONGODB_URI: 'mongodb://db.invalid' }).redirect;
    const profiler = await VisitorProfiler.open({ redirect, secretKey: 'k'.repeat(32), logger, verifyBot: bots });
    const request = (remoteAddress: string) => ({
      headers: { 'user-agent': BOTS[0]![0], 'x-verified-bot': 'true' },
      remoteAddress,
      query: new URLSearchParams(),
      visitorId: 'v1',
      visit: 'first' as const,
      now: new Date(),
    });
    expect(profiler.profile(request('66.249.66.1')).verifiedBot).to.equal(false);
    expect(profiler.profile(request('203.0.113.9')).verifiedBot).to.equal(false);
    await bots.idle();
    const confirmed = profiler.profile(request('66.249.66.1'));
    expect({ visitorType: confirmed.visitorType, verifiedBot: confirmed.verifiedBot, botName: confirmed.botName }).to.deep.equal({
      visitorType: 'search_bot',
      verifiedBot: true,
      botName: 'Googlebot',
    });
    // The edge header is ignored unless TRUST_EDGE_HEADERS is on.
    expect(profiler.profile(request('203.0.113.9')).verifiedBot).to.equal(false);
    profiler.close();
  });
});
