// Rule matching (spec 2.4, DESIGN decision order step 4). A rule is compiled once per cache fill into a list of
// predicates over a `MatchInput`, so evaluating twenty rules is a few Set probes and string searches each.
import type { Rule, RuleAction, RuleMatch } from './rule.schemas.ts';
import { compileIpMatcher, type IpMatcher } from './ip-match.ts';
import type { VisitorProfile } from '../visitor/visitor-profile.ts';

/** The visitor as rules see it: the profile plus the normalised strings every rule would otherwise recompute. */
export interface MatchInput {
  profile: VisitorProfile;
  userAgent: string;
  referer: string | null;
  country: string | null;
  region: string | null;
  city: string | null;
  /** The workspace's IP lists by id; empty without a workspace. */
  ipLists: ReadonlyMap<string, IpMatcher>;
}

export function matchInput(profile: VisitorProfile, ipLists: ReadonlyMap<string, IpMatcher>): MatchInput {
  return {
    profile,
    userAgent: profile.userAgent.toLowerCase(),
    referer: profile.referer === null ? null : profile.referer.toLowerCase(),
    country: profile.country === null ? null : profile.country.toUpperCase(),
    region: profile.region === null ? null : profile.region.toLowerCase(),
    city: profile.city === null ? null : profile.city.toLowerCase(),
    ipLists,
  };
}

type Predicate = (input: MatchInput) => boolean;

export interface CompiledRule {
  id: string | null;
  /** A workspace rule (trace.workspaceRule), as opposed to one of the link's. */
  workspace: boolean;
  invert: boolean;
  predicates: readonly Predicate[];
  action: RuleAction;
}

/**
 * Language tags as a prefix match on subtag boundaries: a rule tag `en` holds for a visitor's `en-us` (and `en`), a
 * rule tag `en-us` only for `en-us` (or a longer tag under it, e.g. `zh-hant` for `zh-hant-tw`). Any of the visitor's
 * Accept-Language tags may match, whatever its q-value: the visitor reads that language.
 */
export function compileLanguageMatcher(tags: readonly string[]): (languages: readonly string[]) => boolean {
  const wanted = new Set(tags.map((tag) => tag.toLowerCase()));
  return (languages) =>
    languages.some((language) => {
      if (wanted.has(language)) return true;
      for (let dash = language.indexOf('-'); dash !== -1; dash = language.indexOf('-', dash + 1)) {
        if (wanted.has(language.slice(0, dash))) return true;
      }
      return false;
    });
}

/** Hours are whole hours, both ends included (9–17 holds from 09:00 to 17:59); from > to wraps past midnight. */
export function hourInRange(hour: number, from: number, to: number): boolean {
  return from <= to ? hour >= from && hour <= to : hour >= from || hour <= to;
}

function lowerSet(values: readonly string[]): ReadonlySet<string> {
  return new Set(values.map((value) => value.toLowerCase()));
}

/** One predicate per given field; all must hold. An empty match holds for every visitor (a catch-all rule). */
function compileMatch(match: RuleMatch): Predicate[] {
  const predicates: Predicate[] = [];
  if (match.visitor_type) {
    const types: ReadonlySet<string> = new Set(match.visitor_type);
    predicates.push((input) => types.has(input.profile.visitorType));
  }
  if (match.verified_bot !== undefined) {
    const verified = match.verified_bot;
    predicates.push((input) => input.profile.verifiedBot === verified);
  }
  if (match.proxy_type) {
    const types: ReadonlySet<string> = new Set(match.proxy_type);
    predicates.push((input) => input.profile.proxyType !== null && types.has(input.profile.proxyType));
  }
  if (match.quality_below !== undefined) {
    const threshold = match.quality_below;
    predicates.push((input) => input.profile.quality < threshold);
  }
  if (match.country) {
    const countries = new Set(match.country.map((country) => country.toUpperCase()));
    predicates.push((input) => input.country !== null && countries.has(input.country));
  }
  if (match.region) {
    const regions = lowerSet(match.region);
    predicates.push((input) => input.region !== null && regions.has(input.region));
  }
  if (match.city) {
    const cities = lowerSet(match.city);
    predicates.push((input) => input.city !== null && cities.has(input.city));
  }
  if (match.asn) {
    const asns: ReadonlySet<number> = new Set(match.asn);
    predicates.push((input) => input.profile.asn !== null && asns.has(input.profile.asn));
  }
  if (match.ip) {
    const ips = compileIpMatcher(match.ip);
    predicates.push((input) => input.profile.ip !== null && ips.has(input.profile.ip));
  }
  if (match.user_agent !== undefined) {
    const needle = match.user_agent.toLowerCase();
    predicates.push((input) => input.userAgent.includes(needle));
  }
  if (match.referer !== undefined) {
    const needle = match.referer.toLowerCase();
    // Without a Referer there is nothing to contain the text: the rule does not hold (invert makes it hold).
    predicates.push((input) => input.referer !== null && input.referer.includes(needle));
  }
  if (match.has_utm !== undefined) {
    const hasUtm = match.has_utm;
    predicates.push((input) => input.profile.hasUtm === hasUtm);
  }
  if (match.device) {
    const devices: ReadonlySet<string> = new Set(match.device);
    predicates.push((input) => devices.has(input.profile.device));
  }
  if (match.language) {
    const speaks = compileLanguageMatcher(match.language);
    predicates.push((input) => speaks(input.profile.languages));
  }
  if (match.local_time) {
    const { from, to } = match.local_time;
    predicates.push((input) => hourInRange(input.profile.localHour, from, to));
  }
  if (match.weekday) {
    const days: ReadonlySet<number> = new Set(match.weekday);
    predicates.push((input) => days.has(input.profile.weekday));
  }
  if (match.visit !== undefined) {
    const visit = match.visit;
    predicates.push((input) => input.profile.visit === visit);
  }
  if (match.ip_list_ids) {
    // Resolved per request against the workspace's lists: a link rule is compiled without its workspace, and a list
    // id the workspace does not have (deleted, or no workspace) never matches.
    const listIds = [...new Set(match.ip_list_ids)];
    predicates.push((input) => {
      const ip = input.profile.ip;
      if (ip === null) return false;
      return listIds.some((id) => input.ipLists.get(id)?.has(ip) === true);
    });
  }
  return predicates;
}

/** Disabled rules are dropped here, so they cost nothing per request. */
export function compileRules(rules: readonly Rule[], workspace: boolean): CompiledRule[] {
  return rules
    .filter((rule) => rule.enabled !== false)
    .map((rule) => ({
      id: rule.id ?? null,
      workspace,
      invert: rule.invert === true,
      predicates: compileMatch(rule.match),
      action: rule.action,
    }));
}

/** The match holds when every given field holds; `invert` then negates the whole conjunction. */
export function ruleHolds(rule: CompiledRule, input: MatchInput): boolean {
  let holds = true;
  for (const predicate of rule.predicates) {
    if (!predicate(input)) {
      holds = false;
      break;
    }
  }
  return rule.invert ? !holds : holds;
}

/** The first rule of the lists, in order, whose match holds; null when none does. */
export function firstMatchingRule(lists: readonly (readonly CompiledRule[])[], input: MatchInput): CompiledRule | null {
  for (const rules of lists) {
    for (const rule of rules) {
      if (ruleHolds(rule, input)) return rule;
    }
  }
  return null;
}
