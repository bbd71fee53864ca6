import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/config.ts';
import type { AccessLog, Logger } from '../platform/logger.ts';
import type { InFlight } from '../platform/http-server.ts';
import type { RequestDurationHistogram } from '../platform/metrics.ts';
import type { LinkDoc } from '../links/link.store.ts';
import { RESERVED_SLUGS } from '../links/link.schemas.ts';
import { verifyPassword } from '../platform/password.ts';
import type { ClickRecord } from '../visitor/click-record.ts';
import type { ClickIds } from '../clicks/click-id.ts';
import type { ClickPublisher } from '../clicks/publisher.ts';
import type { RotatorCounters } from '../clicks/counters.ts';
import type { Outcome } from './outcome.ts';
import type { VisitorProfile } from '../visitor/visitor-profile.ts';
import type { VisitorProfiler } from './visitor.ts';
import { decide, type Decision } from './decide.ts';
import type { LinkResolver, ResolvedLink } from './resolver.ts';
import type { CompiledWorkspace } from './compile.ts';
import type { RedirectMetrics, RedirectOutcomeLabel } from './redirect.metrics.ts';
import { VerificationSlots, type PasswordAttempts } from '../platform/password-attempts.ts';
import { SignedTokens } from './signed-token.ts';
import { readCookies, setCookie } from './cookies.ts';
import { actionPage, appLauncherPage, disabledPage, errorResponse, gonePage, notFoundResponse, passwordPage, suspendedPage, unlockedPage, warnPage, type PageResponse } from './pages.ts';
import { clientIp } from '../platform/client-ip.ts';
import { previewPage } from './preview-page.ts';
import { DEFAULT_DOMAIN_ID } from '../links/domains.ts';

const SLUG = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
const RESERVED: ReadonlySet<string> = new Set(RESERVED_SLUGS);
const VISITOR_COOKIE = 'lp_vid';
const SEEN_COOKIE = 'lp_seen';
const SEEN_MAX = 40;
const YEAR_SECONDS = 365 * 86_400;
const AB_STICKY_SECONDS = 30 * 86_400;
const ACK_PARAM = 'lp_ack';
const ACK_TTL_SECONDS = 600;
const PASSWORD_BODY_LIMIT = 4096;
const NOT_FOUND = notFoundResponse();
const ERROR = errorResponse();

export interface RedirectDeps {
  config: Config;
  logger: Logger;
  resolver: LinkResolver;
  profiler: VisitorProfiler;
  clickIds: ClickIds;
  clicks: ClickPublisher;
  counters: RotatorCounters;
  attempts: PasswordAttempts;
  metrics: RedirectMetrics;
  /** The request log line. */
  access: AccessLog;
  /** Log visits recorded as clicks too (REDIRECT_ACCESS_LOG_CLICKS); otherwise their click is their record. */
  accessLogClicks: boolean;
  requestDuration: RequestDurationHistogram;
}

/** The short token a link is remembered by in the "seen" cookie (first or repeat visit). */
function seenToken(linkId: string): string {
  return linkId.slice(-6);
}

/**
 * Serves a short link: resolve (cache first), profile the visitor once, decide (rules, password, targeting, mobile,
 * A/B, rotator), answer, then hand the click to the publisher, which never makes the answer wait. Everything a
 * redirect needs after the first request for a link is in memory: the hot path does no I/O of its own.
 */
export class RedirectHandler {
  private readonly d: RedirectDeps;
  private readonly passwordTokens: SignedTokens;
  /** Password checks at once in this process: at most 4 per link and 2 per visitor (each is a scrypt derivation). */
  private readonly verifications = new VerificationSlots({ perLink: 4, perVisitor: 2 });
  private readonly ackTokens: SignedTokens;
  /** Round-robin position per link, in this process (DecisionState.nextRoundRobin). */
  private readonly roundRobin = new Map<string, number>();
  private readonly nextRoundRobin = (linkId: string, eligible: number): number => {
    const n = this.roundRobin.get(linkId) ?? 0;
    this.roundRobin.set(linkId, n + 1);
    return n % eligible;
  };
  private readonly secureCookies: boolean;
  private readonly requestIdPrefix = randomBytes(6).toString('base64url');
  private requestCounter = 0;
  /** Visitor ids: unique across processes (a random prefix each) and cheap; a visitor id only keeps choices sticky. */
  private readonly visitorIdPrefix = randomBytes(12).toString('base64url');
  private visitorCounter = 0;
  /** Thousands of redirects share a millisecond: its Date and ISO string are made once. */
  private lastNow = 0;
  private lastDate = new Date(0);
  private lastIso: string | null = null;

  constructor(deps: RedirectDeps) {
    this.d = deps;
    this.passwordTokens = new SignedTokens(deps.config.secretKey, 'password');
    this.ackTokens = new SignedTokens(deps.config.secretKey, 'continue');
    this.secureCookies = deps.config.shortLinkBaseUrl.startsWith('https:');
  }

  /**
   * The request listener of the redirect process. A short link is served right here, on node:http: the hot path
   * costs what a redirect costs and not a framework's context per request. Anything else (operations endpoints,
   * unknown paths) goes to `rest`, the Koa app. Request log, duration histogram and in-flight accounting are
   * done here for links, as `observe` does them for the Koa side.
   */
  listener(rest: (req: IncomingMessage, res: ServerResponse) => void, inFlight: InFlight): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      let slug = q === -1 ? url.slice(1) : url.slice(1, q);
      if (slug.endsWith('/')) slug = slug.slice(0, -1);
      if (!SLUG.test(slug) || RESERVED.has(slug)) {
        rest(req, res);
        return;
      }
      const start = performance.now();
      inFlight.active++;
      const done = (status: number) => {
        inFlight.active--;
        const ms = performance.now() - start;
        this.d.requestDuration.observe(req.method ?? 'GET', 'redirect', status, ms / 1000);
        // A successful GET is recorded as a click (id, time, link, outcome, visitor, decision): a log line beside it
        // would repeat it at about a sixth of the redirect's throughput. Everything else is logged.
        if (this.d.accessLogClicks || req.method !== 'GET' || status >= 400) {
          this.d.access(this.nextRequestId(), req.method ?? 'GET', 'redirect', status, Math.round(ms * 100) / 100);
        }
      };
      let status: number | Promise<number>;
      try {
        const method = req.method;
        if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
          res.writeHead(405, { Allow: 'GET, HEAD, POST', 'Content-Length': '0' });
          res.end();
          status = 405;
        } else {
          status = this.serve(req, res, slug, q === -1 ? '' : url.slice(q + 1));
        }
      } catch (error) {
        status = this.failed(res, error);
      }
      if (typeof status === 'number') done(status);
      else status.then(done, (error: unknown) => done(this.failed(res, error)));
    };
  }

  private newVisitorId(): string {
    return `${this.visitorIdPrefix}${(++this.visitorCounter).toString(36)}`;
  }

  private dateOf(now: number): Date {
    if (now !== this.lastNow) {
      this.lastNow = now;
      this.lastDate = new Date(now);
      this.lastIso = null;
    }
    return this.lastDate;
  }

  private isoOf(at: Date): string {
    if (at !== this.lastDate) return at.toISOString();
    return (this.lastIso ??= at.toISOString());
  }

  private nextRequestId(): string {
    return `${this.requestIdPrefix}-${(++this.requestCounter).toString(36)}`;
  }

  private failed(res: ServerResponse, error: unknown): number {
    this.d.logger.error({ err: error }, 'redirect failed');
    this.d.metrics.outcome('error');
    if (!res.headersSent) {
      this.write(res, ERROR, []);
    } else {
      res.destroy();
    }
    return 500;
  }

  /** Synchronous when the link and its workspace are cached (the hot path allocates no promise). */
  private serve(req: IncomingMessage, res: ServerResponse, slug: string, rawQuery: string): number | Promise<number> {
    const now = Date.now();
    const host = (req.headers.host ?? '').toLowerCase();
    const { resolver } = this.d;
    const resolved = resolver.peek(host, slug, now);
    if (resolved === undefined) return this.serveCold(req, res, host, slug, rawQuery, now);
    this.d.metrics.cacheLookup(resolved === null ? 'negative_hit' : 'hit');
    if (resolved === null) return this.notFound(res);
    const workspace = resolver.peekWorkspace(resolved.link.workspace_id, now);
    if (workspace === undefined || req.method === 'POST') return this.serveCold(req, res, host, slug, rawQuery, now, resolved);
    return this.visit(req, res, resolved, workspace, slug, rawQuery, now);
  }

  private async serveCold(
    req: IncomingMessage,
    res: ServerResponse,
    host: string,
    slug: string,
    rawQuery: string,
    now: number,
    cached?: ResolvedLink,
  ): Promise<number> {
    const { resolver } = this.d;
    let resolved: ResolvedLink | null = cached ?? null;
    if (!cached) {
      resolved = await resolver.load(host, slug);
      this.d.metrics.cacheLookup('miss');
    }
    if (resolved === null) return this.notFound(res);
    const workspace = resolver.peekWorkspace(resolved.link.workspace_id, now) ?? (await resolver.loadWorkspace(resolved.link.workspace_id));
    if (req.method === 'POST') return this.submitPassword(req, res, resolved, slug, rawQuery, now);
    return this.visit(req, res, resolved, workspace, slug, rawQuery, now);
  }

  private visit(
    req: IncomingMessage,
    res: ServerResponse,
    resolved: ResolvedLink,
    workspace: CompiledWorkspace | null,
    slug: string,
    rawQuery: string,
    now: number,
  ): number {
    const { link } = resolved;
    // A partner's suspended client, when the partner answers its links with a page: no decision, no click.
    if (workspace?.suspended === true) return this.page(res, suspendedPage(), [], 'suspended');
    // An abuse report resolved against the link comes before everything else: disabled, or a warning first.
    const moderation = link.moderation;
    if (moderation) {
      if (moderation.state === 'disabled') return this.page(res, disabledPage(), [], 'blocked');
      if (!this.ackTokens.valid(new URLSearchParams(rawQuery).get(ACK_PARAM), link._id, now)) {
        const page = warnPage({ destination: link.url, continueUrl: this.continueUrl(link, slug, rawQuery), reportedAs: moderation.reason });
        return this.page(res, page, [], 'interstitial');
      }
    }
    const cookies = readCookies(req.headers.cookie);
    const setCookies: string[] = [];
    let visitorId = cookies.get(VISITOR_COOKIE);
    if (visitorId === undefined || !/^[A-Za-z0-9_-]{16,40}$/.test(visitorId)) {
      visitorId = this.newVisitorId();
      setCookies.push(setCookie(VISITOR_COOKIE, visitorId, { maxAgeSeconds: YEAR_SECONDS, secure: this.secureCookies }));
    }
    const seen = cookies.get(SEEN_COOKIE);
    const token = seenToken(link._id);
    const repeat = seen !== undefined && seen.split('.').includes(token);
    if (!repeat) {
      const kept = seen ? seen.split('.').filter((t) => /^[A-Za-z0-9]{6}$/.test(t)).slice(-(SEEN_MAX - 1)) : [];
      kept.push(token);
      setCookies.push(setCookie(SEEN_COOKIE, kept.join('.'), { maxAgeSeconds: YEAR_SECONDS, secure: this.secureCookies }));
    }

    const query = new URLSearchParams(rawQuery);
    const at = this.dateOf(now);
    const profile = this.d.profiler.profile({
      headers: req.headers,
      remoteAddress: req.socket.remoteAddress,
      query,
      visitorId,
      visit: repeat ? 'repeat' : 'first',
      now: at,
    });
    // Signed only where it can travel: onto destinations of a workspace tracking conversions, or into a store link.
    const clickId =
      workspace?.conversionTracking === true || link.mobile?.deferred === true ? this.d.clickIds.issue(link.workspace_id, at) : this.d.clickIds.unsigned();
    const abCookie = `lp_ab_${link._id}`;
    const rotatorCookie = `lp_rt_${link._id}`;
    const stickyVariant = cookies.get(abCookie);
    // Rotator limits and health are read for the links being served (the counters forget idle ones).
    if (resolved.compiled.rotator !== null) this.d.counters.watch(link._id);
    const decision = decide(resolved.compiled, workspace, {
      now: at,
      profile,
      query,
      acknowledged: this.ackTokens.valid(query.get(ACK_PARAM), link._id, now),
      passwordOk: link.password_hash === null || this.passwordTokens.valid(cookies.get(`lp_pw_${link._id}`), this.passwordSubject(link), now),
      stickyVariant: stickyVariant !== undefined && /^\d$/.test(stickyVariant) ? Number(stickyVariant) : null,
      stickyDestination: cookies.get(rotatorCookie) ?? null,
      counts: (destinationId) => this.d.counters.counts(link._id, destinationId),
      unhealthy: this.d.counters.unhealthy(link._id),
      nextRoundRobin: this.nextRoundRobin,
      random: Math.random,
      // decide() appends it to web destinations only when the workspace tracks conversions.
      clickId,
    });
    // A social or chat crawler drawing a link card gets the card, where a person would have been redirected; it is
    // still recorded, as the bot click it is (no rotator count: nobody reached the destination).
    const { outcome } = decision;
    const card = resolved.compiled.preview;
    if (card !== null && outcome.kind === 'redirect' && profile.visitorType === 'social_preview') {
      const status = this.page(res, previewPage({ card, shortUrl: this.shortUrl(link), destination: outcome.url }), [], 'preview');
      if (req.method === 'GET') this.record(clickId, at, link, decision, profile, 'preview');
      return status;
    }
    this.stickyCookies(decision, abCookie, rotatorCookie, setCookies);

    const status = this.answer(res, outcome, link, slug, rawQuery, setCookies);
    if (req.method === 'GET') this.record(clickId, at, link, decision, profile);
    return status;
  }

  private stickyCookies(decision: Decision, abCookie: string, rotatorCookie: string, out: string[]): void {
    const { sticky } = decision;
    if (sticky.variant !== undefined) out.push(setCookie(abCookie, String(sticky.variant), { maxAgeSeconds: AB_STICKY_SECONDS, secure: this.secureCookies }));
    if (sticky.destination !== undefined && sticky.destination.ttlSeconds > 0) {
      out.push(setCookie(rotatorCookie, encodeURIComponent(sticky.destination.id), { maxAgeSeconds: sticky.destination.ttlSeconds, secure: this.secureCookies }));
    }
  }

  /** Writes the response for an outcome; returns the status (for the request log). */
  private answer(res: ServerResponse, outcome: Outcome, link: LinkDoc, slug: string, rawQuery: string, cookies: string[]): number {
    switch (outcome.kind) {
      case 'redirect': {
        this.d.metrics.outcome('redirected');
        const headers: Record<string, string | string[]> = { Location: safeLocation(outcome.url), 'Cache-Control': 'no-store', 'Content-Length': '0' };
        if (cookies.length > 0) headers['Set-Cookie'] = cookies;
        res.writeHead(outcome.status, headers);
        res.end();
        return outcome.status;
      }
      case 'block':
        this.d.metrics.outcome('blocked');
        return outcome.status === 404 ? this.notFound(res, false) : this.page(res, gonePage(), cookies, null);
      case 'gone':
        this.d.metrics.outcome('gone');
        return this.page(res, gonePage(), cookies, null);
      case 'password':
        return this.page(res, passwordPage({ actionUrl: this.selfUrl(slug, rawQuery), error: null }), cookies, 'interstitial');
      case 'warn':
        return this.page(res, warnPage({ destination: link.url, continueUrl: this.continueUrl(link, slug, rawQuery) }), cookies, 'interstitial');
      case 'page':
        return this.page(
          res,
          actionPage({
            title: outcome.title,
            text: outcome.text,
            buttonLabel: outcome.buttonLabel,
            buttonUrl: outcome.buttonUrl ?? this.continueUrl(link, slug, rawQuery),
          }),
          cookies,
          'interstitial',
        );
      case 'app':
        return this.page(
          res,
          appLauncherPage({ appUrl: outcome.appUrl, fallbackUrl: outcome.fallbackUrl, delayMs: outcome.delayMs, platform: outcome.platform }),
          cookies,
          'interstitial',
        );
    }
  }

  private page(res: ServerResponse, page: PageResponse, cookies: string[], label: RedirectOutcomeLabel | null): number {
    if (label) this.d.metrics.outcome(label);
    return this.write(res, page, cookies);
  }

  private write(res: ServerResponse, page: PageResponse, cookies: string[]): number {
    const headers: Record<string, string | string[]> = { ...page.headers, 'Content-Length': String(Buffer.byteLength(page.html)) };
    if (cookies.length > 0) headers['Set-Cookie'] = cookies;
    res.writeHead(page.status, headers);
    res.end(page.html);
    return page.status;
  }

  /** Byte for byte what a `block` rule answering 404 shows: probing cannot tell them apart. */
  private notFound(res: ServerResponse, count = true): number {
    if (count) this.d.metrics.outcome('not_found');
    return this.write(res, NOT_FOUND, []);
  }


  private selfUrl(slug: string, rawQuery: string): string {
    return rawQuery === '' ? `/${slug}` : `/${slug}?${rawQuery}`;
  }

  /** The same short URL with a signed "continue" mark: the warning or page is then passed, and nothing else. */
  private continueUrl(link: LinkDoc, slug: string, rawQuery: string): string {
    const query = new URLSearchParams(rawQuery);
    query.set(ACK_PARAM, this.ackTokens.issue(link._id, ACK_TTL_SECONDS));
    return `/${slug}?${query.toString()}`;
  }

  /** A password cookie is bound to the link and its current password: changing the password logs everyone out. */
  private passwordSubject(link: LinkDoc): string {
    return `${link._id}\n${(link.password_hash ?? '').slice(-16)}`;
  }

  private async submitPassword(req: IncomingMessage, res: ServerResponse, resolved: ResolvedLink, slug: string, rawQuery: string, now: number): Promise<number> {
    const { link } = resolved;
    if (link.password_hash === null) {
      res.writeHead(303, { Location: this.selfUrl(slug, rawQuery), 'Cache-Control': 'no-store', 'Content-Length': '0' });
      res.end();
      return 303;
    }
    // The address the visitor profile sees, so the limit and the `ip` rules agree on who the visitor is.
    const visitor = clientIp(req.headers, req.socket.remoteAddress, this.d.config.redirect.trustedProxyHops) ?? 'unknown';
    const actionUrl = this.selfUrl(slug, rawQuery);
    const release = this.verifications.acquire(link._id, visitor);
    if (!release) {
      await drain(req);
      return this.page(res, passwordPage({ actionUrl, error: 'locked', retryAfterSeconds: 1 }), [], 'interstitial');
    }
    try {
      // The attempt is counted before the password is checked: concurrent guesses cannot all slip past the limit.
      const locked = await this.d.attempts.reserve(link._id, visitor, now);
      if (locked > 0) {
        await drain(req);
        return this.page(res, passwordPage({ actionUrl, error: 'locked', retryAfterSeconds: locked }), [], 'interstitial');
      }
      const body = await readForm(req, PASSWORD_BODY_LIMIT);
      const password = body?.get('password') ?? '';
      if (password === '' || !(await verifyPassword(password, link.password_hash))) {
        return this.page(res, passwordPage({ actionUrl, error: 'wrong' }), [], 'interstitial');
      }
    } finally {
      release();
    }
    await this.d.attempts.succeed(link._id, visitor);
    const ttl = this.d.config.redirect.passwordCookieTtlSeconds;
    const cookie = setCookie(`lp_pw_${link._id}`, this.passwordTokens.issue(this.passwordSubject(link), ttl, now), {
      maxAgeSeconds: ttl,
      path: `/${slug}`,
      secure: this.secureCookies,
    });
    // Back to the short URL with GET: the visit is then decided, answered and counted like any other (a page,
    // not a 303: the browser would hold a redirect chain from the form to another origin against `form-action`).
    return this.page(res, unlockedPage({ continueUrl: actionUrl }), [cookie], 'interstitial');
  }

  /** The short URL as its domain serves it. */
  private shortUrl(link: LinkDoc): string {
    const base = link.domain_id === DEFAULT_DOMAIN_ID ? this.d.config.shortLinkBaseUrl : `https://${link.domain}`;
    return `${base}/${link.slug}`;
  }

  /** `shown: 'preview'`: a crawler was shown the link's card instead of the outcome (see visit). */
  private record(id: string, at: Date, link: LinkDoc, decision: Decision, profile: VisitorProfile, shown?: 'preview'): void {
    const { outcome } = decision;
    const click: ClickRecord = {
      id,
      ts: this.isoOf(at),
      workspace_id: link.workspace_id,
      link_id: link._id,
      domain_id: link.domain_id,
      domain: link.domain,
      slug: link.slug,
      outcome: shown ?? outcome.kind,
      destination: outcome.kind === 'redirect' && shown === undefined ? outcome.url : null,
      decision: outcome.trace,
      visitor: {
        ip: profile.ipStored,
        device: profile.device,
        os: profile.os,
        browser: profile.browser,
        language: profile.languages[0] ?? null,
        country: profile.country,
        region: profile.region,
        city: profile.city,
        asn: profile.asn,
        visitor_type: profile.visitorType,
        verified_bot: profile.verifiedBot,
        bot_name: profile.botName,
        proxy_type: profile.proxyType,
        quality: profile.quality,
        referer: profile.referer,
        visit: profile.visit,
        visitor_id: profile.visitorId,
      },
    };
    if (outcome.trace.destinationId !== null && shown === undefined) this.d.counters.add(link._id, outcome.trace.destinationId);
    this.d.clicks.record(click);
  }
}

/** Destinations were validated as URLs when saved; anything outside printable ASCII is escaped for the header. */
function safeLocation(url: string): string {
   
  return /[^\x21-\x7e]/.test(url) ? encodeURI(url) : url;
}

async function drain(req: IncomingMessage): Promise<void> {
  for await (const chunk of req) void chunk;
}

/** An `application/x-www-form-urlencoded` body of at most `limit` bytes; null when larger or of another type. */
async function readForm(req: IncomingMessage, limit: number): Promise<URLSearchParams | null> {
  const type = req.headers['content-type'] ?? '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  if (size > limit || !type.startsWith('application/x-www-form-urlencoded')) return null;
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
