// The destination's own social card, for links without a custom preview: the worker reads each destination's page
// once through the SSRF-guarded client (platform/outbound), keeps its Open Graph / Twitter Card tags on the link
// (`preview_fetched`), refreshes them periodically, and tells the redirects to drop their copy of the link. The
// redirect only ever reads what is stored: no crawler's request waits on a destination.
import type { Collection, Filter } from 'mongodb';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { Lease } from '../platform/lease.ts';
import type { Logger } from '../platform/logger.ts';
import { Periodic } from '../platform/periodic.ts';
import type { ResolvedAddress, TargetOptions } from '../platform/outbound/ssrf.ts';
import { OutboundError, outboundAgents, send, type OutboundAgents } from '../platform/outbound/outbound.ts';
import type { FetchedPreview, LinkDoc } from './link.store.ts';
import { PREVIEW_DESCRIPTION_MAX, PREVIEW_IMAGE_MAX, PREVIEW_TITLE_MAX } from './link.schemas.ts';

export const PREVIEW_USER_AGENT = 'Mozilla/5.0 (compatible; LinkplanePreview/1.0)';
const MAX_HOPS = 4;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface PreviewFetcherOptions {
  links: Collection<LinkDoc>;
  bus: CacheBus | null;
  /** How often a round looks for links whose tags are due (LINK_PREVIEW_INTERVAL_MS). */
  intervalMs: number;
  /** How long fetched tags are kept before they are read again (LINK_PREVIEW_REFRESH_MS). */
  refreshMs: number;
  /** After a failed read (timeout, refused, not HTML): the next try. */
  retryMs?: number;
  /** For the whole read of one destination, redirects included. */
  timeoutMs?: number;
  /** Bytes of a page read at most; the tags are in its head. */
  maxBytes?: number;
  /** Links read per round. */
  batch?: number;
  concurrency?: number;
  /** Destinations on private addresses are read only when allowed (development); SSRF otherwise. */
  allowPrivate: boolean;
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
  lease?: Lease;
  logger: Logger;
}

/** The tags found in a page; each null when absent. */
export interface PageTags {
  title: string | null;
  description: string | null;
  image: string | null;
}

/**
 * What a round reads, as two queries each answered by the `preview_due` index (`preview_fetched.due_at`): the links
 * never read (no `preview_fetched`, so a null key), then those whose read is due (a date range: its lower bound keeps
 * the walk off the null keys). Links with a custom preview never need their destination's; archived ones are not
 * served. Those two conditions are checked on the candidates the index gives, so a round reads the links it needs
 * and, of the others, only never-read links that are archived or carry their own preview, not every link.
 */
export function previewRoundFilters(now: Date): [neverRead: Filter<LinkDoc>, due: Filter<LinkDoc>] {
  const needed: Filter<LinkDoc> = { archived: { $ne: true }, $or: [{ preview: { $exists: false } }, { preview: null }] };
  return [
    { 'preview_fetched.due_at': null, ...needed },
    { 'preview_fetched.due_at': { $gte: new Date(0), $lte: now }, ...needed },
  ];
}

export class PreviewFetcher {
  private readonly o: PreviewFetcherOptions;
  private readonly rounds: Periodic;
  private readonly targets: TargetOptions;
  private readonly agents: OutboundAgents;

  constructor(options: PreviewFetcherOptions) {
    this.o = options;
    this.targets = { allowPrivate: options.allowPrivate, ...(options.lookup ? { lookup: options.lookup } : {}) };
    this.agents = outboundAgents(this.targets);
    this.rounds = new Periodic({ intervalMs: options.intervalMs, lease: options.lease, logger: options.logger, failure: 'link preview round failed', round: (now) => this.round(now), atStart: true });
  }

  start(): void {
    this.rounds.start();
  }

  async stop(): Promise<void> {
    await this.rounds.stop();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** Reads every due destination once (a round in progress is joined rather than doubled). */
  runOnce(now = new Date()): Promise<void> {
    return this.rounds.runOnce(now);
  }

  private async round(now: Date): Promise<void> {
    const batch = this.o.batch ?? 200;
    const projection = { _id: 1, url: 1, domain: 1, slug: 1, preview_fetched: 1 } as const;
    const [neverRead, again] = previewRoundFilters(now);
    const links = await this.o.links.find(neverRead, { projection }).limit(batch).toArray();
    if (links.length < batch) links.push(...(await this.o.links.find(again, { projection }).limit(batch - links.length).toArray()));
    let next = 0;
    const worker = async () => {
      while (next < links.length) await this.refresh(links[next++]!, now);
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency ?? 4, links.length) }, worker));
  }

  private async refresh(link: Pick<LinkDoc, '_id' | 'url' | 'domain' | 'slug' | 'preview_fetched'>, now: Date): Promise<void> {
    const read = await this.read(link.url);
    const fetched: FetchedPreview = {
      url: link.url,
      ...(read.ok ? read.tags : { title: null, description: null, image: null }),
      fetched_at: now,
      due_at: new Date(now.getTime() + (read.ok ? this.o.refreshMs : (this.o.retryMs ?? Math.min(this.o.refreshMs, 3_600_000)))),
      error: read.ok ? null : read.error,
    };
    // Only onto the destination it was read from: a link whose url changed meanwhile waits for its own read.
    const result = await this.o.links.updateOne({ _id: link._id, url: link.url }, { $set: { preview_fetched: fetched } });
    if (!read.ok) this.o.logger.debug({ link_id: link._id, reason: read.error }, 'destination preview not read');
    const before = link.preview_fetched;
    const changed = !before || before.title !== fetched.title || before.description !== fetched.description || before.image !== fetched.image;
    if (result.matchedCount === 1 && changed) await this.o.bus?.publish({ kind: 'link', id: link._id, keys: [`${link.domain}/${link.slug}`] });
  }

  /** The destination's tags, following at most MAX_HOPS redirects, each hop through the guarded agents. */
  async read(url: string): Promise<{ ok: true; tags: PageTags } | { ok: false; error: string }> {
    const deadline = Date.now() + (this.o.timeoutMs ?? 5000);
    let target = url;
    try {
      for (let hop = 0; hop <= MAX_HOPS; hop++) {
        const left = deadline - Date.now();
        if (left <= 0) return { ok: false, error: 'timeout' };
        const answer = await send(this.agents, this.targets, {
          method: 'GET',
          url: target,
          headers: { 'user-agent': PREVIEW_USER_AGENT, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1' },
          timeoutMs: left,
          maxBodyBytes: this.o.maxBytes ?? 262_144,
        });
        if (REDIRECTS.has(answer.status) && answer.headers.location) {
          target = new URL(answer.headers.location, target).toString();
          continue;
        }
        if (answer.status < 200 || answer.status >= 300) return { ok: false, error: `answered ${answer.status}` };
        const type = (answer.headers['content-type'] ?? '').toLowerCase();
        if (!/text\/html|application\/xhtml\+xml/.test(type)) return { ok: false, error: `not HTML (${type.split(';')[0] || 'no content type'})` };
        return { ok: true, tags: pageTags(answer.body.toString('utf8'), target) };
      }
      return { ok: false, error: 'too many redirects' };
    } catch (error) {
      if (error instanceof OutboundError) return { ok: false, error: error.kind === 'refused' ? `refused: ${error.message}` : error.kind };
      return { ok: false, error: 'invalid redirect' };
    }
  }
}

const META = /<meta\b([^>]*)>/gi;
const ATTRIBUTE = /([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/g;
const TITLE = /<title\b[^>]*>([\s\S]*?)<\/title>/i;

/**
 * The Open Graph tags of a page (Twitter Card tags, then `<title>` and `<meta name="description">` when absent), read
 * from its text with bounded patterns (no DOM: the page is untrusted and its head is all we need). Values are decoded,
 * white space collapsed, cut to the preview's bounds; an image is kept only as an absolute http(s) URL.
 */
export function pageTags(html: string, pageUrl: string): PageTags {
  const head = html.slice(0, Math.max(0, html.search(/<body\b/i)) || html.length);
  const values = new Map<string, string>();
  for (const [, attributes] of head.matchAll(META)) {
    let key: string | null = null;
    let content: string | null = null;
    for (const [, name, a, b, c] of attributes!.matchAll(ATTRIBUTE)) {
      const value = a ?? b ?? c ?? '';
      const lower = name!.toLowerCase();
      if (lower === 'property' || lower === 'name') key ??= value.trim().toLowerCase();
      else if (lower === 'content') content = value;
    }
    if (key !== null && content !== null && !values.has(key)) values.set(key, content);
  }
  const first = (...keys: string[]): string | null => {
    for (const key of keys) {
      const value = clean(values.get(key));
      if (value !== null) return value;
    }
    return null;
  };
  const titleTag = TITLE.exec(head)?.[1];
  const title = first('og:title', 'twitter:title') ?? clean(titleTag);
  const description = first('og:description', 'twitter:description', 'description');
  const image = absoluteImage(first('og:image:secure_url', 'og:image', 'og:image:url', 'twitter:image', 'twitter:image:src'), pageUrl);
  return { title: cut(title, PREVIEW_TITLE_MAX), description: cut(description, PREVIEW_DESCRIPTION_MAX), image };
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

function clean(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const decoded = raw.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8}|#39);/gi, (whole, entity: string) => {
    const lower = entity.toLowerCase();
    if (lower.startsWith('#x')) return codePoint(parseInt(lower.slice(2), 16)) ?? whole;
    if (lower.startsWith('#')) return codePoint(parseInt(lower.slice(1), 10)) ?? whole;
    return ENTITIES[lower] ?? whole;
  });
  // Control characters never belong in a card.
  // eslint-disable-next-line no-control-regex
  const text = decoded.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim();
  return text === '' ? null : text;
}

function codePoint(n: number): string | null {
  return Number.isInteger(n) && n > 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) ? String.fromCodePoint(n) : null;
}

/** At most `max` characters (code points), an ellipsis marking a cut. */
function cut(text: string | null, max: number): string | null {
  if (text === null) return null;
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('').trimEnd()}…`;
}

function absoluteImage(value: string | null, pageUrl: string): string | null {
  if (value === null) return null;
  try {
    const url = new URL(value, pageUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    const text = url.toString();
    return text.length <= PREVIEW_IMAGE_MAX ? text : null;
  } catch {
    return null;
  }
}
