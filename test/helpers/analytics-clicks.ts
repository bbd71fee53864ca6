// Random clicks for the analytics tests (seeded, so a failure replays), and the brute-force recount the answers are
// compared with: written from the raw click fields directly, not through src/analytics, so the two can disagree.
import type { ClickRecord } from '../../src/visitor/click-record.ts';
import { ClickIds } from '../../src/clicks/click-id.ts';

export const clickIds = new ClickIds('a-test-secret-key-of-at-least-32-characters');

/** mulberry32: a small seeded PRNG. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

export interface TestLink {
  id: string;
  domain_id: string;
  domain: string;
  slug: string;
  tag_ids: string[];
  folder_id: string | null;
}

export const COUNTRIES = ['US', 'FR', 'IN', 'DE', 'BR', null] as const;
export const REFERERS = [null, 'https://www.google.com/search?q=x', 'https://news.ycombinator.com/item?id=1', 'https://t.co/abc', 'android-app://com.slack'] as const;
const BROWSERS = ['Chrome', 'Firefox', 'Mobile Safari', null] as const;
const VISITOR_TYPES = ['human', 'human', 'human', 'human', 'vpn', 'search_bot', 'ai_crawler', 'unknown'] as const;
const DESTINATIONS = [
  'https://example.com/a',
  'https://example.com/b?utm_source=newsletter&utm_medium=email&utm_campaign=spring',
  'https://example.com/c?utm_source=twitter&utm_campaign=%3Dcmd%7C%27%20%2FC%20calc%27!A0',
  null,
] as const;

export function randomClick(rand: () => number, workspaceId: string, links: readonly TestLink[], from: number, to: number, visitors: number): ClickRecord {
  const link = pick(rand, links);
  const ts = new Date(from + Math.floor(rand() * (to - from))).toISOString();
  const destination = pick(rand, DESTINATIONS);
  const asn = rand() < 0.3 ? null : pick(rand, [15169, 3320, 7922]);
  return {
    id: clickIds.issue(workspaceId),
    ts,
    workspace_id: workspaceId,
    link_id: link.id,
    domain_id: link.domain_id,
    domain: link.domain,
    slug: link.slug,
    outcome: destination === null ? 'block' : 'redirect',
    destination,
    decision: {
      step: 'url',
      ruleId: rand() < 0.2 ? pick(rand, ['rule_a', 'rule.b']) : null,
      workspaceRule: false,
      targetingIndex: null,
      variantIndex: rand() < 0.3 ? Math.floor(rand() * 3) : null,
      destinationId: rand() < 0.2 ? pick(rand, ['d1', 'd2']) : null,
      rotatorFallback: false,
    },
    visitor: {
      ip: rand() < 0.5 ? '203.0.113.0' : null,
      device: pick(rand, ['desktop', 'mobile', 'tablet'] as const),
      os: pick(rand, ['ios', 'android', 'windows', 'macos', 'linux', 'other'] as const),
      browser: pick(rand, BROWSERS),
      language: pick(rand, ['en', 'fr', 'pt-br', null]),
      country: pick(rand, COUNTRIES),
      region: pick(rand, ['California', 'Île-de-France', 'São Paulo', null]),
      city: pick(rand, ['Paris', 'New York', 'St. Louis', '$money', 'Pune', null]),
      asn,
      visitor_type: pick(rand, VISITOR_TYPES),
      verified_bot: false,
      bot_name: null,
      proxy_type: null,
      quality: 90,
      referer: pick(rand, REFERERS),
      visit: rand() < 0.5 ? 'first' : 'repeat',
      visitor_id: `v${Math.floor(rand() * visitors)}`,
    },
  };
}

const BOT_TYPES = new Set(['search_bot', 'social_preview', 'seo_crawler', 'ai_crawler', 'monitoring', 'security_scanner', 'library', 'headless', 'feed_reader', 'automated']);

/** A click's value in each dimension, from the raw fields. */
export function rawValue(click: ClickRecord, dimension: string): string | null {
  const v = click.visitor;
  const param = (name: string) => {
    if (!click.destination) return null;
    return new URL(click.destination).searchParams.get(name);
  };
  switch (dimension) {
    case 'referer':
      return v.referer ? new URL(v.referer).hostname.replace(/^www\./, '') || null : null;
    case 'referer_url':
      return v.referer;
    case 'asn':
      return v.asn === null ? null : String(v.asn);
    case 'domain':
      return click.domain;
    case 'link':
      return click.link_id;
    case 'destination':
      return click.destination;
    case 'ab_variant':
      return click.decision.variantIndex === null ? null : String(click.decision.variantIndex);
    case 'rotator_destination':
      return click.decision.destinationId;
    case 'rule':
      return click.decision.ruleId;
    case 'utm_source':
    case 'utm_medium':
    case 'utm_campaign':
      return param(dimension);
    default:
      return (v as unknown as Record<string, string | null>)[dimension] ?? null;
  }
}

export interface BruteFilter {
  start: number;
  end: number;
  bots: 'exclude' | 'include' | 'only';
  links: ReadonlySet<string> | null;
  visitor: { dim: string; values: ReadonlySet<string> } | null;
}

export function bruteSelect(clicks: readonly ClickRecord[], f: BruteFilter): ClickRecord[] {
  return clicks.filter((c) => {
    const t = Date.parse(c.ts);
    if (t < f.start || t >= f.end) return false;
    const bot = BOT_TYPES.has(c.visitor.visitor_type);
    if (f.bots === 'exclude' && bot) return false;
    if (f.bots === 'only' && !bot) return false;
    if (f.links && !f.links.has(c.link_id)) return false;
    if (f.visitor) {
      const value = rawValue(c, f.visitor.dim);
      if (value === null || !f.visitor.values.has(value)) return false;
    }
    return true;
  });
}

export function isBotType(type: string): boolean {
  return BOT_TYPES.has(type);
}

export function distinctVisitors(clicks: readonly ClickRecord[]): number {
  return new Set(clicks.map((c) => c.visitor.visitor_id)).size;
}
