import { Resolver } from 'node:dns/promises';
import { isIPv4 } from 'node:net';
import { isbotMatch } from 'isbot';
import type { Logger } from '../platform/logger.ts';
import { normalizeIp } from '../platform/client-ip.ts';
import type { VisitorType } from '../visitor/visitor-profile.ts';

export type BotType = Exclude<VisitorType, 'human' | 'datacenter' | 'proxy' | 'vpn' | 'tor' | 'unknown'>;

/** Operators whose crawlers can be confirmed by forward-confirmed reverse DNS, and the domains their hosts live in. */
export const VERIFIABLE_DOMAINS = {
  google: ['googlebot.com', 'google.com'],
  bing: ['search.msn.com'],
  apple: ['applebot.apple.com'],
  duckduckgo: ['duckduckgo.com'],
  yandex: ['yandex.ru', 'yandex.net', 'yandex.com'],
  baidu: ['baidu.com', 'baidu.jp'],
  yahoo: ['crawl.yahoo.net'],
  amazon: ['crawl.amazonbot.amazon'],
  petal: ['petalsearch.com'],
} as const satisfies Record<string, readonly string[]>;

export type BotFamily = keyof typeof VERIFIABLE_DOMAINS;

export interface BotMatch {
  type: BotType;
  /** Our name for the bot ("Googlebot"), or the token the generic detector matched. */
  name: string;
  /** Set when the operator publishes a way to confirm its crawlers (see BotVerifier). */
  family: BotFamily | null;
}

interface BotEntry {
  name: string;
  /** A case-insensitive regular expression source without capturing groups. */
  pattern: string;
  type: BotType;
  family?: BotFamily;
}

const entries = (type: BotType, list: [name: string, pattern?: string, family?: BotFamily][]): BotEntry[] =>
  list.map(([name, pattern, family]) => ({ name, pattern: pattern ?? escape(name), type, ...(family ? { family } : {}) }));

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/**
 * Our categories on top of `isbot` (which only says "automated or not"). A User-Agent is matched against all
 * patterns in one pass; the left-most match wins and, at the same position, the earlier entry: so more specific
 * names come first ("Applebot-Extended" before "Applebot", "AdsBot-Google" before "Google"). Patterns are tokens no
 * browser sends (in-app browsers such as Instagram, FBAV or Line stay human).
 */
const TABLE: BotEntry[] = [
  ...entries('ai_crawler', [
    ['GPTBot'],
    ['ChatGPT-User'],
    ['OAI-SearchBot'],
    ['ClaudeBot'],
    ['Claude-User'],
    ['Claude-SearchBot'],
    ['anthropic-ai'],
    ['PerplexityBot'],
    ['Perplexity-User'],
    ['CCBot'],
    ['Google-Extended'],
    ['Applebot-Extended'],
    ['Bytespider'],
    ['Amazonbot', undefined, 'amazon'],
    ['meta-externalagent'],
    ['meta-externalfetcher'],
    ['cohere-ai'],
    ['Diffbot'],
    ['YouBot'],
    ['MistralAI-User'],
    ['DuckAssistBot'],
    ['Timpibot'],
    ['ImagesiftBot'],
  ]),
  ...entries('search_bot', [
    ['AdsBot-Google', 'AdsBot-Google(?:-Mobile)?', 'google'],
    ['Mediapartners-Google', undefined, 'google'],
    ['Storebot-Google', undefined, 'google'],
    ['Google-InspectionTool', undefined, 'google'],
    ['GoogleOther', undefined, 'google'],
    ['Googlebot', 'Googlebot(?:-Image|-News|-Video)?', 'google'],
    ['bingbot', undefined, 'bing'],
    ['BingPreview', undefined, 'bing'],
    ['msnbot', undefined, 'bing'],
    ['YandexBot', 'Yandex(?:Bot|Images|Mobile\\w*|Video|Accessibility\\w*|RenderResources\\w*|Metrika)', 'yandex'],
    ['Baiduspider', 'Baiduspider(?:-\\w+)?', 'baidu'],
    ['DuckDuckBot', 'DuckDuckBot|DuckDuckGo-Favicons-Bot', 'duckduckgo'],
    ['Applebot', undefined, 'apple'],
    ['Yahoo! Slurp', 'Yahoo! Slurp', 'yahoo'],
    ['PetalBot', undefined, 'petal'],
    ['SeznamBot'],
    ['Sogou', 'Sogou (?:web|inst|Pic) spider'],
    ['Qwantbot', 'Qwant(?:bot|ify)'],
    ['MojeekBot'],
    ['coccocbot', 'coccocbot(?:-\\w+)?'],
    ['Yeti', 'Yeti/\\d'],
    ['Exabot'],
  ]),
  // Crawlers that fetch a page to draw a link card in a feed or a chat (the redirect answers them with the link's
  // preview: src/redirect/preview-page.ts). Where the tokens come from: each operator's own documentation of its
  // crawler (Meta's "The Facebook Crawler", X's Cards "Troubleshooting", LinkedIn's Post Inspector help, Slack's
  // "Unfurling links", Discord's embed docs, Telegram's and Bluesky's link-preview notes, Pinterest's, Reddit's and
  // VK's crawler pages, Zulip's and Matrix Synapse's source), and the User-Agents those crawlers were seen sending.
  // Messengers without a crawler of their own borrow one: Apple's Messages (iMessage) sends
  // "… facebookexternalhit/1.1 Facebot Twitterbot/1.0", Signal sends "WhatsApp/2", Instagram, Threads and LINE send
  // facebookexternalhit, Microsoft Teams and Skype send SkypeUriPreview: the tokens below catch them under those
  // names. In-app browsers (Instagram, FBAV, Line, Viber's) are people, and stay human.
  ...entries('social_preview', [
    ['facebookexternalhit'],
    ['facebookcatalog'],
    ['Facebot'],
    ['TelegramBot'],
    ['Twitterbot'],
    ['LinkedInBot'],
    ['Slackbot', 'Slackbot(?:-LinkExpanding)?|Slack-ImgProxy'],
    ['Discordbot'],
    ['WhatsApp', 'WhatsApp/\\d'],
    ['SkypeUriPreview'],
    ['redditbot'],
    ['Pinterestbot', 'Pinterest(?:bot)?/\\d'],
    ['Embedly'],
    ['Iframely'],
    ['vkShare'],
    ['Mastodon', 'Mastodon/\\d'],
    ['Bluesky', 'Bluesky Cardyb'],
    ['kakaotalk-scrap'],
    ['Snap URL Preview', 'Snap URL Preview Service'],
    ['MicrosoftPreview'],
    ['Google-PageRenderer'],
    ['Yahoo Link Preview'],
    ['FlipboardProxy'],
    ['XING-contenttabreceiver'],
    ['Quora Link Preview'],
    ['ZulipURLPreview'],
    ['Synapse', 'Synapse \\(bot;'],
    ['Pleroma', 'Pleroma \\d'],
    ['Akkoma', 'Akkoma \\d'],
    ['Misskey', 'Misskey/\\d'],
  ]),
  ...entries('seo_crawler', [
    ['AhrefsBot', 'AhrefsBot|AhrefsSiteAudit'],
    ['SemrushBot', 'SemrushBot(?:-\\w+)?|SiteAuditBot'],
    ['MJ12bot'],
    ['DotBot'],
    ['rogerbot'],
    ['BLEXBot'],
    ['DataForSeoBot'],
    ['serpstatbot'],
    ['SEOkicks'],
    ['Screaming Frog SEO Spider'],
    ['Sitebulb'],
    ['MegaIndex', 'MegaIndex\\.ru'],
    ['Barkrowler'],
    ['linkdexbot'],
    ['Lumar', 'Lumar|DeepCrawl'],
    ['SiteCheckerBot', 'SiteCheckerBot(?:Crawler)?'],
  ]),
  ...entries('monitoring', [
    ['UptimeRobot'],
    ['Pingdom', 'Pingdom\\.com_bot|PingdomPageSpeed'],
    ['StatusCake'],
    ['Datadog Synthetics', 'Datadog(?:Synthetics|/Synthetics| Agent)'],
    ['Site24x7'],
    ['BetterUptime', 'Better ?Uptime|Better Stack'],
    ['Uptime Kuma', 'Uptime-?Kuma'],
    ['NewRelicPinger'],
    ['Checkly', 'Checkly/'],
    ['Freshping'],
    ['HetrixTools'],
    ['Catchpoint'],
    ['GoogleStackdriverMonitoring'],
    ['kube-probe'],
    ['Blackbox Exporter'],
    ['check_http', 'check_http/'],
    ['Zabbix'],
  ]),
  ...entries('security_scanner', [
    ['Nessus'],
    ['Nuclei', 'Nuclei - Open-source|projectdiscovery/nuclei'],
    ['sqlmap', 'sqlmap/'],
    ['Nikto'],
    ['zgrab', 'zgrab\\d?'],
    ['masscan'],
    ['Qualys'],
    ['Nmap', 'Nmap Scripting Engine'],
    ['Acunetix'],
    ['WPScan'],
    ['OpenVAS'],
    ['Burp Suite', 'Burp ?Suite|Burp Collaborator'],
    ['CensysInspect'],
    ['Expanse', 'Expanse, a Palo Alto Networks company'],
    ['Detectify'],
    ['gobuster', 'gobuster/'],
    ['ffuf', 'Fuzz Faster U Fool'],
  ]),
  ...entries('headless', [
    ['HeadlessChrome', 'Headless ?Chrome'],
    ['PhantomJS'],
    ['Puppeteer'],
    ['Playwright'],
    ['Selenium'],
    ['Chrome-Lighthouse'],
    ['SlimerJS'],
    ['jsdom', 'jsdom/'],
    ['Cypress', 'Cypress/'],
  ]),
  ...entries('feed_reader', [
    ['Feedly', 'Feedly(?:Bot)?/'],
    ['Inoreader'],
    ['NewsBlur'],
    ['FeedFetcher-Google', 'Feedfetcher-Google'],
    ['Feedbin'],
    ['Tiny Tiny RSS'],
    ['FreshRSS'],
    ['The Old Reader', 'theoldreader'],
    ['Miniflux'],
    ['NetNewsWire'],
    ['Feedspot'],
    ['FeedBurner'],
  ]),
  ...entries('library', [
    ['curl', 'curl/|libcurl'],
    ['Wget'],
    ['python-requests'],
    ['python-urllib', 'Python-urllib'],
    ['python-httpx'],
    ['aiohttp'],
    ['Go-http-client'],
    ['okhttp'],
    ['Apache-HttpClient'],
    ['Java-http-client'],
    ['Java', 'Java/\\d'],
    ['axios', 'axios/'],
    ['node-fetch'],
    ['undici'],
    ['got', 'got \\(https://github\\.com/sindresorhus/got\\)'],
    ['libwww-perl'],
    ['PHP', 'PHP/\\d'],
    ['GuzzleHttp'],
    ['Faraday', 'Faraday v\\d'],
    ['Ruby'],
    ['HTTPie'],
    ['PostmanRuntime'],
    ['insomnia', 'insomnia/'],
    ['Deno', 'Deno/\\d'],
    ['Bun', 'Bun/\\d'],
    ['Dart', 'Dart/\\d'],
    ['reqwest'],
    ['RestSharp'],
    ['Scrapy'],
    ['Python', 'Python/\\d'],
  ]),
];

const COMBINED = new RegExp(TABLE.map((entry) => `(${entry.pattern})`).join('|'), 'i');
const MAX_NAME = 60;

/**
 * What kind of automation a User-Agent announces, or null for a browser. Our table names the bot and its category;
 * anything else `isbot` recognises is `automated`, named after the token it matched. Runs once per distinct
 * User-Agent (the caller caches), never per request.
 */
export function classifyUserAgent(userAgent: string): BotMatch | null {
  const match = COMBINED.exec(userAgent);
  if (match) {
    for (let group = 1; group < match.length; group++) {
      if (match[group] === undefined) continue;
      const entry = TABLE[group - 1]!;
      return { type: entry.type, name: entry.name, family: entry.family ?? null };
    }
  }
  const token = isbotMatch(userAgent);
  if (token === null) return null;
  return { type: 'automated', name: botNameOf(token), family: null };
}

/** "FooCrawler/1.0;" → "FooCrawler": the token without version and punctuation. */
function botNameOf(token: string): string {
  const name = token.split(/[/;(]/, 1)[0]!.trim();
  return (name === '' ? token.trim() : name).slice(0, MAX_NAME);
}

export interface BotVerifierOptions {
  /** DNS servers ("127.0.0.1:5353"); default: the system's. */
  servers?: string[];
  /** Per query. */
  timeoutMs?: number;
  /** How long a verdict (confirmed or not) is kept. */
  ttlMs?: number;
  /** How long a DNS failure (timeout, refused) is kept before the address is tried again. */
  failureTtlMs?: number;
  /** Addresses remembered; the oldest is forgotten first. */
  maxEntries?: number;
  /** Checks running at once; claims beyond it are not checked now (and stay unverified) rather than queued. */
  maxInFlight?: number;
  logger?: Logger;
}

interface Verdict {
  /** Forward-confirmed host names of the address under a verifiable domain; null while the check runs. */
  hosts: readonly string[] | null;
  expiresAt: number;
}

const ALL_DOMAINS: readonly string[] = Object.values(VERIFIABLE_DOMAINS).flat();
const MAX_NAMES_CHECKED = 3;

/**
 * Confirms a crawler's claimed identity the way search engines document it: reverse DNS of the address gives a
 * host name under the operator's domain, and that name resolves forward to the same address (a PTR record alone
 * can be set by whoever owns the address block). The check is asynchronous and cached per address; the request
 * that triggers it, and any while it runs, count as unverified, so a redirect never waits on DNS.
 */
export class BotVerifier {
  private readonly resolver: Resolver;
  private readonly ttlMs: number;
  private readonly failureTtlMs: number;
  private readonly maxEntries: number;
  private readonly maxInFlight: number;
  private readonly logger: Logger | null;
  private readonly verdicts = new Map<string, Verdict>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(options: BotVerifierOptions = {}) {
    this.resolver = new Resolver({ timeout: options.timeoutMs ?? 2000, tries: 2 });
    if (options.servers) this.resolver.setServers(options.servers);
    this.ttlMs = options.ttlMs ?? 6 * 3_600_000;
    this.failureTtlMs = options.failureTtlMs ?? 60_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxInFlight = options.maxInFlight ?? 32;
    this.logger = options.logger ?? null;
  }

  /** True only when the address is confirmed for the family; otherwise false, and a check starts if none is known. */
  isVerified(ip: string, family: BotFamily, nowMs: number = Date.now()): boolean {
    const verdict = this.verdicts.get(ip);
    if (verdict && verdict.expiresAt > nowMs) {
      return verdict.hosts !== null && verdict.hosts.some((host) => underDomains(host, VERIFIABLE_DOMAINS[family]));
    }
    this.start(ip, nowMs);
    return false;
  }

  /** Resolves when every running check has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  close(): void {
    this.closed = true;
    this.resolver.cancel();
  }

  /** The address's PTR names under a verifiable domain that resolve back to it. */
  async confirmedHosts(ip: string): Promise<string[]> {
    const names = await this.resolver.reverse(ip);
    const candidates = names.map((name) => name.toLowerCase().replace(/\.$/, '')).filter((name) => underDomains(name, ALL_DOMAINS));
    const confirmed: string[] = [];
    for (const name of candidates.slice(0, MAX_NAMES_CHECKED)) {
      const addresses = await (isIPv4(ip) ? this.resolver.resolve4(name) : this.resolver.resolve6(name)).catch(() => [] as string[]);
      if (addresses.some((address) => normalizeIp(address) === ip)) confirmed.push(name);
    }
    return confirmed;
  }

  private start(ip: string, nowMs: number): void {
    if (this.closed || this.running.size >= this.maxInFlight) return;
    this.remember(ip, { hosts: null, expiresAt: Number.POSITIVE_INFINITY });
    const check = this.confirmedHosts(ip).then(
      (hosts) => this.remember(ip, { hosts, expiresAt: nowMs + this.ttlMs }),
      (error: unknown) => {
        const code = (error as { code?: string }).code;
        // No PTR record at all is an answer, not a failure.
        const answered = code === 'ENOTFOUND' || code === 'ENODATA';
        // The address is not logged: visitor IPs are kept in the clear nowhere.
        if (!answered) this.logger?.debug({ code }, 'bot verification lookup failed');
        this.remember(ip, { hosts: [], expiresAt: nowMs + (answered ? this.ttlMs : this.failureTtlMs) });
      },
    );
    const tracked = check.finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  private remember(ip: string, verdict: Verdict): void {
    this.verdicts.delete(ip);
    if (this.verdicts.size >= this.maxEntries) {
      const oldest = this.verdicts.keys().next().value;
      if (oldest !== undefined) this.verdicts.delete(oldest);
    }
    this.verdicts.set(ip, verdict);
  }
}

function underDomains(host: string, domains: readonly string[]): boolean {
  return domains.some((domain) => host === domain || host.endsWith(`.${domain}`));
}
