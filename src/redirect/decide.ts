// The redirect decision (DESIGN, "Redirect decision order", steps 2 and 4–10): pure, synchronous, no I/O. The HTTP
// layer resolves the link (step 1), builds the visitor profile (step 3), and turns the outcome into a response.
import type { RuleAction } from '../rules/rule.schemas.ts';
import type { CompiledLink, CompiledTargeting, CompiledWorkspace } from './compile.ts';
import { chooseDestination, chooseVariant, type ChoiceState } from './choose.ts';
import { decideMobile, finishUrl } from './destination.ts';
import type { IpMatcher } from '../rules/ip-match.ts';
import type { Outcome } from './outcome.ts';
import type { DecisionTrace } from '../visitor/click-record.ts';
import { firstMatchingRule, matchInput, type CompiledRule } from '../rules/match.ts';
import type { VisitorProfile } from '../visitor/visitor-profile.ts';

export interface DecisionState extends ChoiceState {
  now: Date;
  profile: VisitorProfile;
  /** The short URL's query string. */
  query: URLSearchParams;
  /** The visitor clicked "continue" on a warn/page interstitial of this link. */
  acknowledged: boolean;
  /** A valid password cookie for this link (or the link has no password). */
  passwordOk: boolean;
  /** From the A/B cookie. */
  stickyVariant: number | null;
  /** Rotator destination id from the sticky cookie (still within its TTL). */
  stickyDestination: string | null;
  /** Rotator click counts (fed by the worker). */
  counts(destinationId: string): { total: number; today: number };
  /** Destination ids found unhealthy (used when `auto_disable_unhealthy`). */
  unhealthy: ReadonlySet<string>;
  /** Process-local counter; returns an index. */
  nextRoundRobin(linkId: string, eligible: number): number;
  /** [0, 1); injectable for tests. */
  random(): number;
  /**
   * Appended as `lp_click_id` to web destinations when the workspace has conversion tracking on (decide checks that),
   * and put in a deferred Google Play link whatever the tracking setting: pass it for every click.
   */
  clickId: string | null;
}

export interface Decision {
  outcome: Outcome;
  /**
   * What the HTTP layer writes back into the visitor's cookies: `variant` whenever the A/B test decided, `destination`
   * whenever the rotator chose one and `sticky_ttl_seconds` > 0 (also when the cookie's choice was kept: renewing
   * the cookie or keeping its first expiry is the HTTP layer's call).
   */
  sticky: { variant?: number; destination?: { id: string; ttlSeconds: number } };
}

const NO_IP_LISTS: ReadonlyMap<string, IpMatcher> = new Map();

/**
 * The action of the matching rule as an outcome, or null when the decision continues: `pass`, and `warn` or a `page`
 * without its own button URL once the visitor acknowledged the interstitial (its continue link leads past the rules).
 * A `page` with a `button_url` has no continue: acknowledging it changes nothing.
 */
function ruleOutcome(action: RuleAction, link: CompiledLink, acknowledged: boolean, trace: DecisionTrace, finish: (url: string) => string): Outcome | null {
  switch (action.type) {
    case 'pass':
      return null;
    case 'block':
      return { kind: 'block', status: action.status ?? 404, trace };
    case 'redirect':
      return { kind: 'redirect', url: finish(action.url), status: link.redirectType, trace };
    case 'warn':
      return acknowledged ? null : { kind: 'warn', trace };
    case 'page': {
      const buttonUrl = action.button_url ?? null;
      if (acknowledged && buttonUrl === null) return null;
      return { kind: 'page', title: action.title ?? null, text: action.text ?? null, buttonLabel: action.button_label ?? null, buttonUrl, trace };
    }
  }
}

function targetingHolds(entry: CompiledTargeting, profile: VisitorProfile): boolean {
  if (entry.country && (profile.country === null || !entry.country.has(profile.country.toUpperCase()))) return false;
  if (entry.device && !entry.device.has(profile.device)) return false;
  if (entry.os && !entry.os.has(profile.os)) return false;
  if (entry.language && !entry.language(profile.languages)) return false;
  return true;
}

/**
 * Steps in order; the first that produces an outcome ends the decision. Choices of the spec's silences:
 * - Rules: first match wins, whatever its action: a matching `pass` ends rule evaluation (later rules, workspace or
 *   link, are not looked at) and the decision goes on to the password. `trace.ruleId` names the rule that matched,
 *   also when it passed, so a click shows which rule let it through.
 * - A/B and rotator both enabled: the A/B test decides (step 8 comes first); the rotator is not consulted.
 * - UTM merge and the click id apply to every web destination the link sends to (expired_url, rule redirect,
 *   targeting, mobile web and desktop URLs, variant, rotator destination or fallback, url); app deep links and store
 *   URLs are left to the stores' own conventions (see deferredStoreUrl).
 * `workspace` is the link's workspace even when the link has `workspace_rules_off`: its rules are skipped here, but
 * its IP lists (for the link's `ip_list_ids` rules) and conversion tracking still apply.
 */
export function decide(link: CompiledLink, workspace: CompiledWorkspace | null, state: DecisionState): Decision {
  const trace: DecisionTrace = { step: 'url', ruleId: null, workspaceRule: false, targetingIndex: null, variantIndex: null, destinationId: null, rotatorFallback: false };
  const sticky: Decision['sticky'] = {};
  const clickId = workspace?.conversionTracking === true ? state.clickId : null;
  const finish = (url: string): string => finishUrl(url, state.query, clickId);
  const redirect = (url: string, step: DecisionTrace['step']): Decision => ({
    outcome: { kind: 'redirect', url: finish(url), status: link.redirectType, trace: { ...trace, step } },
    sticky,
  });

  // 2. Expiry comes before the rules: an expired link answers the same to every visitor.
  if (link.expiresAt !== null && link.expiresAt <= state.now.getTime()) {
    if (link.expiredUrl !== null) return redirect(link.expiredUrl, 'expired');
    return { outcome: { kind: 'gone', trace: { ...trace, step: 'expired' } }, sticky };
  }

  // 4. Rules: the workspace's first (unless the link opts out), then the link's.
  const lists: (readonly CompiledRule[])[] = [];
  if (workspace && !link.workspaceRulesOff && workspace.rules.length > 0) lists.push(workspace.rules);
  if (link.rules.length > 0) lists.push(link.rules);
  if (lists.length > 0) {
    const rule = firstMatchingRule(lists, matchInput(state.profile, workspace?.ipLists ?? NO_IP_LISTS));
    if (rule) {
      trace.ruleId = rule.id;
      trace.workspaceRule = rule.workspace;
      const outcome = ruleOutcome(rule.action, link, state.acknowledged, { ...trace, step: 'rule' }, finish);
      if (outcome) return { outcome, sticky };
    }
  }

  // 5. Password.
  if (link.hasPassword && !state.passwordOk) return { outcome: { kind: 'password', trace: { ...trace, step: 'password' } }, sticky };

  // 6. Targeting: the first entry whose every given dimension matches.
  const targetingIndex = link.targeting.findIndex((entry) => targetingHolds(entry, state.profile));
  if (targetingIndex !== -1) {
    trace.targetingIndex = targetingIndex;
    return redirect(link.targeting[targetingIndex]!.url, 'targeting');
  }

  // 7. Mobile app launcher / desktop URL.
  if (link.mobile) {
    const choice = decideMobile(link.mobile, state.profile, { slug: link.slug, linkUrl: finish(link.url), clickId: state.clickId, finish });
    if (choice?.kind === 'redirect') {
      return { outcome: { kind: 'redirect', url: choice.url, status: link.redirectType, trace: { ...trace, step: 'mobile' } }, sticky };
    }
    if (choice?.kind === 'app') {
      const { appUrl, fallbackUrl, delayMs, platform } = choice;
      return { outcome: { kind: 'app', appUrl, fallbackUrl, delayMs, platform, trace: { ...trace, step: 'mobile' } }, sticky };
    }
  }

  // 8. A/B test.
  if (link.abTest) {
    const variant = chooseVariant(link.abTest, state);
    trace.variantIndex = variant;
    sticky.variant = variant;
    return redirect(link.abTest.urls[variant]!, 'ab_test');
  }

  // 9. Rotator; with no eligible destination, its fallback_url or else the link's url.
  if (link.rotator) {
    const destination = chooseDestination(link.rotator, link.id, state);
    if (destination) {
      trace.destinationId = destination.id;
      if (link.rotator.stickyTtlSeconds > 0) sticky.destination = { id: destination.id, ttlSeconds: link.rotator.stickyTtlSeconds };
      return redirect(destination.url, 'rotator');
    }
    trace.rotatorFallback = true;
    return redirect(link.rotator.fallbackUrl ?? link.url, 'rotator');
  }

  // 10. The link's url.
  return redirect(link.url, 'url');
}
