import { expect } from 'chai';
import type { ClickRecord } from '../../src/visitor/click-record.ts';
import { decodeClicks, encodeClicks, WIRE_FORMAT } from '../../src/clicks/click-wire.ts';

function aClick(overrides: Partial<ClickRecord> = {}, visitor: Partial<ClickRecord['visitor']> = {}): ClickRecord {
  return {
    id: `clk_${Math.random().toString(36).slice(2)}`,
    ts: '2026-11-22T05:00:00.123Z',
    workspace_id: 'ws_wire',
    link_id: 'lnk_one',
    domain_id: 'dom_default',
    domain: 'lnk.test',
    slug: 'promo',
    outcome: 'redirect',
    destination: 'https://example.com/landing?utm_source=x',
    decision: { step: 'url', ruleId: null, workspaceRule: false, targetingIndex: null, variantIndex: null, destinationId: null, rotatorFallback: false },
    visitor: {
      ip: '203.0.113.0',
      device: 'desktop',
      os: 'windows',
      browser: 'Chrome',
      language: 'en-us',
      country: null,
      region: null,
      city: null,
      asn: null,
      visitor_type: 'human',
      verified_bot: false,
      bot_name: null,
      proxy_type: null,
      quality: 90,
      referer: null,
      visit: 'first',
      visitor_id: 'v1',
      ...visitor,
    },
    ...overrides,
  };
}

describe('click wire format', () => {
  it('round-trips clicks with every field set and with every nullable field null', () => {
    const full = aClick(
      {
        outcome: 'redirect',
        decision: { step: 'rotator', ruleId: 'rule-1', workspaceRule: true, targetingIndex: 3, variantIndex: 1, destinationId: 'dst-2', rotatorFallback: true },
      },
      { country: 'DE', region: 'Berlin', city: 'Berlin', asn: 3320, visitor_type: 'search_bot', verified_bot: true, bot_name: 'Googlebot', proxy_type: 'DCH', referer: 'https://news.example/', visit: 'repeat', quality: 0 },
    );
    const bare = aClick({ outcome: 'password', destination: null }, { ip: null, browser: null, language: null });
    const clicks = [full, bare, aClick({ slug: 'other', link_id: 'lnk_two' })];
    expect(decodeClicks(JSON.parse(encodeClicks('ws_wire', clicks)))).to.deep.equal(clicks);
  });

  it('writes what clicks share once: far smaller than the same clicks as JSON objects', () => {
    const clicks = Array.from({ length: 200 }, (_, i) => aClick({}, { visitor_id: `visitor-${i}` }));
    const compact = encodeClicks('ws_wire', clicks);
    expect(compact.length * 3).to.be.below(JSON.stringify(clicks).length);
    expect(JSON.parse(compact)[0]).to.equal(WIRE_FORMAT);
  });

  it('still reads plain JSON clicks, one or an array', () => {
    const click = aClick();
    expect(decodeClicks(JSON.parse(JSON.stringify(click)))).to.deep.equal([click]);
    expect(decodeClicks(JSON.parse(JSON.stringify([click, click])))).to.deep.equal([click, click]);
  });

  const malformed: [string, unknown][] = [
    ['an empty compact message', [WIRE_FORMAT, 'ws', [], []]],
    ['a string reference out of the table', [WIRE_FORMAT, 'ws', ['a'], [['clk_1', 5, 0, 0, 0, 0, 0, -1, [0, -1, 0, -1, -1, -1, 0], [-1, 0, 0, -1, -1, -1, -1, -1, -1, 0, 0, -1, -1, 50, -1, 0, 'v']]]]],
    ['a tuple of the wrong length', [WIRE_FORMAT, 'ws', ['a'], [['clk_1', 0]]]],
    ['a time that is not a date', [WIRE_FORMAT, 'ws', ['not a date'], [['clk_1', 0, 0, 0, 0, 0, 0, -1, [0, -1, 0, -1, -1, -1, 0], [-1, 0, 0, -1, -1, -1, -1, -1, -1, 0, 0, -1, -1, 50, -1, 0, 'v']]]]],
    ['an object that is not a click', { hello: 'world' }],
    ['a number', 42],
  ];
  for (const [what, body] of malformed) {
    it(`refuses ${what}`, () => {
      expect(decodeClicks(body)).to.equal(null);
    });
  }
});
