import { expect } from 'chai';
import type { Mobile } from '../../src/links/link.schemas.ts';
import type { TargetingEntry } from '../../src/rules/rule.schemas.ts';
import type { VisitorProfile } from '../../src/visitor/visitor-profile.ts';
import { finishUrl } from '../../src/redirect/destination.ts';
import { LINK_URL, NOW, aHandheld, aLink, aProfile, aRule, aWorkspace, decideFor } from '../helpers/redirect-builders.ts';

const minutes = (n: number): Date => new Date(NOW.getTime() + n * 60_000);

describe('redirect decision', () => {
  describe('expiry', () => {
    it('answers gone once expires_at has passed, and at the very instant', () => {
      for (const expires_at of [minutes(-1), NOW]) {
        const outcome = decideFor(aLink({ expires_at })).outcome;
        expect(outcome.kind).to.equal('gone');
        expect(outcome.trace.step).to.equal('expired');
      }
    });

    it('redirects before expires_at', () => {
      expect(decideFor(aLink({ expires_at: minutes(1) })).outcome).to.deep.include({ kind: 'redirect', url: LINK_URL });
    });

    it("sends an expired link to expired_url with the link's redirect_type", () => {
      const link = aLink({ expires_at: minutes(-1), expired_url: 'https://example.com/over', redirect_type: 301 });
      expect(decideFor(link).outcome).to.deep.include({ kind: 'redirect', url: 'https://example.com/over', status: 301 });
      expect(decideFor({ ...link, expires_at: minutes(1) }).outcome).to.deep.include({ url: LINK_URL });
    });

    it('comes before the rules', () => {
      const link = aLink({ expires_at: minutes(-1), rules: [aRule({ action: { type: 'redirect', url: 'https://rule.example/' } })] });
      expect(decideFor(link).outcome.kind).to.equal('gone');
    });
  });

  describe('password', () => {
    const locked = aLink({ password_hash: 'scrypt$32768$8$1$salt$hash' });

    it('asks for the password without a valid password cookie', () => {
      const outcome = decideFor(locked, { passwordOk: false }).outcome;
      expect(outcome.kind).to.equal('password');
      expect(outcome.trace.step).to.equal('password');
    });

    it('redirects with a valid password cookie', () => {
      expect(decideFor(locked, { passwordOk: true }).outcome).to.deep.include({ kind: 'redirect', url: LINK_URL });
    });

    it('does not ask on a link without a password', () => {
      expect(decideFor(aLink(), { passwordOk: false }).outcome.kind).to.equal('redirect');
    });

    it('comes after the rules: a blocked visitor never sees the form', () => {
      const link = { ...locked, rules: [aRule({ match: { country: ['DE'] } })] };
      expect(decideFor(link, { profile: aProfile({ country: 'DE' }) }).outcome.kind).to.equal('block');
      expect(decideFor(link, { profile: aProfile({ country: 'FR' }) }).outcome.kind).to.equal('password');
    });
  });

  describe('targeting', () => {
    const rows: { title: string; match: TargetingEntry['match']; holds: Partial<VisitorProfile>; fails: Partial<VisitorProfile> }[] = [
      { title: 'country', match: { country: ['US', 'CA'] }, holds: { country: 'CA' }, fails: { country: 'MX' } },
      { title: 'country (unknown country never matches)', match: { country: ['US'] }, holds: { country: 'US' }, fails: { country: null } },
      { title: 'device', match: { device: ['tablet'] }, holds: { device: 'tablet' }, fails: { device: 'mobile' } },
      { title: 'os', match: { os: ['ios', 'macos'] }, holds: { os: 'macos' }, fails: { os: 'android' } },
      { title: 'language', match: { language: ['fr'] }, holds: { languages: ['fr-ca', 'en'] }, fails: { languages: ['en-ca'] } },
      { title: 'every given dimension', match: { country: ['US'], os: ['android'] }, holds: { country: 'US', os: 'android' }, fails: { country: 'US', os: 'ios' } },
    ];
    for (const row of rows) {
      it(`${row.title}: sends a matching visitor to the entry's url, others to the link url`, () => {
        const link = aLink({ redirect_type: 307, targeting: [{ match: row.match, url: 'https://t.example/' }] });
        const hit = decideFor(link, { profile: aProfile(row.holds) }).outcome;
        expect(hit).to.deep.include({ kind: 'redirect', url: 'https://t.example/', status: 307 });
        expect(hit.trace).to.include({ step: 'targeting', targetingIndex: 0 });
        const miss = decideFor(link, { profile: aProfile(row.fails) }).outcome;
        expect(miss).to.deep.include({ kind: 'redirect', url: LINK_URL });
        expect(miss.trace).to.include({ step: 'url', targetingIndex: null });
      });
    }

    it('the first matching entry wins', () => {
      const link = aLink({
        targeting: [
          { match: { country: ['FR'] }, url: 'https://fr.example/' },
          { match: { device: ['desktop'] }, url: 'https://desktop.example/' },
          { match: { country: ['DE'] }, url: 'https://de.example/' },
        ],
      });
      const german = decideFor(link, { profile: aProfile({ country: 'DE', device: 'desktop' }) }).outcome;
      expect(german).to.deep.include({ url: 'https://desktop.example/' });
      expect(german.trace.targetingIndex).to.equal(1);
      expect(decideFor(link, { profile: aProfile({ country: 'DE', device: 'mobile' }) }).outcome).to.deep.include({ url: 'https://de.example/' });
    });

    it('comes after the password', () => {
      const link = aLink({ password_hash: 'scrypt$x', targeting: [{ match: { country: ['DE'] }, url: 'https://de.example/' }] });
      expect(decideFor(link, { passwordOk: false }).outcome.kind).to.equal('password');
      expect(decideFor(link, { passwordOk: true }).outcome).to.deep.include({ url: 'https://de.example/' });
    });
  });

  describe('mobile', () => {
    const ios = { app_url: 'myapp://item/42', store_url: 'https://apps.apple.com/app/id123', web_url: 'https://m.example.com/ios' };
    const android = { app_url: 'intent://item/42#Intent;scheme=myapp;end', store_url: 'https://play.google.com/store/apps/details?id=com.example', web_url: 'https://m.example.com/android' };
    const mobile = (overrides: Partial<Mobile> = {}): Mobile => ({ enabled: true, ios, android, tablet: 'mobile', in_app: 'attempt', delay_ms: 1600, deferred: false, ...overrides });
    const decideMobileFor = (settings: Mobile, profile: VisitorProfile, state: { clickId?: string | null } = {}) => decideFor(aLink({ mobile: settings }), { profile, ...state }).outcome;

    it('attempt: opens the app launcher with the store as fallback', () => {
      const outcome = decideMobileFor(mobile({ delay_ms: 2500 }), aHandheld('mobile', 'ios'));
      expect(outcome).to.deep.include({ kind: 'app', appUrl: 'myapp://item/42', fallbackUrl: ios.store_url, delayMs: 2500, platform: 'ios' });
      expect(outcome.trace.step).to.equal('mobile');
      expect(decideMobileFor(mobile(), aHandheld('mobile', 'android'))).to.deep.include({ kind: 'app', appUrl: android.app_url, platform: 'android' });
    });

    it('attempt: falls back to the web url without a store url, to the link url without either', () => {
      expect(decideMobileFor(mobile({ ios: { app_url: ios.app_url, web_url: ios.web_url } }), aHandheld('mobile', 'ios'))).to.deep.include({ fallbackUrl: ios.web_url });
      expect(decideMobileFor(mobile({ ios: { app_url: ios.app_url } }), aHandheld('mobile', 'ios'))).to.deep.include({ fallbackUrl: LINK_URL });
    });

    it('attempt without an app url: acts as store', () => {
      expect(decideMobileFor(mobile({ ios: { store_url: ios.store_url, web_url: ios.web_url } }), aHandheld('mobile', 'ios'))).to.deep.include({ kind: 'redirect', url: ios.store_url });
    });

    it('store: redirects to the store, else the web url', () => {
      expect(decideMobileFor(mobile({ in_app: 'store' }), aHandheld('mobile', 'android'))).to.deep.include({ kind: 'redirect', url: android.store_url });
      expect(decideMobileFor(mobile({ in_app: 'store', android: { web_url: android.web_url } }), aHandheld('mobile', 'android'))).to.deep.include({ kind: 'redirect', url: android.web_url });
    });

    it('web: redirects to the web url, else continues to the link url', () => {
      expect(decideMobileFor(mobile({ in_app: 'web' }), aHandheld('mobile', 'ios'))).to.deep.include({ kind: 'redirect', url: ios.web_url });
      const none = decideMobileFor(mobile({ in_app: 'web', ios: { app_url: ios.app_url } }), aHandheld('mobile', 'ios'));
      expect(none).to.deep.include({ kind: 'redirect', url: LINK_URL });
      expect(none.trace.step).to.equal('url');
    });

    it("tablet 'mobile': a tablet gets the launcher", () => {
      expect(decideMobileFor(mobile({ tablet: 'mobile', desktop_url: 'https://desktop.example/' }), aHandheld('tablet', 'ios')).kind).to.equal('app');
    });

    it("tablet 'desktop': a tablet gets desktop_url, a phone still the launcher", () => {
      const settings = mobile({ tablet: 'desktop', desktop_url: 'https://desktop.example/' });
      expect(decideMobileFor(settings, aHandheld('tablet', 'android'))).to.deep.include({ kind: 'redirect', url: 'https://desktop.example/' });
      expect(decideMobileFor(settings, aHandheld('mobile', 'android')).kind).to.equal('app');
    });

    it('desktop: goes to desktop_url when set, else to the link url', () => {
      const withDesktop = decideMobileFor(mobile({ desktop_url: 'https://desktop.example/' }), aProfile({ device: 'desktop', os: 'macos' }));
      expect(withDesktop).to.deep.include({ kind: 'redirect', url: 'https://desktop.example/' });
      expect(withDesktop.trace.step).to.equal('mobile');
      expect(decideMobileFor(mobile(), aProfile({ device: 'desktop' }))).to.deep.include({ kind: 'redirect', url: LINK_URL });
    });

    it('a phone on a platform without a config, or on another OS, continues to the link url', () => {
      expect(decideMobileFor(mobile({ ios: undefined }), aHandheld('mobile', 'ios'))).to.deep.include({ url: LINK_URL });
      expect(decideMobileFor(mobile(), aProfile({ device: 'mobile', os: 'other' }))).to.deep.include({ url: LINK_URL });
    });

    it('does nothing when not enabled', () => {
      expect(decideMobileFor(mobile({ enabled: false, desktop_url: 'https://desktop.example/' }), aHandheld('mobile', 'ios'))).to.deep.include({ kind: 'redirect', url: LINK_URL });
    });

    it('deferred: the Google Play url carries the click id and slug in its referrer parameter', () => {
      const outcome = decideMobileFor(mobile({ deferred: true, in_app: 'store' }), aHandheld('mobile', 'android'), { clickId: 'clk_abc' });
      expect(outcome.kind).to.equal('redirect');
      const url = new URL((outcome as { url: string }).url);
      expect(url.hostname).to.equal('play.google.com');
      expect(url.searchParams.get('id')).to.equal('com.example');
      expect(url.searchParams.get('referrer')).to.equal('lp_click_id=clk_abc&lp_link=promo');
      expect(url.search).to.contain('referrer=lp_click_id%3Dclk_abc%26lp_link%3Dpromo');
    });

    it('deferred: the launcher fallback and market: urls carry it too; without deferred they do not', () => {
      const market = { ...android, store_url: 'market://details?id=com.example' };
      const app = decideMobileFor(mobile({ deferred: true, android: market }), aHandheld('mobile', 'android'), { clickId: 'clk_1' });
      expect(app).to.deep.include({ kind: 'app', fallbackUrl: 'market://details?id=com.example&referrer=lp_click_id%3Dclk_1%26lp_link%3Dpromo' });
      const plain = decideMobileFor(mobile({ deferred: false, android: market }), aHandheld('mobile', 'android'), { clickId: 'clk_1' });
      expect(plain).to.deep.include({ fallbackUrl: 'market://details?id=com.example' });
    });

    it('deferred: the App Store url is left unchanged (it has no install referrer)', () => {
      const outcome = decideMobileFor(mobile({ deferred: true, in_app: 'store' }), aHandheld('mobile', 'ios'), { clickId: 'clk_abc' });
      expect(outcome).to.deep.include({ url: ios.store_url });
    });

    it('comes after targeting', () => {
      const link = aLink({ mobile: mobile(), targeting: [{ match: { os: ['ios'] }, url: 'https://t.example/' }] });
      expect(decideFor(link, { profile: aHandheld('mobile', 'ios') }).outcome).to.deep.include({ url: 'https://t.example/' });
      expect(decideFor(link, { profile: aHandheld('mobile', 'android') }).outcome.kind).to.equal('app');
    });
  });

  describe('UTM merge and click id', () => {
    const query = (text: string) => new URLSearchParams(text);
    const tracking = aWorkspace({ conversionTracking: true });

    it("adds the short URL's utm_* parameters the destination does not set", () => {
      const link = aLink({ url: 'https://example.com/p?utm_source=owner&x=1' });
      const outcome = decideFor(link, { query: query('utm_source=visitor&utm_medium=social&ref=abc') }).outcome;
      expect(outcome).to.deep.include({ url: 'https://example.com/p?utm_source=owner&x=1&utm_medium=social' });
    });

    it('leaves the destination unchanged without utm parameters', () => {
      const link = aLink({ url: 'https://example.com/p?a=%7E&b#top' });
      expect(decideFor(link, { query: query('ref=abc') }).outcome).to.deep.include({ url: 'https://example.com/p?a=%7E&b#top' });
    });

    it('keeps the fragment after the query', () => {
      const link = aLink({ url: 'https://example.com/p#section-2' });
      expect(decideFor(link, { query: query('utm_campaign=spring sale') }).outcome).to.deep.include({ url: 'https://example.com/p?utm_campaign=spring%20sale#section-2' });
    });

    it('appends lp_click_id when the workspace tracks conversions and a click id is given', () => {
      expect(decideFor(aLink(), { clickId: 'clk_1' }, tracking).outcome).to.deep.include({ url: `${LINK_URL}?lp_click_id=clk_1` });
      expect(decideFor(aLink(), { clickId: 'clk_1' }, aWorkspace({ conversionTracking: false })).outcome).to.deep.include({ url: LINK_URL });
      expect(decideFor(aLink(), { clickId: 'clk_1' }, null).outcome).to.deep.include({ url: LINK_URL });
      expect(decideFor(aLink(), { clickId: null }, tracking).outcome).to.deep.include({ url: LINK_URL });
    });

    it("replaces a click id the destination already carries (only ours can be verified)", () => {
      const link = aLink({ url: 'https://example.com/?lp_click_id=stale&a=1' });
      expect(decideFor(link, { clickId: 'clk_2' }, tracking).outcome).to.deep.include({ url: 'https://example.com/?a=1&lp_click_id=clk_2' });
    });

    it('applies to a rule redirect, a targeting url and a mobile web url alike', () => {
      const state = { query: query('utm_source=nl'), clickId: 'clk_3' };
      const rule = aLink({ rules: [aRule({ action: { type: 'redirect', url: 'https://r.example/' } })] });
      expect(decideFor(rule, state, tracking).outcome).to.deep.include({ url: 'https://r.example/?utm_source=nl&lp_click_id=clk_3' });
      const targeting = aLink({ targeting: [{ match: { country: ['DE'] }, url: 'https://t.example/?a=1' }] });
      expect(decideFor(targeting, state, tracking).outcome).to.deep.include({ url: 'https://t.example/?a=1&utm_source=nl&lp_click_id=clk_3' });
      const web = aLink({ mobile: { enabled: true, in_app: 'web', tablet: 'mobile', delay_ms: 1600, deferred: false, ios: { web_url: 'https://m.example/' } } });
      expect(decideFor(web, { ...state, profile: aHandheld('mobile', 'ios') }, tracking).outcome).to.deep.include({ url: 'https://m.example/?utm_source=nl&lp_click_id=clk_3' });
    });

    it('finishUrl handles a bare query mark and a trailing ampersand', () => {
      const utm = query('utm_term=x');
      expect(finishUrl('https://e.com/?', utm, null)).to.equal('https://e.com/?utm_term=x');
      expect(finishUrl('https://e.com/?a=1&', utm, null)).to.equal('https://e.com/?a=1&utm_term=x');
      expect(finishUrl('https://e.com/?utm_term=', utm, null), 'an empty owner value still wins').to.equal('https://e.com/?utm_term=');
    });
  });

  describe('trace', () => {
    it('records the pass rule that let the visitor through and the step that decided', () => {
      const workspace = aWorkspace({ rules: [aRule({ id: 'rule_ws_pass', action: { type: 'pass' } })] });
      const link = aLink({ targeting: [{ match: { country: ['DE'] }, url: 'https://de.example/' }] });
      expect(decideFor(link, {}, workspace).outcome.trace).to.deep.equal({
        step: 'targeting',
        ruleId: 'rule_ws_pass',
        workspaceRule: true,
        targetingIndex: 0,
        variantIndex: null,
        destinationId: null,
        rotatorFallback: false,
      });
    });

    it('is empty but for the step on a plain link', () => {
      expect(decideFor(aLink()).outcome.trace).to.deep.equal({ step: 'url', ruleId: null, workspaceRule: false, targetingIndex: null, variantIndex: null, destinationId: null, rotatorFallback: false });
    });
  });
});
