// A captured click as the redirect publishes it: a plain desktop visitor from France following a plain link, so a
// test states only what it is about (its id and time, and whatever else the test is about).
import type { ClickRecord } from '../../src/visitor/click-record.ts';

export type ClickOverrides = Partial<Omit<ClickRecord, 'decision'>> & { decision?: Partial<ClickRecord['decision']> };

export function aClickRecord(id: string, overrides: ClickOverrides = {}): ClickRecord {
  const { decision, ...rest } = overrides;
  return {
    id,
    ts: new Date().toISOString(),
    workspace_id: 'ws_clicks',
    link_id: 'lnk_plain',
    domain_id: 'dom_default',
    domain: 'lp.test',
    slug: 'abc',
    outcome: 'redirect',
    destination: 'https://example.com/',
    decision: {
      step: 'url',
      ruleId: null,
      workspaceRule: false,
      targetingIndex: null,
      variantIndex: null,
      destinationId: null,
      rotatorFallback: false,
      ...decision,
    },
    visitor: {
      ip: '203.0.113.0',
      device: 'desktop',
      os: 'linux',
      browser: 'Firefox',
      language: 'en',
      country: 'FR',
      region: null,
      city: null,
      asn: null,
      visitor_type: 'human',
      verified_bot: false,
      bot_name: null,
      proxy_type: null,
      quality: 100,
      referer: null,
      visit: 'first',
      visitor_id: 'v_1',
    },
    ...rest,
  };
}
