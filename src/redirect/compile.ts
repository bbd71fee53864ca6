// A link and its workspace's redirect settings, turned once per cache fill into what `decide` reads per request:
// Sets instead of arrays, lower-cased strings, IP matchers, dates as epoch milliseconds, disabled parts dropped.
import type { LinkDoc, RedirectType } from '../links/link.store.ts';
import type { AbTest, Mobile, Rotator } from '../links/link.schemas.ts';
import type { Rule } from '../rules/rule.schemas.ts';
import { compileIpMatcher, type IpMatcher } from '../rules/ip-match.ts';
import { compileLanguageMatcher, compileRules, type CompiledRule } from '../rules/match.ts';
import type { Device, OperatingSystem } from '../visitor/visitor-profile.ts';
import { destinationPreview } from '../links/link.view.ts';
import type { PreviewCard } from './preview-page.ts';

export interface WorkspaceRedirectSettings {
  rules: Rule[];
  conversionTracking: boolean;
  /** IP list id → its addresses and CIDRs (rule field `ip_list_ids`). */
  ipLists: Record<string, string[]>;
  /** The workspace's partner suspended it and answers its links with the suspended page. */
  suspended?: boolean;
}

export interface CompiledWorkspace {
  rules: readonly CompiledRule[];
  conversionTracking: boolean;
  ipLists: ReadonlyMap<string, IpMatcher>;
  /** Answer the suspended page instead of deciding (a partner's suspended client). */
  suspended?: boolean;
}

export interface CompiledTargeting {
  url: string;
  country: ReadonlySet<string> | null;
  device: ReadonlySet<Device> | null;
  os: ReadonlySet<OperatingSystem> | null;
  language: ((languages: readonly string[]) => boolean) | null;
}

export interface CompiledAbTest {
  urls: readonly string[];
  weights: readonly number[];
  /** Set only when valid for the variants (an index past the end is ignored). */
  winnerIndex: number | null;
  /** `auto.weights` when auto is on and they fit the variants; null otherwise. */
  autoWeights: readonly number[] | null;
  warmupUntil: number | null;
  stoppedAt: number | null;
}

export interface CompiledDestination {
  id: string;
  url: string;
  weight: number;
  maxTotal: number | null;
  maxDaily: number | null;
  startsAt: number | null;
}

export interface CompiledRotator {
  mode: Rotator['mode'];
  stickyTtlSeconds: number;
  fallbackUrl: string | null;
  autoDisableUnhealthy: boolean;
  /** Active destinations only: an inactive one can never be chosen. */
  destinations: readonly CompiledDestination[];
}

export interface CompiledLink {
  id: string;
  slug: string;
  url: string;
  redirectType: RedirectType;
  expiresAt: number | null;
  expiredUrl: string | null;
  hasPassword: boolean;
  workspaceRulesOff: boolean;
  rules: readonly CompiledRule[];
  targeting: readonly CompiledTargeting[];
  /** Null unless enabled. */
  mobile: Mobile | null;
  /** Null unless enabled with at least one variant. */
  abTest: CompiledAbTest | null;
  /** Null unless enabled. */
  rotator: CompiledRotator | null;
  /** What social crawlers are shown: the custom preview, else the destination's fetched tags; null: redirect them. */
  preview: PreviewCard | null;
}

/** A date that does not parse counts as absent rather than failing every redirect of the link. */
function epoch(value: string | Date | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

export function compileWorkspace(settings: WorkspaceRedirectSettings): CompiledWorkspace {
  const ipLists = new Map<string, IpMatcher>();
  for (const [id, entries] of Object.entries(settings.ipLists)) ipLists.set(id, compileIpMatcher(entries));
  return { rules: compileRules(settings.rules, true), conversionTracking: settings.conversionTracking, ipLists, suspended: settings.suspended === true };
}

function compileAbTest(ab: AbTest | null): CompiledAbTest | null {
  if (!ab?.enabled || ab.variants.length === 0) return null;
  const count = ab.variants.length;
  const auto = ab.auto;
  const winner = auto?.winner_index;
  return {
    urls: ab.variants.map((variant) => variant.url),
    weights: ab.variants.map((variant) => variant.weight),
    winnerIndex: winner !== undefined && Number.isInteger(winner) && winner >= 0 && winner < count ? winner : null,
    autoWeights: auto?.enabled && auto.weights?.length === count ? auto.weights : null,
    warmupUntil: epoch(auto?.warmup_until),
    stoppedAt: epoch(auto?.stopped_at),
  };
}

function compileRotator(rotator: Rotator | null): CompiledRotator | null {
  if (!rotator || rotator.enabled === false) return null;
  return {
    mode: rotator.mode ?? 'weighted',
    stickyTtlSeconds: rotator.sticky_ttl_seconds ?? 0,
    fallbackUrl: rotator.fallback_url ?? null,
    autoDisableUnhealthy: rotator.auto_disable_unhealthy === true,
    destinations: rotator.destinations
      .filter((destination) => destination.active !== false)
      .map((destination) => ({
        id: destination.id,
        url: destination.url,
        weight: destination.weight ?? 1,
        maxTotal: destination.limits?.max_total_clicks ?? null,
        maxDaily: destination.limits?.max_daily_clicks ?? null,
        startsAt: epoch(destination.limits?.starts_at),
      })),
  };
}

export function compileLink(link: LinkDoc): CompiledLink {
  return {
    id: link._id,
    slug: link.slug,
    url: link.url,
    redirectType: link.redirect_type ?? 302,
    expiresAt: epoch(link.expires_at),
    expiredUrl: link.expired_url ?? null,
    hasPassword: Boolean(link.password_hash),
    workspaceRulesOff: link.workspace_rules_off === true,
    rules: compileRules(link.rules ?? [], false),
    targeting: (link.targeting ?? []).map((entry) => ({
      url: entry.url,
      country: entry.match.country ? new Set(entry.match.country.map((country) => country.toUpperCase())) : null,
      device: entry.match.device ? new Set(entry.match.device) : null,
      os: entry.match.os ? new Set(entry.match.os) : null,
      language: entry.match.language ? compileLanguageMatcher(entry.match.language) : null,
    })),
    mobile: link.mobile?.enabled ? link.mobile : null,
    abTest: compileAbTest(link.ab_test),
    rotator: compileRotator(link.rotator),
    preview: compilePreview(link),
  };
}

function compilePreview(link: LinkDoc): PreviewCard | null {
  if (link.preview) return { title: link.preview.title, description: link.preview.description ?? null, image: link.preview.image ?? null };
  const fetched = destinationPreview(link);
  return fetched ? { title: fetched.title, description: fetched.description, image: fetched.image } : null;
}
