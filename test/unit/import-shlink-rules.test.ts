import { expect } from 'chai';
import { targetingOfDeviceLongUrls, targetingOfRules, type ShlinkCondition } from '../../src/imports/sources/shlink-rules.ts';

const when = (type: string, matchValue: string | null, matchKey: string | null = null): ShlinkCondition => ({ type, matchKey, matchValue });

describe('import sources: Shlink device URLs and redirect rules as targeting', () => {
  it('maps each device type to the system or device class Shlink reads it from', () => {
    const rules = ['android', 'ios', 'mobile', 'desktop', 'windows', 'macos', 'linux'].map((device, index) => ({ longUrl: `https://example.com/${device}`, priority: index + 1, conditions: [when('device', device)] }));
    const { targeting, warnings } = targetingOfRules(rules);
    expect(warnings).to.deep.equal([]);
    expect(targeting.map((entry) => entry.match)).to.deep.equal([
      { os: ['android'] },
      { os: ['ios'] },
      { os: ['ios', 'android'] },
      { device: ['desktop'] },
      { os: ['windows'] },
      { os: ['macos'] },
      { os: ['linux'] },
    ]);
  });

  it('orders entries by priority and maps language and country conditions, all of a rule together', () => {
    const { targeting } = targetingOfRules([
      { longUrl: 'https://example.com/fr', priority: 2, conditions: [when('language', 'fr')] },
      { longUrl: 'https://example.com/android-us', priority: 1, conditions: [when('device', 'android'), when('language', 'en_US'), when('geolocation-country-code', 'us')] },
    ]);
    expect(targeting).to.deep.equal([
      { match: { os: ['android'], language: ['en-US'], country: ['US'] }, url: 'https://example.com/android-us' },
      { match: { language: ['fr'] }, url: 'https://example.com/fr' },
    ]);
  });

  it('intersects two conditions on one dimension: an Android phone is both android and mobile', () => {
    const { targeting } = targetingOfRules([{ longUrl: 'https://example.com/a', priority: 1, conditions: [when('device', 'mobile'), when('device', 'android')] }]);
    expect(targeting).to.deep.equal([{ match: { os: ['android'] }, url: 'https://example.com/a' }]);
  });

  it('leaves out, and says so, a rule with a condition we cannot match on, never importing it without that condition', () => {
    const { targeting, warnings } = targetingOfRules([
      { longUrl: 'https://example.com/q', priority: 1, conditions: [when('device', 'ios'), when('query-param', 'bar', 'foo')] },
      { longUrl: 'https://example.com/cros', priority: 2, conditions: [when('device', 'chromeos')] },
      { longUrl: 'https://example.com/never', priority: 3, conditions: [when('language', 'en'), when('language', 'fr')] },
      { longUrl: 'https://example.com/all', priority: 4, conditions: [] },
      { longUrl: 'tel:+100', priority: 5, conditions: [when('device', 'ios')] },
      { longUrl: 'https://example.com/ok', priority: 6, conditions: [when('device', 'desktop')] },
    ]);
    expect(targeting).to.deep.equal([{ match: { device: ['desktop'] }, url: 'https://example.com/ok' }]);
    expect(warnings).to.have.length(5);
    expect(warnings[0]).to.contain('redirect rule 1').and.contain('query-param');
    expect(warnings[1]).to.contain('chromeos');
    expect(warnings[2]).to.contain('never hold');
    expect(warnings[3]).to.contain('no conditions');
    expect(warnings[4]).to.contain('not an http(s) URL');
  });

  it('keeps at most 50 entries and names the rules left out', () => {
    const rules = Array.from({ length: 52 }, (_, index) => ({ longUrl: `https://example.com/${index}`, priority: index + 1, conditions: [when('geolocation-country-code', 'FR')] }));
    const { targeting, warnings } = targetingOfRules(rules);
    expect(targeting).to.have.length(50);
    expect(warnings).to.have.length(2);
    expect(warnings[0]).to.contain('redirect rule 51');
  });

  it("maps Shlink 3's device long URLs, skipping the ones not set", () => {
    expect(targetingOfDeviceLongUrls({ android: 'https://example.com/a', ios: null, desktop: 'https://example.com/d' })).to.deep.equal({
      targeting: [
        { match: { os: ['android'] }, url: 'https://example.com/a' },
        { match: { device: ['desktop'] }, url: 'https://example.com/d' },
      ],
      warnings: [],
    });
  });
});
