// The link builders and the bound tables of spec 2.1–2.6, shared by the schema unit test (test/unit/link-schemas.test.ts)
// and the same bounds over HTTP (test/integration/link-bounds.test.ts): one set of rows, two levels.

export type Obj = Record<string, unknown>;

// The enumerations of spec 2.4, written out here so that a change in the schema file cannot change the test.
export const VISITOR_TYPES = ['human', 'search_bot', 'social_preview', 'seo_crawler', 'ai_crawler', 'monitoring', 'security_scanner', 'library', 'headless', 'feed_reader', 'automated', 'datacenter', 'proxy', 'vpn', 'tor', 'unknown'];
export const PROXY_TYPES = ['DCH', 'PUB', 'VPN', 'SES', 'TOR', 'WEB'];

export const chars = (n: number, c = 'a'): string => c.repeat(n);
export const items = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => structuredClone(value));
/** An https URL of exactly n characters. */
export const urlOf = (n: number): string => `https://example.com/${chars(n - 20)}`;
/** An app deep link of exactly n characters. */
export const appUrlOf = (n: number): string => `myapp://${chars(n - 8)}`;

/** Sets `value` at a path like `rules[0].match.asn[0]`; the parent must exist in the fixture. */
function setAt(root: unknown, path: string, value: unknown): void {
  const keys = path.match(/[^.[\]]+/g) ?? [];
  let node = root as Obj;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== 'object') throw new Error(`the fixture has nothing at "${key}" of ${path}`);
    node = next as Obj;
  }
  node[keys.at(-1)!] = value;
}

/** A copy of the fixture with `value` at `path`. */
export function withValue<T>(fixture: T, path: string, value: unknown): T {
  const copy = structuredClone(fixture);
  setAt(copy, path, value);
  return copy;
}

/** A short rendering of a row value for test titles. */
export function show(value: unknown): string {
  if (typeof value === 'string') return value.length > 24 ? `${value.length} chars` : JSON.stringify(value);
  if (Array.isArray(value)) return `${value.length} items`;
  const json = JSON.stringify(value);
  return json.length > 40 ? 'an object' : json;
}

export interface Bound {
  path: string;
  ok: unknown;
  bad: unknown;
  /** The path the error must name; the field itself unless said otherwise. */
  at: string;
}
/** A row: `ok` at `path` is at the limit (valid), `bad` one past it (refused, naming `at`). */
export const b = (path: string, ok: unknown, bad: unknown, at = path): Bound => ({ path, ok, bad, at });

// ---------------------------------------------------------------------------------------------------------------
// Builders: every one is valid as built; overrides replace top-level fields.
// ---------------------------------------------------------------------------------------------------------------

export function aLink(overrides: Obj = {}): Obj {
  return { url: 'https://example.com/landing', ...overrides };
}

export function aTargeting(overrides: Obj = {}): Obj {
  return { match: { country: ['FR', 'BE'], device: ['mobile'], os: ['ios', 'android'], language: ['fr', 'nl-BE'] }, url: 'https://example.com/fr', ...overrides };
}

export function aVariant(overrides: Obj = {}): Obj {
  return { url: 'https://example.com/a', weight: 50, label: 'Control', ...overrides };
}

export function anAbTest(overrides: Obj = {}): Obj {
  return {
    enabled: true,
    variants: [aVariant(), aVariant({ url: 'https://example.com/b', label: 'Challenger' })],
    auto: {
      enabled: true,
      min_sample: 500,
      warmup_until: '2030-01-01T00:00:00Z',
      weights: [50, 50],
      samples: { clicks: [120, 130], conversions: [4, 9] },
      winner_index: 1,
      stopped_at: '2030-02-01T12:00:00+01:00',
    },
    ...overrides,
  };
}

/** A match that uses all 18 conditions. */
export function aFullMatch(): Obj {
  return {
    visitor_type: ['search_bot', 'ai_crawler'],
    verified_bot: true,
    proxy_type: ['VPN', 'TOR'],
    quality_below: 40,
    country: ['US', 'CA'],
    region: ['Ontario'],
    city: ['Toronto'],
    asn: [13335],
    ip: ['203.0.113.0/24'],
    user_agent: 'curl',
    referer: 'news.example.org',
    has_utm: false,
    device: ['desktop'],
    language: ['en'],
    local_time: { from: 22, to: 6 },
    weekday: [6, 7],
    visit: 'first',
    ip_list_ids: ['ipl_blocklist'],
  };
}

export function aRule(overrides: Obj = {}): Obj {
  return { id: 'rule_bots', enabled: true, label: 'Bots', invert: false, match: { visitor_type: ['search_bot'] }, action: { type: 'block', status: 410 }, ...overrides };
}

export function aPageAction(overrides: Obj = {}): Obj {
  return { type: 'page', title: 'Hold on', text: 'This link is not for you.', button_label: 'Home', button_url: 'https://example.com/', ...overrides };
}

export function aMobile(overrides: Obj = {}): Obj {
  return {
    enabled: true,
    ios: { app_url: 'myapp://product/42', store_url: 'https://apps.apple.com/app/id1', web_url: 'https://example.com/ios' },
    android: { app_url: 'intent://product/42#Intent;scheme=myapp;end', store_url: 'market://details?id=com.example', web_url: 'https://example.com/android' },
    desktop_url: 'https://example.com/desktop',
    tablet: 'desktop',
    in_app: 'store',
    delay_ms: 2000,
    deferred: true,
    ...overrides,
  };
}

export function aDestination(overrides: Obj = {}): Obj {
  return {
    id: 'dst_a',
    url: 'https://example.com/a',
    weight: 3,
    active: true,
    limits: { max_total_clicks: 1000, max_daily_clicks: 100, starts_at: '2030-01-01T00:00:00Z' },
    ...overrides,
  };
}

export function aRotator(overrides: Obj = {}): Obj {
  return {
    enabled: true,
    mode: 'round_robin',
    sticky_ttl_seconds: 3600,
    fallback_url: 'https://example.com/fallback',
    auto_disable_unhealthy: true,
    destinations: [aDestination(), aDestination({ id: 'dst_b', url: 'https://example.com/b', limits: null })],
    ...overrides,
  };
}

/** A create body that uses every field, with one rule per action type (rules[0] block … rules[4] warn). */
export function aFullLink(overrides: Obj = {}): Obj {
  return aLink({
    domain_id: 'dom_default',
    slug: 'spring-sale',
    title: 'Spring sale',
    note: 'For the newsletter',
    folder_id: 'fld_campaigns',
    tag_ids: ['tag_spring', 'tag_email'],
    redirect_type: 301,
    expires_at: '2030-06-01T00:00:00Z',
    expired_url: 'https://example.com/expired',
    password: 'hunter2',
    targeting: [aTargeting()],
    ab_test: anAbTest(),
    rules: [
      aRule({ match: aFullMatch() }),
      aRule({ id: 'rule_redirect', action: { type: 'redirect', url: 'https://example.com/bots' } }),
      aRule({ id: 'rule_page', action: aPageAction() }),
      aRule({ id: 'rule_pass', action: { type: 'pass' } }),
      aRule({ id: 'rule_warn', action: { type: 'warn' } }),
    ],
    workspace_rules_off: true,
    mobile: aMobile(),
    rotator: aRotator(),
    preview: { title: 'Spring sale', description: 'Up to 50 % off', image: 'https://cdn.example.com/spring.png' },
    utm: { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring', utm_term: 'shoes', utm_content: 'hero' },
    ...overrides,
  });
}

/** A response link (spec 2.1) with every field set. */
export function aLinkView(overrides: Obj = {}): Obj {
  const { utm: _utm, password: _password, tag_ids: _tagIds, ...content } = aFullLink();
  return {
    ...content,
    id: 'lnk_01HV',
    short_url: 'https://lnk.example/spring-sale',
    domain: 'lnk.example',
    tags: [
      { id: 'tag_spring', name: 'Spring', color: '#22aa55' },
      { id: 'tag_email', name: 'Email', color: null },
    ],
    has_password: true,
    archived: false,
    destination_preview: { title: 'Spring', description: null, image: null, fetched_at: '2030-01-01T00:00:00.000Z' },
    moderation: null,
    imported: null,
    created_at: '2030-01-01T00:00:00.000Z',
    updated_at: '2030-01-02T00:00:00.000Z',
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Bound tables of LinkCreate: each row is applied to aFullLink(), so every other field stays at a valid value.
// ---------------------------------------------------------------------------------------------------------------

/** Link fields (2.1 and published decisions). */
function linkFieldRows(): Bound[] {
  const tagIds = (n: number) => Array.from({ length: n }, (_, i) => `tag_${i}`);
  const utmRows = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'].flatMap((k) => [
    b(`utm.${k}`, chars(1), ''),
    b(`utm.${k}`, chars(200), chars(201)),
  ]);
  return [
    b('slug', chars(1), ''),
    b('slug', chars(100), chars(101)),
    b('slug', 'Summer_Sale-2', '-summer'),
    b('slug', '9lives', 'a/b'),
    b('title', chars(200), chars(201)),
    b('title', null, 42),
    b('preview', null, 'a card'),
    b('preview.title', chars(1), ''),
    b('preview.title', chars(120), chars(121)),
    b('preview.description', chars(300), chars(301)),
    b('preview.description', null, ''),
    b('preview.image', 'https://cdn.example.com/a.png', 'http://cdn.example.com/a.png'),
    b('preview.image', null, 'javascript:alert(1)'),
    b('note', chars(2000), chars(2001)),
    b('note', null, false),
    b('url', urlOf(8192), urlOf(8193)),
    b('url', 'http://example.com', 'example.com'),
    b('expired_url', urlOf(8192), urlOf(8193)),
    b('expired_url', null, ''),
    b('domain_id', chars(3), chars(2)),
    b('domain_id', chars(64), chars(65)),
    b('folder_id', chars(3), chars(2)),
    b('folder_id', chars(64), chars(65)),
    b('folder_id', null, 7),
    b('tag_ids', tagIds(20), tagIds(21)),
    b('tag_ids', [], ['tag_a', 'tag_a']),
    b('tag_ids[0]', chars(3), chars(2)),
    b('tag_ids[0]', chars(64), chars(65)),
    b('password', chars(1), ''),
    b('password', chars(128), chars(129)),
    b('password', null, 1234),
    b('expires_at', '2030-01-01T00:00:00+02:00', '2030-01-01'),
    b('expires_at', null, 'tomorrow'),
    b('redirect_type', 308, 303),
    b('redirect_type', 307, '302'),
    b('workspace_rules_off', false, 'false'),
    b('utm', {}, 'utm_source=x'),
    ...utmRows,
  ];
}

/** targeting (2.2). */
function targetingRows(): Bound[] {
  const M = 'targeting[0].match';
  return [
    b('targeting', items(50, aTargeting()), items(51, aTargeting())),
    b('targeting', [], {}),
    b(`${M}.country`, items(50, 'FR'), items(51, 'FR')),
    b(`${M}.country`, ['FR'], []),
    b(`${M}.country[0]`, 'DE', 'de'),
    b(`${M}.country[0]`, 'GB', 'GBR'),
    b(`${M}.device`, ['desktop', 'mobile', 'tablet'], []),
    b(`${M}.device[0]`, 'tablet', 'tv'),
    b(`${M}.os`, ['ios', 'android', 'windows', 'macos', 'linux', 'other'], []),
    b(`${M}.os[0]`, 'macos', 'beos'),
    b(`${M}.language`, items(20, 'en'), items(21, 'en')),
    b(`${M}.language`, ['en'], []),
    b(`${M}.language[0]`, 'pt-BR', 'english'),
    b(`${M}.language[0]`, 'zh-Hant', 'EN'),
    b(`${M}.language[0]`, 'gsw', 'e'),
    b(`${M}.language[0]`, 'en-12345678', 'en-123456789'),
    b(`${M}.language[0]`, 'en-GB', 'en-G'),
    b(`${M}.language[0]`, 'es-419', 'engl'),
    b(M, { os: ['linux'] }, {}),
    b('targeting[0].url', urlOf(8192), urlOf(8193)),
  ];
}

/** ab_test (2.3). */
function abTestRows(): Bound[] {
  const A = 'ab_test.auto';
  const max = Number.MAX_SAFE_INTEGER; // 9007199254740991
  return [
    b('ab_test', null, []),
    b('ab_test.variants', items(10, aVariant()), items(11, aVariant())),
    b('ab_test.variants', [aVariant()], []),
    b('ab_test.variants[0].url', urlOf(8192), urlOf(8193)),
    b('ab_test.variants[0].weight', 1, 0),
    b('ab_test.variants[0].weight', 100, 101),
    b('ab_test.variants[0].weight', 50, 50.5),
    b('ab_test.variants[0].label', chars(40), chars(41)),
    b('ab_test.enabled', false, 'yes'),
    b(`${A}.enabled`, false, 0),
    b(`${A}.min_sample`, 10, 9),
    b(`${A}.min_sample`, 1_000_000_000, 1_000_000_001),
    b(`${A}.warmup_until`, '2030-01-01T00:00:00+05:30', '2030-01-01 00:00'),
    b(`${A}.stopped_at`, '2030-01-01T00:00:00Z', '1 January 2030'),
    b(`${A}.weights`, items(10, 10), items(11, 10)),
    b(`${A}.weights[0]`, 1, 0),
    b(`${A}.weights[0]`, 100, 101),
    b(`${A}.samples.clicks`, items(10, 0), items(11, 0)),
    b(`${A}.samples.clicks[0]`, 0, -1),
    b(`${A}.samples.clicks[0]`, max, max + 1),
    b(`${A}.samples.conversions`, items(10, 0), items(11, 0)),
    b(`${A}.samples.conversions[0]`, 0, -1),
    b(`${A}.samples.conversions[0]`, max, max + 1),
    b(`${A}.winner_index`, 0, -1),
    b(`${A}.winner_index`, 9, 10),
  ];
}

/** rules (2.4): every match field and every action. */
function ruleRows(): Bound[] {
  const M = 'rules[0].match';
  return [
    b('rules', items(20, aRule()), items(21, aRule())),
    b('rules[0].id', chars(3), chars(2)),
    b('rules[0].id', chars(40), chars(41)),
    b('rules[0].label', chars(80), chars(81)),
    b('rules[0].enabled', false, 'true'),
    b('rules[0].invert', true, 1),
    b('rules[0].match', {}, []),
    b(`${M}.visitor_type`, [...VISITOR_TYPES], [...VISITOR_TYPES, 'human']),
    b(`${M}.visitor_type`, ['human'], []),
    b(`${M}.visitor_type[0]`, 'unknown', 'alien'),
    b(`${M}.verified_bot`, false, 'yes'),
    b(`${M}.proxy_type`, [...PROXY_TYPES], [...PROXY_TYPES, 'VPN']),
    b(`${M}.proxy_type`, ['DCH'], []),
    b(`${M}.proxy_type[0]`, 'WEB', 'vpn'),
    b(`${M}.quality_below`, 1, 0),
    b(`${M}.quality_below`, 100, 101),
    b(`${M}.country`, items(250, 'US'), items(251, 'US')),
    b(`${M}.country`, ['US'], []),
    b(`${M}.country[0]`, 'JP', 'jp'),
    b(`${M}.region`, items(100, 'Ontario'), items(101, 'Ontario')),
    b(`${M}.region`, ['Ontario'], []),
    b(`${M}.region[0]`, chars(1), ''),
    b(`${M}.region[0]`, chars(80), chars(81)),
    b(`${M}.city`, items(100, 'Toronto'), items(101, 'Toronto')),
    b(`${M}.city`, ['Toronto'], []),
    b(`${M}.city[0]`, chars(1), ''),
    b(`${M}.city[0]`, chars(120), chars(121)),
    b(`${M}.asn`, items(200, 13335), items(201, 13335)),
    b(`${M}.asn`, [13335], []),
    b(`${M}.asn[0]`, 1, 0),
    b(`${M}.asn[0]`, 4_294_967_295, 4_294_967_296),
    b(`${M}.asn[0]`, 64512, 64512.5),
    b(`${M}.ip`, items(1000, '10.0.0.0/8'), items(1001, '10.0.0.0/8')),
    b(`${M}.ip`, ['::1'], []),
    // The length bounds, at values that are also valid addresses (entries must parse as an IP or CIDR too).
    b(`${M}.ip[0]`, '::', chars(1, '1')),
    b(`${M}.ip[0]`, 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255/128', chars(50, '1')),
    b(`${M}.user_agent`, chars(1), ''),
    b(`${M}.user_agent`, chars(200), chars(201)),
    b(`${M}.referer`, chars(1), ''),
    b(`${M}.referer`, chars(200), chars(201)),
    b(`${M}.has_utm`, true, 1),
    b(`${M}.device`, ['desktop', 'mobile', 'tablet'], ['desktop', 'mobile', 'tablet', 'mobile']),
    b(`${M}.device`, ['mobile'], []),
    b(`${M}.device[0]`, 'tablet', 'watch'),
    b(`${M}.language`, items(20, 'de'), items(21, 'de')),
    b(`${M}.language`, ['de'], []),
    b(`${M}.language[0]`, 'de-CH', 'de_CH'),
    b(`${M}.local_time.from`, 0, -1),
    b(`${M}.local_time.from`, 23, 24),
    b(`${M}.local_time.to`, 0, -1),
    b(`${M}.local_time.to`, 23, 24),
    b(`${M}.local_time.to`, 12, '12'),
    b(`${M}.weekday`, [1, 2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 5, 6, 7, 1]),
    b(`${M}.weekday`, [1], []),
    b(`${M}.weekday[0]`, 1, 0),
    b(`${M}.weekday[0]`, 7, 8),
    b(`${M}.visit`, 'repeat', 'second'),
    b(`${M}.ip_list_ids`, items(5, 'ipl_x'), items(6, 'ipl_x')),
    b(`${M}.ip_list_ids`, ['ipl_x'], []),
    b(`${M}.ip_list_ids[0]`, chars(3), chars(2)),
    b(`${M}.ip_list_ids[0]`, chars(40), chars(41)),
    b('rules[0].action.status', 404, 403),
    b('rules[0].action.status', 410, '410'),
    b('rules[1].action.url', urlOf(8192), urlOf(8193)),
    b('rules[2].action.title', chars(140), chars(141)),
    b('rules[2].action.text', chars(600), chars(601)),
    b('rules[2].action.button_label', chars(60), chars(61)),
    b('rules[2].action.button_url', `https://example.com/${chars(2028)}`, `https://example.com/${chars(2029)}`),
  ];
}

/** mobile (2.5). */
function mobileRows(): Bound[] {
  return [
    b('mobile', null, 'on'),
    b('mobile', {}, []),
    b('mobile.enabled', false, 'false'),
    b('mobile.delay_ms', 500, 499),
    b('mobile.delay_ms', 5000, 5001),
    b('mobile.delay_ms', 1600, 1600.5),
    b('mobile.tablet', 'mobile', 'phablet'),
    b('mobile.in_app', 'web', 'browser'),
    b('mobile.in_app', 'attempt', 'Attempt'),
    b('mobile.deferred', false, null),
    b('mobile.desktop_url', urlOf(8192), urlOf(8193)),
    ...(['ios', 'android'] as const).flatMap((os) => [
      b(`mobile.${os}`, {}, null),
      b(`mobile.${os}.app_url`, appUrlOf(2048), appUrlOf(2049)),
      b(`mobile.${os}.store_url`, urlOf(8192), urlOf(8193)),
      b(`mobile.${os}.web_url`, urlOf(8192), urlOf(8193)),
    ]),
  ];
}

/** rotator (2.6). */
function rotatorRows(): Bound[] {
  const D = 'rotator.destinations[0]';
  return [
    b('rotator', null, []),
    b('rotator.enabled', false, 'no'),
    b('rotator.mode', 'uniform', 'random'),
    b('rotator.mode', 'weighted', 'WEIGHTED'),
    b('rotator.sticky_ttl_seconds', 0, -1),
    b('rotator.sticky_ttl_seconds', 2_592_000, 2_592_001),
    b('rotator.fallback_url', urlOf(8192), urlOf(8193)),
    b('rotator.fallback_url', null, ''),
    b('rotator.auto_disable_unhealthy', false, 'yes'),
    b('rotator.destinations', items(50, aDestination()), items(51, aDestination())),
    b('rotator.destinations', [aDestination()], []),
    // Spec 2.6 says only "id string": a short id such as `d0` is one, and so is an empty one.
    b(`${D}.id`, 'd0', 7),
    b(`${D}.id`, '', null),
    b(`${D}.id`, chars(200), chars(201)),
    b(`${D}.url`, urlOf(8192), urlOf(8193)),
    b(`${D}.weight`, 1, 0),
    b(`${D}.weight`, 100, 101),
    b(`${D}.active`, false, 'false'),
    b(`${D}.limits`, null, 'none'),
    b(`${D}.limits`, {}, []),
    b(`${D}.limits.max_total_clicks`, 1, 0),
    b(`${D}.limits.max_total_clicks`, 1_000_000_000, 1_000_000_001),
    b(`${D}.limits.max_daily_clicks`, 1, 0),
    b(`${D}.limits.max_daily_clicks`, 1_000_000_000, 1_000_000_001),
    b(`${D}.limits.starts_at`, '2030-01-01T08:00:00-05:00', 'next monday'),
  ];
}

/** The LinkCreate bound rows, by section of the spec. */
export const LINK_BOUNDS = {
  link: linkFieldRows(),
  targeting: targetingRows(),
  ab_test: abTestRows(),
  rules: ruleRows(),
  mobile: mobileRows(),
  rotator: rotatorRows(),
} satisfies Record<string, Bound[]>;

export type LinkBoundSection = keyof typeof LINK_BOUNDS;

/** How each section is named in test titles. */
export const LINK_BOUND_TITLES: Record<LinkBoundSection, string> = {
  link: 'link fields (2.1 and published decisions)',
  targeting: 'targeting (2.2)',
  ab_test: 'ab_test (2.3)',
  rules: 'rules (2.4)',
  mobile: 'mobile (2.5)',
  rotator: 'rotator (2.6)',
};
