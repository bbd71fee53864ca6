import { expect } from 'chai';
import type { RuleAction, RuleMatch } from '../../src/rules/rule.schemas.ts';
import type { VisitorProfile } from '../../src/visitor/visitor-profile.ts';
import { LINK_URL, aLink, aProfile, aRule, aWorkspace, decideFor } from '../helpers/redirect-builders.ts';

/** One match field: visitors for whom a rule on it holds, and visitors for whom it does not. */
interface MatchRow {
  title: string;
  match: RuleMatch;
  holds: Partial<VisitorProfile>[];
  fails: Partial<VisitorProfile>[];
}

const MATCH_ROWS: MatchRow[] = [
  { title: 'visitor_type', match: { visitor_type: ['ai_crawler', 'search_bot'] }, holds: [{ visitorType: 'ai_crawler' }, { visitorType: 'search_bot' }], fails: [{ visitorType: 'human' }, { visitorType: 'seo_crawler' }] },
  { title: 'verified_bot: true', match: { verified_bot: true }, holds: [{ verifiedBot: true }], fails: [{ verifiedBot: false }] },
  { title: 'verified_bot: false', match: { verified_bot: false }, holds: [{ verifiedBot: false }], fails: [{ verifiedBot: true }] },
  { title: 'proxy_type', match: { proxy_type: ['VPN', 'TOR'] }, holds: [{ proxyType: 'TOR' }, { proxyType: 'VPN' }], fails: [{ proxyType: 'DCH' }, { proxyType: null }] },
  { title: 'quality_below (strictly below)', match: { quality_below: 30 }, holds: [{ quality: 29 }, { quality: 0 }], fails: [{ quality: 30 }, { quality: 100 }] },
  { title: 'country', match: { country: ['FR', 'DE'] }, holds: [{ country: 'FR' }, { country: 'de' }], fails: [{ country: 'US' }, { country: null }] },
  { title: 'region (case-insensitive)', match: { region: ['California'] }, holds: [{ region: 'california' }, { region: 'CALIFORNIA' }], fails: [{ region: 'Nevada' }, { region: null }] },
  { title: 'city (case-insensitive)', match: { city: ['São Paulo'] }, holds: [{ city: 'SÃO PAULO' }], fails: [{ city: 'Sao Paulo' }, { city: null }] },
  { title: 'asn', match: { asn: [13335, 16509] }, holds: [{ asn: 16509 }], fails: [{ asn: 15169 }, { asn: null }] },
  {
    title: 'ip (addresses and CIDRs)',
    match: { ip: ['203.0.113.0/24', '2001:db8::1'] },
    holds: [{ ip: '203.0.113.9' }, { ip: '::ffff:203.0.113.200' }, { ip: '2001:db8::1' }],
    fails: [{ ip: '203.0.114.1' }, { ip: '2001:db8::2' }, { ip: null }],
  },
  { title: 'user_agent (case-insensitive substring)', match: { user_agent: 'HeadlessChrome' }, holds: [{ userAgent: 'Mozilla/5.0 headlesschrome/120.0' }], fails: [{ userAgent: 'Mozilla/5.0 Chrome/120.0' }] },
  {
    title: 'referer (case-insensitive substring)',
    match: { referer: 'facebook.com' },
    holds: [{ referer: 'https://m.FACEBOOK.com/story' }],
    fails: [{ referer: 'https://twitter.com/' }, { referer: null }],
  },
  { title: 'has_utm: true', match: { has_utm: true }, holds: [{ hasUtm: true }], fails: [{ hasUtm: false }] },
  { title: 'has_utm: false', match: { has_utm: false }, holds: [{ hasUtm: false }], fails: [{ hasUtm: true }] },
  { title: 'device', match: { device: ['mobile', 'tablet'] }, holds: [{ device: 'mobile' }, { device: 'tablet' }], fails: [{ device: 'desktop' }] },
  {
    title: 'language: a primary tag holds for its regional variants',
    match: { language: ['en'] },
    holds: [{ languages: ['en'] }, { languages: ['fr', 'en-us'] }],
    fails: [{ languages: ['fr', 'de-de'] }, { languages: ['eng'] }, { languages: [] }],
  },
  {
    title: 'language: a regional tag holds only for that region',
    match: { language: ['pt-BR'] },
    holds: [{ languages: ['pt-br'] }, { languages: ['es', 'pt-br'] }],
    fails: [{ languages: ['pt'] }, { languages: ['pt-pt'] }],
  },
  { title: 'local_time (inclusive hours)', match: { local_time: { from: 9, to: 17 } }, holds: [{ localHour: 9 }, { localHour: 17 }], fails: [{ localHour: 8 }, { localHour: 18 }] },
  {
    title: 'local_time wrapping past midnight',
    match: { local_time: { from: 22, to: 6 } },
    holds: [{ localHour: 22 }, { localHour: 0 }, { localHour: 6 }],
    fails: [{ localHour: 7 }, { localHour: 21 }, { localHour: 12 }],
  },
  { title: 'local_time of a single hour', match: { local_time: { from: 13, to: 13 } }, holds: [{ localHour: 13 }], fails: [{ localHour: 12 }, { localHour: 14 }] },
  { title: 'weekday (ISO 1–7)', match: { weekday: [6, 7] }, holds: [{ weekday: 6 }, { weekday: 7 }], fails: [{ weekday: 1 }, { weekday: 5 }] },
  { title: 'visit: first', match: { visit: 'first' }, holds: [{ visit: 'first' }], fails: [{ visit: 'repeat' }] },
  { title: 'visit: repeat', match: { visit: 'repeat' }, holds: [{ visit: 'repeat' }], fails: [{ visit: 'first' }] },
  {
    title: 'ip_list_ids (any listed workspace list)',
    match: { ip_list_ids: ['ipl_office', 'ipl_vendors'] },
    holds: [{ ip: '192.0.2.44' }, { ip: '2001:db8:aa::1' }],
    fails: [{ ip: '192.0.3.1' }, { ip: '10.9.9.9' }, { ip: null }],
  },
  {
    title: 'several fields: all must hold',
    match: { country: ['US'], device: ['mobile'] },
    holds: [{ country: 'US', device: 'mobile' }],
    fails: [{ country: 'US', device: 'desktop' }, { country: 'CA', device: 'mobile' }],
  },
  { title: 'an empty match (catch-all)', match: {}, holds: [{}, { visitorType: 'search_bot', country: null }], fails: [] },
];

/** The workspace the ip_list_ids row needs; other rows ignore it. `ipl_other` holds the address that must not count. */
const WORKSPACE = aWorkspace({
  ipLists: { ipl_office: ['192.0.2.0/24'], ipl_vendors: ['2001:db8:aa::/48'], ipl_other: ['10.9.9.9'] },
});

function blocks(match: RuleMatch, visitor: Partial<VisitorProfile>, invert = false): boolean {
  const link = aLink({ rules: [aRule({ match, invert })] });
  return decideFor(link, { profile: aProfile(visitor) }, WORKSPACE).outcome.kind === 'block';
}

describe('redirect rules', () => {
  describe('match fields', () => {
    for (const row of MATCH_ROWS) {
      for (const visitor of row.holds) {
        it(`${row.title}: acts for ${JSON.stringify(visitor)}`, () => expect(blocks(row.match, visitor)).to.equal(true));
      }
      for (const visitor of row.fails) {
        it(`${row.title}: does not act for ${JSON.stringify(visitor)}`, () => expect(blocks(row.match, visitor)).to.equal(false));
      }
    }

    it('ip_list_ids: a list id the workspace does not have never matches', () => {
      const link = aLink({ rules: [aRule({ match: { ip_list_ids: ['ipl_deleted'] } })] });
      expect(decideFor(link, { profile: aProfile({ ip: '192.0.2.44' }) }, WORKSPACE).outcome.kind).to.equal('redirect');
      expect(decideFor(link, { profile: aProfile({ ip: '192.0.2.44' }) }, null).outcome.kind).to.equal('redirect');
    });

    it('ip_list_ids: invert turns an unknown list into a match for everyone', () => {
      const link = aLink({ rules: [aRule({ match: { ip_list_ids: ['ipl_deleted'] }, invert: true })] });
      expect(decideFor(link, {}, WORKSPACE).outcome.kind).to.equal('block');
    });
  });

  describe('invert', () => {
    const rows: { title: string; match: RuleMatch; visitor: Partial<VisitorProfile>; blocked: boolean }[] = [
      { title: 'acts for a visitor outside the match', match: { country: ['DE'] }, visitor: { country: 'US' }, blocked: true },
      { title: 'does not act for a visitor inside the match', match: { country: ['DE'] }, visitor: { country: 'DE' }, blocked: false },
      { title: 'acts without a Referer for a referer rule', match: { referer: 'partner.example' }, visitor: { referer: null }, blocked: true },
      { title: 'negates the whole conjunction, not each field', match: { country: ['DE'], device: ['mobile'] }, visitor: { country: 'DE', device: 'desktop' }, blocked: true },
      { title: 'does not act when every field holds', match: { country: ['DE'], device: ['mobile'] }, visitor: { country: 'DE', device: 'mobile' }, blocked: false },
    ];
    for (const row of rows) it(row.title, () => expect(blocks(row.match, row.visitor, true)).to.equal(row.blocked));
  });

  describe('actions', () => {
    const matching = { country: ['DE'] };
    const visitorIn = aProfile({ country: 'DE' });
    const visitorOut = aProfile({ country: 'FR' });

    it('pass: the decision continues to the link url', () => {
      const link = aLink({ rules: [aRule({ id: 'rule_pass', match: matching, action: { type: 'pass' } })] });
      const decision = decideFor(link, { profile: visitorIn });
      expect(decision.outcome).to.deep.include({ kind: 'redirect', url: LINK_URL });
      expect(decision.outcome.trace).to.include({ step: 'url', ruleId: 'rule_pass' });
      expect(decideFor(link, { profile: visitorOut }).outcome.trace.ruleId).to.equal(null);
    });

    for (const status of [404, 410] as const) {
      it(`block ${status}: answers ${status}`, () => {
        const link = aLink({ rules: [aRule({ id: 'rule_block', match: matching, action: { type: 'block', status } })] });
        expect(decideFor(link, { profile: visitorIn }).outcome).to.deep.include({ kind: 'block', status });
        expect(decideFor(link, { profile: visitorOut }).outcome.kind).to.equal('redirect');
      });
    }

    it('block without a status (stored before the default): answers 404', () => {
      const link = aLink({ rules: [aRule({ match: matching, action: { type: 'block' } as never })] });
      expect(decideFor(link, { profile: visitorIn }).outcome).to.deep.include({ kind: 'block', status: 404 });
    });

    it("redirect: goes to the rule's url with the link's redirect_type", () => {
      const link = aLink({ redirect_type: 308, rules: [aRule({ id: 'rule_r', match: matching, action: { type: 'redirect', url: 'https://de.example.com/' } })] });
      const decision = decideFor(link, { profile: visitorIn });
      expect(decision.outcome).to.deep.include({ kind: 'redirect', url: 'https://de.example.com/', status: 308 });
      expect(decision.outcome.trace).to.include({ step: 'rule', ruleId: 'rule_r', workspaceRule: false });
      expect(decideFor(link, { profile: visitorOut }).outcome).to.deep.include({ kind: 'redirect', url: LINK_URL, status: 308 });
    });

    it('page: shows the interstitial with its texts', () => {
      const action = { type: 'page', title: 'Hold on', text: 'Read this first', button_label: 'Go', button_url: 'https://example.org/info' } as const;
      const link = aLink({ rules: [aRule({ match: matching, action })] });
      expect(decideFor(link, { profile: visitorIn }).outcome).to.deep.include({ kind: 'page', title: 'Hold on', text: 'Read this first', buttonLabel: 'Go', buttonUrl: 'https://example.org/info' });
      expect(decideFor(link, { profile: visitorOut }).outcome.kind).to.equal('redirect');
    });

    it('page without texts: every text is null', () => {
      const link = aLink({ rules: [aRule({ match: matching, action: { type: 'page' } })] });
      expect(decideFor(link, { profile: visitorIn }).outcome).to.deep.include({ kind: 'page', title: null, text: null, buttonLabel: null, buttonUrl: null });
    });

    it('warn: shows the warning', () => {
      const link = aLink({ rules: [aRule({ id: 'rule_w', match: matching, action: { type: 'warn' } })] });
      const outcome = decideFor(link, { profile: visitorIn }).outcome;
      expect(outcome.kind).to.equal('warn');
      expect(outcome.trace).to.include({ step: 'rule', ruleId: 'rule_w' });
      expect(decideFor(link, { profile: visitorOut }).outcome.kind).to.equal('redirect');
    });
  });

  describe('after the visitor acknowledged an interstitial', () => {
    const rows: { title: string; action: RuleAction; kind: string }[] = [
      { title: 'warn continues past the rules', action: { type: 'warn' }, kind: 'redirect' },
      { title: 'a page without a button url continues past the rules', action: { type: 'page', title: 'Note' }, kind: 'redirect' },
      { title: 'a page with a button url still shows (it has no continue)', action: { type: 'page', button_url: 'https://example.org/' }, kind: 'page' },
      { title: 'block still blocks', action: { type: 'block', status: 410 }, kind: 'block' },
    ];
    for (const row of rows) {
      it(row.title, () => {
        const link = aLink({ rules: [aRule({ action: row.action })] });
        expect(decideFor(link, { acknowledged: true }).outcome.kind).to.equal(row.kind);
      });
    }

    it('a later rule is not evaluated once a warn was acknowledged (first match wins)', () => {
      const link = aLink({ rules: [aRule({ action: { type: 'warn' } }), aRule({ id: 'rule_block' })] });
      expect(decideFor(link, { acknowledged: true }).outcome.kind).to.equal('redirect');
    });

    it('the password still applies after an acknowledged warn', () => {
      const link = aLink({ password_hash: 'scrypt$x', rules: [aRule({ action: { type: 'warn' } })] });
      expect(decideFor(link, { acknowledged: true }).outcome.kind).to.equal('password');
    });
  });

  describe('order and selection', () => {
    const toA = { type: 'redirect', url: 'https://a.example/' } as const;
    const toB = { type: 'redirect', url: 'https://b.example/' } as const;

    it('workspace rules come before the link rules', () => {
      const workspace = aWorkspace({ rules: [aRule({ id: 'rule_ws', match: { country: ['DE'] }, action: toA })] });
      const link = aLink({ rules: [aRule({ id: 'rule_link', action: toB })] });
      const german = decideFor(link, { profile: aProfile({ country: 'DE' }) }, workspace).outcome;
      expect(german).to.deep.include({ url: 'https://a.example/' });
      expect(german.trace).to.include({ ruleId: 'rule_ws', workspaceRule: true });
      const french = decideFor(link, { profile: aProfile({ country: 'FR' }) }, workspace).outcome;
      expect(french).to.deep.include({ url: 'https://b.example/' });
      expect(french.trace).to.include({ ruleId: 'rule_link', workspaceRule: false });
    });

    it('a matching workspace pass ends rule evaluation: the link rules are not looked at', () => {
      const workspace = aWorkspace({ rules: [aRule({ id: 'rule_ws', match: { verified_bot: true }, action: { type: 'pass' } })] });
      const link = aLink({ rules: [aRule({ id: 'rule_link' })] });
      expect(decideFor(link, { profile: aProfile({ verifiedBot: true }) }, workspace).outcome.kind).to.equal('redirect');
      expect(decideFor(link, { profile: aProfile({ verifiedBot: false }) }, workspace).outcome.kind).to.equal('block');
    });

    it('workspace_rules_off skips the workspace rules and keeps the link rules', () => {
      const workspace = aWorkspace({ rules: [aRule({ id: 'rule_ws' })] });
      const off = aLink({ workspace_rules_off: true, rules: [aRule({ id: 'rule_link', match: { country: ['FR'] }, action: toB })] });
      expect(decideFor(off, { profile: aProfile({ country: 'DE' }) }, workspace).outcome).to.deep.include({ kind: 'redirect', url: LINK_URL });
      expect(decideFor(off, { profile: aProfile({ country: 'FR' }) }, workspace).outcome).to.deep.include({ url: 'https://b.example/' });
      const on = aLink({ workspace_rules_off: false });
      expect(decideFor(on, {}, workspace).outcome.kind).to.equal('block');
    });

    it('the first matching rule acts, later ones are not evaluated', () => {
      const link = aLink({ rules: [aRule({ id: 'rule_1', match: { device: ['desktop'] }, action: toA }), aRule({ id: 'rule_2', action: toB })] });
      expect(decideFor(link, { profile: aProfile({ device: 'desktop' }) }).outcome.trace.ruleId).to.equal('rule_1');
      expect(decideFor(link, { profile: aProfile({ device: 'mobile' }) }).outcome.trace.ruleId).to.equal('rule_2');
    });

    it('a disabled rule is skipped even when it matches', () => {
      const link = aLink({ rules: [aRule({ id: 'rule_off', enabled: false }), aRule({ id: 'rule_on', match: { country: ['DE'] }, action: toA })] });
      const german = decideFor(link, { profile: aProfile({ country: 'DE' }) }).outcome;
      expect(german.trace.ruleId).to.equal('rule_on');
      const french = decideFor(link, { profile: aProfile({ country: 'FR' }) }).outcome;
      expect(french).to.deep.include({ kind: 'redirect', url: LINK_URL });
      expect(french.trace.ruleId).to.equal(null);
    });

    it('a disabled workspace rule is skipped even when it matches', () => {
      const workspace = aWorkspace({ rules: [aRule({ enabled: false })] });
      expect(decideFor(aLink(), {}, workspace).outcome.kind).to.equal('redirect');
      expect(decideFor(aLink(), {}, aWorkspace({ rules: [aRule({ enabled: true })] })).outcome.kind).to.equal('block');
    });
  });
});
