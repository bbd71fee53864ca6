import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../config/config.ts';
import type { Logger } from '../platform/logger.ts';
import { Lru } from '../platform/lru.ts';
import { BotVerifier, classifyUserAgent, type BotMatch } from './bots.ts';
import { IpPrivacy, clientIp } from '../platform/client-ip.ts';
import { GeoDatabases, LocalClock, edgeGeo, mergeGeo, type GeoFacts } from './geo.ts';
import { parseUserAgent, type UserAgentFacts } from './user-agent.ts';
import type { ProxyType, VisitorProfile, VisitorType } from '../visitor/visitor-profile.ts';

export interface VisitorRequest {
  headers: IncomingHttpHeaders;
  remoteAddress: string | undefined;
  query: URLSearchParams;
  visitorId: string;
  visit: 'first' | 'repeat';
  now: Date;
}

interface UserAgentEntry extends UserAgentFacts {
  bot: BotMatch | null;
}

/** Distinct User-Agents remembered: real traffic has a few thousand; a client rotating random ones only churns. */
const USER_AGENT_CACHE_MAX = 5_000;
const ACCEPT_LANGUAGE_CACHE_MAX = 2_000;
/** Long enough for every real User-Agent; parsing and matching never see more. */
const USER_AGENT_MAX = 512;
const ACCEPT_LANGUAGE_MAX = 512;
const LANGUAGES_MAX = 20;

/**
 * Computes the visitor profile of a redirect request (DESIGN, decision order step 3). Synchronous and free of I/O:
 * User-Agent parsing and Accept-Language parsing are cached per distinct header value, GeoIP lookups are in-memory,
 * and bot verification by DNS runs in the background (BotVerifier).
 */
export class VisitorProfiler {
  private readonly redirect: Config['redirect'];
  private readonly geo: GeoDatabases;
  private readonly privacy: IpPrivacy;
  private readonly clock = new LocalClock();
  private readonly verifier: BotVerifier;
  private readonly ownsVerifier: boolean;
  private readonly userAgents = new Lru<UserAgentEntry>(USER_AGENT_CACHE_MAX);
  private readonly acceptLanguages = new Lru<readonly string[]>(ACCEPT_LANGUAGE_CACHE_MAX);

  private constructor(redirect: Config['redirect'], geo: GeoDatabases, privacy: IpPrivacy, verifier: BotVerifier, ownsVerifier: boolean) {
    this.redirect = redirect;
    this.geo = geo;
    this.privacy = privacy;
    this.verifier = verifier;
    this.ownsVerifier = ownsVerifier;
  }

  /** Opens the configured GeoIP databases; without `verifyBot`, bots are verified against the system's DNS. */
  static async open(options: { redirect: Config['redirect']; secretKey: string; logger: Logger; verifyBot?: BotVerifier }): Promise<VisitorProfiler> {
    const geo = await GeoDatabases.open(options.redirect.geoip);
    if (geo.empty && !options.redirect.trustEdgeHeaders) {
      options.logger.info('no GeoIP database and edge headers not trusted: country, region, city and ASN stay unknown');
    } else {
      options.logger.info({ geo: geo.sources }, 'GeoIP sources');
    }
    const verifier = options.verifyBot ?? new BotVerifier({ logger: options.logger });
    return new VisitorProfiler(options.redirect, geo, new IpPrivacy(options.redirect.ipStorage, options.secretKey), verifier, !options.verifyBot);
  }

  profile(request: VisitorRequest): VisitorProfile {
    const { headers, now } = request;
    const trustEdge = this.redirect.trustEdgeHeaders;
    const ip = clientIp(headers, request.remoteAddress, this.redirect.trustedProxyHops);
    const userAgent = headers['user-agent'] ?? '';
    const agent = this.userAgent(userAgent);
    const dbGeo = this.geo.lookup(ip);
    const geo: Readonly<GeoFacts> = trustEdge ? mergeGeo(dbGeo, edgeGeo(headers)) : dbGeo;
    const timezone = this.clock.validZone(geo.timezone);
    const { localHour, weekday } = this.clock.at(now, timezone);
    const bot = agent?.bot ?? null;
    const edgeVerified = trustEdge && (isTrue(headers['x-verified-bot']) || isTrue(headers['cf-verified-bot']));
    const family = bot?.family ?? null;
    const verifiedBot = edgeVerified || (family !== null && ip !== null && this.verifier.isVerified(ip, family, now.getTime()));
    const visitorType = visitorTypeOf(agent === null, bot, verifiedBot, geo.proxyType);
    const languages = this.languages(headers['accept-language']);
    return {
      ip,
      ipStored: this.privacy.store(ip, now),
      userAgent,
      device: agent?.device ?? 'desktop',
      os: agent?.os ?? 'other',
      browser: agent?.browser ?? null,
      languages,
      country: geo.country,
      region: geo.region,
      city: geo.city,
      asn: geo.asn,
      timezone,
      localHour,
      weekday,
      visitorType,
      verifiedBot,
      botName: bot?.name ?? null,
      proxyType: geo.proxyType,
      quality: quality(visitorType, verifiedBot, languages.length > 0, headers.accept !== undefined),
      referer: headers.referer ?? null,
      hasUtm: hasUtm(request.query),
      visit: request.visit,
      visitorId: request.visitorId,
    };
  }

  close(): void {
    if (this.ownsVerifier) this.verifier.close();
  }

  /** Null for a missing or blank User-Agent. */
  private userAgent(userAgent: string): UserAgentEntry | null {
    const key = userAgent.length > USER_AGENT_MAX ? userAgent.slice(0, USER_AGENT_MAX) : userAgent;
    if (key.trim() === '') return null;
    let entry = this.userAgents.get(key);
    if (entry === undefined) {
      entry = { ...parseUserAgent(key), bot: classifyUserAgent(key) };
      this.userAgents.set(key, entry);
    }
    return entry;
  }

  private languages(header: string | undefined): string[] {
    if (header === undefined || header === '') return [];
    const key = header.length > ACCEPT_LANGUAGE_MAX ? header.slice(0, ACCEPT_LANGUAGE_MAX) : header;
    let languages = this.acceptLanguages.get(key);
    if (languages === undefined) {
      languages = Object.freeze(parseAcceptLanguage(key));
      this.acceptLanguages.set(key, languages);
    }
    // Shared and frozen: the decision only reads it, and a click record serialises it.
    return languages as string[];
  }
}

/**
 * Bots keep their category whatever network they come from; a browser-like visitor is classified by the network
 * it comes through (the proxy type from the anonymous-IP database or a trusted edge). An identity confirmed by the
 * edge for a User-Agent no pattern knows is `automated`.
 */
function visitorTypeOf(noUserAgent: boolean, bot: BotMatch | null, verifiedBot: boolean, proxyType: ProxyType | null): VisitorType {
  if (bot !== null) return bot.type;
  if (verifiedBot) return 'automated';
  if (noUserAgent) return 'unknown';
  switch (proxyType) {
    case null:
      return 'human';
    case 'DCH':
      return 'datacenter';
    case 'VPN':
      return 'vpn';
    case 'TOR':
      return 'tor';
    case 'PUB':
    case 'WEB':
    case 'SES':
      return 'proxy';
  }
}

/**
 * Quality 0–100: how likely this is a person whose click is worth counting. The visitor type sets the base, and
 * browser-like visitors lose points for what every real browser sends and scripts often omit:
 *
 *   human 100 · vpn 70 · proxy 45 · datacenter 35 · tor 30 · verified bot (any category) 50 ·
 *   search_bot, social_preview, feed_reader, monitoring 25 · ai_crawler, seo_crawler 20 ·
 *   library, automated, unknown (no User-Agent) 10 · headless 5 · security_scanner 0
 *   then, for human, vpn, proxy, datacenter, tor: −20 without Accept-Language, −10 without Accept;
 *   clamped to 0–100.
 *
 * So `quality_below: 50` catches every unverified bot and anonymised traffic lacking browser headers, and
 * `quality_below: 80` also catches clean anonymised traffic, without touching a plain browser.
 */
export function quality(visitorType: VisitorType, verifiedBot: boolean, hasAcceptLanguage: boolean, hasAccept: boolean): number {
  const browserLike = BROWSER_LIKE_BASE[visitorType];
  if (browserLike === undefined) return verifiedBot ? 50 : BOT_BASE[visitorType] ?? 10;
  const score = browserLike - (hasAcceptLanguage ? 0 : 20) - (hasAccept ? 0 : 10);
  return Math.max(0, Math.min(100, score));
}

const BROWSER_LIKE_BASE: Partial<Record<VisitorType, number>> = { human: 100, vpn: 70, proxy: 45, datacenter: 35, tor: 30 };
const BOT_BASE: Partial<Record<VisitorType, number>> = {
  search_bot: 25,
  social_preview: 25,
  feed_reader: 25,
  monitoring: 25,
  ai_crawler: 20,
  seo_crawler: 20,
  library: 10,
  automated: 10,
  unknown: 10,
  headless: 5,
  security_scanner: 0,
};

function isTrue(value: string | string[] | undefined): boolean {
  return typeof value === 'string' && value.trim().toLowerCase() === 'true';
}

function hasUtm(query: URLSearchParams): boolean {
  for (const key of query.keys()) if (key.startsWith('utm_')) return true;
  return false;
}

const LANGUAGE_TAG = /^[a-z]{1,8}(?:-[a-z0-9]{1,8})*$/;

/**
 * Accept-Language tags in preference order: by q-value (default 1), ties keep header order; lower-cased; `*`,
 * malformed tags and q=0 ("not acceptable") dropped; at most 20.
 */
export function parseAcceptLanguage(header: string): string[] {
  const ranked: { tag: string; q: number; index: number }[] = [];
  const text = header.length > ACCEPT_LANGUAGE_MAX ? header.slice(0, ACCEPT_LANGUAGE_MAX) : header;
  for (const item of text.split(',')) {
    const [rawTag, ...params] = item.split(';');
    const tag = rawTag!.trim().toLowerCase();
    if (tag === '*' || !LANGUAGE_TAG.test(tag)) continue;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=');
      if (name?.trim().toLowerCase() === 'q') q = /^\s*(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/.test(value ?? '') ? Number(value) : 0;
    }
    if (q > 0 && !ranked.some((entry) => entry.tag === tag)) ranked.push({ tag, q, index: ranked.length });
  }
  ranked.sort((a, b) => b.q - a.q || a.index - b.index);
  return ranked.slice(0, LANGUAGES_MAX).map((entry) => entry.tag);
}
