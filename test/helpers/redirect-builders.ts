// Builders for the redirect decision engine's unit tests: a stored link, a rule, a visitor, the request state, a
// workspace. Each starts from a plain desktop visitor and a plain link, so a test states only what it is about.
import { createHash } from 'node:crypto';
import type { LinkDoc } from '../../src/links/link.store.ts';
import type { Rule } from '../../src/rules/rule.schemas.ts';
import { compileLink, compileWorkspace, type WorkspaceRedirectSettings } from '../../src/redirect/compile.ts';
import { decide, type Decision, type DecisionState } from '../../src/redirect/decide.ts';
import type { VisitorProfile } from '../../src/visitor/visitor-profile.ts';

export const NOW = new Date('2026-03-04T12:00:00.000Z');
export const LINK_URL = 'https://example.com/landing';

export function aLink(overrides: Partial<LinkDoc> = {}): LinkDoc {
  return {
    _id: 'lnk_test0001',
    workspace_id: 'ws_test0001',
    domain_id: 'dom_default',
    domain: 'lp.test',
    slug: 'promo',
    url: LINK_URL,
    title: null,
    note: null,
    folder_id: null,
    tag_ids: [],
    redirect_type: 302,
    expires_at: null,
    expired_url: null,
    password_hash: null,
    targeting: [],
    ab_test: null,
    rules: [],
    workspace_rules_off: false,
    mobile: null,
    rotator: null,
    archived: false,
    created_at: new Date('2026-01-01T00:00:00.000Z'),
    updated_at: new Date('2026-01-01T00:00:00.000Z'),
    ...overrides,
  };
}

/** A rule that blocks everyone unless `match` (or `invert`) says otherwise. */
export function aRule(overrides: Partial<Rule> = {}): Rule {
  return { id: 'rule_test', enabled: true, invert: false, match: {}, action: { type: 'block', status: 404 }, ...overrides };
}

export function aWorkspace(overrides: Partial<WorkspaceRedirectSettings> = {}): WorkspaceRedirectSettings {
  return { rules: [], conversionTracking: false, ipLists: {}, ...overrides };
}

/** A human on desktop Chrome in Berlin, first visit, on a Wednesday at noon. */
export function aProfile(overrides: Partial<VisitorProfile> = {}): VisitorProfile {
  return {
    ip: '198.51.100.7',
    ipStored: '198.51.100.0',
    userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36',
    device: 'desktop',
    os: 'windows',
    browser: 'Chrome',
    languages: ['de-de', 'de', 'en'],
    country: 'DE',
    region: 'Berlin',
    city: 'Berlin',
    asn: 3320,
    timezone: 'Europe/Berlin',
    localHour: 12,
    weekday: 3,
    visitorType: 'human',
    verifiedBot: false,
    botName: null,
    proxyType: null,
    quality: 90,
    referer: null,
    hasUtm: false,
    visit: 'first',
    visitorId: 'vis_test0001',
    ...overrides,
  };
}

/** A phone or tablet on the given platform. */
export function aHandheld(device: 'mobile' | 'tablet', os: 'ios' | 'android'): VisitorProfile {
  return aProfile({ device, os, browser: os === 'ios' ? 'Mobile Safari' : 'Chrome' });
}

/** Deterministic [0, 1) numbers from a seed (SHA-256 of seed and counter), for distribution tests that cannot flake. */
export function seededRandom(seed: string): () => number {
  let counter = 0;
  return () => createHash('sha256').update(`${seed}:${counter++}`).digest().readUInt32BE(0) / 2 ** 32;
}

export function aState(overrides: Partial<DecisionState> = {}): DecisionState {
  return {
    now: NOW,
    profile: aProfile(),
    query: new URLSearchParams(),
    acknowledged: false,
    passwordOk: false,
    stickyVariant: null,
    stickyDestination: null,
    counts: () => ({ total: 0, today: 0 }),
    unhealthy: new Set(),
    nextRoundRobin: () => 0,
    random: () => 0.5,
    clickId: null,
    ...overrides,
  };
}

/** Compiles and decides in one step, as the HTTP layer does on a cache miss. */
export function decideFor(link: LinkDoc, state: Partial<DecisionState> = {}, workspace: WorkspaceRedirectSettings | null = null): Decision {
  return decide(compileLink(link), workspace && compileWorkspace(workspace), aState(state));
}
