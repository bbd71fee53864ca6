import { expect } from 'chai';
import { bodyValidator, queryValidator, type Validator } from '../../src/http/validation.ts';
import { ValidationError, type ErrorDetail } from '../../src/platform/errors.ts';
import {
  BulkCreateSchema,
  BulkResultSchema,
  LinkCreateSchema,
  LinkListQuerySchema,
  LinkListSchema,
  LinkSchema,
  LinkStoredSchema,
  LinkUpdateSchema,
  QrQuerySchema,
} from '../../src/links/link.schemas.ts';
import {
  FolderCreateSchema,
  FolderListSchema,
  FolderSchema,
  FolderUpdateSchema,
  TagCreateSchema,
  TagListSchema,
  TagSchema,
  TagUpdateSchema,
} from '../../src/links/tag.schemas.ts';
import { EventListQuerySchema, EventListSchema, EventSchema } from '../../src/events/event.schemas.ts';
import { EVENT_TYPES, LOGGED_EVENT_TYPES } from '../../src/events/event-types.ts';
import {
  LINK_BOUNDS,
  PROXY_TYPES,
  VISITOR_TYPES,
  aFullLink,
  aLink,
  aLinkView,
  aMobile,
  aPageAction,
  aRotator,
  aRule,
  aTargeting,
  aVariant,
  b,
  chars,
  items,
  show,
  urlOf,
  withValue,
  type Bound,
  type Obj,
} from '../helpers/link-fixtures.ts';

// The validators are the project's own (ajv strict, useDefaults; bodies uncoerced, queries coerced). A schema with a
// `$id` is compiled before the schemas that embed it: ajv registers the embedded `$id`, and compiling the same `$id`
// as a root afterwards would collide ("schema with key or id ... already exists"): LinkCreate before LinkBulkCreate,
// Link before LinkList and LinkBulkResult, Tag before TagList, and so on.
const validateCreate = bodyValidator(LinkCreateSchema);
const validateUpdate = bodyValidator(LinkUpdateSchema);
const validateStored = bodyValidator(LinkStoredSchema);
const validateLink = bodyValidator(LinkSchema);
const validateLinkList = bodyValidator(LinkListSchema);
const validateBulk = bodyValidator(BulkCreateSchema);
const validateBulkResult = bodyValidator(BulkResultSchema);
const validateListQuery = queryValidator(LinkListQuerySchema);
const validateQrQuery = queryValidator(QrQuerySchema);
const validateTag = bodyValidator(TagSchema);
const validateTagCreate = bodyValidator(TagCreateSchema);
const validateTagUpdate = bodyValidator(TagUpdateSchema);
const validateTagList = bodyValidator(TagListSchema);
const validateFolder = bodyValidator(FolderSchema);
const validateFolderCreate = bodyValidator(FolderCreateSchema);
const validateFolderUpdate = bodyValidator(FolderUpdateSchema);
const validateFolderList = bodyValidator(FolderListSchema);
const validateEvent = bodyValidator(EventSchema);
const validateEventList = bodyValidator(EventListSchema);
const validateEventQuery = queryValidator(EventListQuerySchema);

// ---------------------------------------------------------------------------------------------------------------
// Helpers (the builders, the LinkCreate bound tables, withValue and show are in test/helpers/link-fixtures.ts, shared
// with the same bounds over HTTP in test/integration/link-bounds.test.ts)
// ---------------------------------------------------------------------------------------------------------------

function detailsOf(validate: Validator<unknown>, value: unknown): ErrorDetail[] {
  try {
    validate(value);
  } catch (error) {
    expect(error).to.be.instanceOf(ValidationError);
    return (error as ValidationError).details ?? [];
  }
  return expect.fail(`expected a validation error for ${JSON.stringify(value).slice(0, 300)}`);
}

/** Fails unless the value is refused, and every detail names exactly `path` (the field at fault, nothing else). */
function expectRejected(validate: Validator<unknown>, value: unknown, path: string, message?: string): void {
  const details = detailsOf(validate, value);
  expect([...new Set(details.map((d) => d.path))], JSON.stringify(details)).to.deep.equal([path]);
  if (message !== undefined) expect(details.map((d) => d.message)).to.include(message);
}

function expectValid<T>(validate: Validator<T>, value: unknown): T {
  try {
    return validate(value);
  } catch (error) {
    const details = error instanceof ValidationError ? JSON.stringify(error.details) : String(error);
    return expect.fail(`expected valid, got ${details}`);
  }
}

/** One test per row: the fixture with `ok` at the path is valid, with `bad` it is refused naming `at`. */
function boundTests(validate: Validator<unknown>, fixture: () => unknown, rows: readonly Bound[]): void {
  for (const { path, ok, bad, at } of rows) {
    it(`${path}: accepts ${show(ok)}, rejects ${show(bad)}`, () => {
      expectValid(validate, withValue(fixture(), path, ok));
      expectRejected(validate, withValue(fixture(), path, bad), at);
    });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------------------------

describe('link schemas', () => {
  describe('builders', () => {
    it('a minimal link, a link with every field, and a response link are valid', () => {
      expectValid(validateCreate, aLink());
      expectValid(validateCreate, aFullLink());
      expectValid(validateLink, aLinkView());
    });
  });

  describe('LinkCreate bounds: link fields (2.1 and published decisions)', () => {
    boundTests(validateCreate, aFullLink, LINK_BOUNDS.link);
  });

  describe('LinkCreate bounds: targeting (2.2)', () => {
    boundTests(validateCreate, aFullLink, LINK_BOUNDS.targeting);

    it('requires both match and url', () => {
      expectRejected(validateCreate, aLink({ targeting: [{ url: 'https://example.com' }] }), 'targeting[0].match', 'is required');
      expectRejected(validateCreate, aLink({ targeting: [{ match: { country: ['FR'] } }] }), 'targeting[0].url', 'is required');
    });
  });

  describe('LinkCreate bounds: ab_test (2.3)', () => {
    boundTests(validateCreate, aFullLink, LINK_BOUNDS.ab_test);

    it('requires enabled and variants; url and weight per variant; enabled in auto; clicks and conversions in samples', () => {
      const rows: Array<[Obj, string]> = [
        [{ variants: [aVariant()] }, 'ab_test.enabled'],
        [{ enabled: true }, 'ab_test.variants'],
        [{ enabled: true, variants: [{ weight: 1 }] }, 'ab_test.variants[0].url'],
        [{ enabled: true, variants: [{ url: 'https://example.com' }] }, 'ab_test.variants[0].weight'],
        [{ enabled: true, variants: [aVariant()], auto: { min_sample: 100 } }, 'ab_test.auto.enabled'],
        [{ enabled: true, variants: [aVariant()], auto: { enabled: true, samples: { clicks: [] } } }, 'ab_test.auto.samples.conversions'],
        [{ enabled: true, variants: [aVariant()], auto: { enabled: true, samples: { conversions: [] } } }, 'ab_test.auto.samples.clicks'],
      ];
      for (const [abTest, path] of rows) expectRejected(validateCreate, aLink({ ab_test: abTest }), path, 'is required');
    });
  });

  describe('LinkCreate bounds: rules (2.4)', () => {
    const M = 'rules[0].match';
    boundTests(validateCreate, aFullLink, LINK_BOUNDS.rules);

    it('every visitor_type and proxy_type of the spec is accepted', () => {
      for (const value of VISITOR_TYPES) expectValid(validateCreate, withValue(aFullLink(), `${M}.visitor_type`, [value]));
      for (const value of PROXY_TYPES) expectValid(validateCreate, withValue(aFullLink(), `${M}.proxy_type`, [value]));
    });

    it('local_time needs both from and to', () => {
      expectRejected(validateCreate, aLink({ rules: [aRule({ match: { local_time: { from: 9 } } })] }), 'rules[0].match.local_time.to', 'is required');
      expectRejected(validateCreate, aLink({ rules: [aRule({ match: { local_time: { to: 17 } } })] }), 'rules[0].match.local_time.from', 'is required');
    });

    it('a rule needs match and action', () => {
      expectRejected(validateCreate, aLink({ rules: [{ action: { type: 'pass' } }] }), 'rules[0].match', 'is required');
      expectRejected(validateCreate, aLink({ rules: [{ match: {} }] }), 'rules[0].action', 'is required');
    });
  });

  describe('rule action: discriminated by type', () => {
    const withAction = (action: unknown) => aLink({ rules: [aRule({ action })] });

    const valid: Obj[] = [
      { type: 'pass' },
      { type: 'block', status: 404 },
      { type: 'block', status: 410 },
      { type: 'redirect', url: 'https://example.com/elsewhere' },
      { type: 'page' },
      aPageAction(),
      { type: 'warn' },
    ];
    for (const action of valid) {
      it(`accepts ${JSON.stringify(action)}`, () => {
        expectValid(validateCreate, withAction(action));
      });
    }

    it('redirect without url names rules[0].action.url as required', () => {
      expectRejected(validateCreate, withAction({ type: 'redirect' }), 'rules[0].action.url', 'is required');
    });

    const extras: Array<[Obj, string]> = [
      [{ type: 'pass', url: 'https://example.com' }, 'url'],
      [{ type: 'warn', status: 404 }, 'status'],
      [{ type: 'block', status: 404, url: 'https://example.com' }, 'url'],
      [{ type: 'redirect', url: 'https://example.com', status: 302 }, 'status'],
      [aPageAction({ url: 'https://example.com' }), 'url'],
    ];
    for (const [action, field] of extras) {
      it(`${String(action.type)} with "${field}" names the extra field`, () => {
        expectRejected(validateCreate, withAction(action), `rules[0].action.${field}`, 'is not an allowed property');
      });
    }

    it('an unknown or missing type is named on type', () => {
      expectRejected(validateCreate, withAction({ type: 'teleport' }), 'rules[0].action.type');
      expectRejected(validateCreate, withAction({ status: 404 }), 'rules[0].action.type', 'is required');
      expectRejected(validateCreate, withAction('block'), 'rules[0].action');
    });
  });

  describe('LinkCreate bounds: mobile (2.5)', () => {
    boundTests(validateCreate, aFullLink, LINK_BOUNDS.mobile);
  });

  describe('LinkCreate bounds: rotator (2.6)', () => {
    boundTests(validateCreate, aFullLink, LINK_BOUNDS.rotator);

    it('requires destinations, and id and url per destination', () => {
      expectRejected(validateCreate, aLink({ rotator: {} }), 'rotator.destinations', 'is required');
      expectRejected(validateCreate, aLink({ rotator: { destinations: [{ url: 'https://example.com' }] } }), 'rotator.destinations[0].id', 'is required');
      expectRejected(validateCreate, aLink({ rotator: { destinations: [{ id: 'dst_a' }] } }), 'rotator.destinations[0].url', 'is required');
    });
  });

  describe('no extra properties', () => {
    const objects = [
      '',
      'utm',
      'targeting[0]',
      'targeting[0].match',
      'ab_test',
      'ab_test.variants[0]',
      'ab_test.auto',
      'ab_test.auto.samples',
      'rules[0]',
      'rules[0].match',
      'rules[0].match.local_time',
      'rules[0].action',
      'rules[1].action',
      'rules[2].action',
      'rules[3].action',
      'rules[4].action',
      'mobile',
      'mobile.ios',
      'mobile.android',
      'rotator',
      'rotator.destinations[0]',
      'rotator.destinations[0].limits',
    ];
    for (const object of objects) {
      const path = object === '' ? 'surprise' : `${object}.surprise`;
      it(`LinkCreate ${object || '(body)'} refuses an extra property, naming it`, () => {
        expectRejected(validateCreate, withValue(aFullLink(), path, 1), path, 'is not an allowed property');
      });
    }
  });

  describe('URL schemes', () => {
    const script = [
      'javascript:alert(1)',
      'JavaScript:alert(document.cookie)',
      'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
      'file:///etc/passwd',
      'blob:https://example.com/2b7e1516',
    ];
    const httpOnly = [
      'url',
      'expired_url',
      'targeting[0].url',
      'ab_test.variants[0].url',
      'rules[1].action.url',
      'mobile.desktop_url',
      'mobile.ios.web_url',
      'mobile.android.web_url',
      'rotator.destinations[0].url',
      'rotator.fallback_url',
    ];
    for (const path of httpOnly) {
      it(`${path}: only absolute http(s) URLs`, () => {
        expectValid(validateCreate, withValue(aFullLink(), path, 'https://example.com/x'));
        expectValid(validateCreate, withValue(aFullLink(), path, 'http://example.com:8080/a?b=c#d'));
        for (const url of [...script, 'ftp://example.com/file', 'mailto:someone@example.com', '/relative/path', 'example.com', 'https://exa mple.com']) {
          expectRejected(validateCreate, withValue(aFullLink(), path, url), path);
        }
      });
    }

    const anyScheme: Array<[string, string[]]> = [
      ['mobile.ios.store_url', ['itms-apps://apps.apple.com/app/id1', 'https://apps.apple.com/app/id1']],
      ['mobile.android.store_url', ['market://details?id=com.example', 'https://play.google.com/store/apps/details?id=x']],
      ['rules[2].action.button_url', ['https://example.com/help', 'mailto:help@example.com']],
      ['mobile.ios.app_url', ['myapp://product/42', 'fb://profile/1']],
      ['mobile.android.app_url', ['intent://scan/#Intent;scheme=zxing;end', 'myapp:open', 'app9-x.v2+z://open']],
    ];
    for (const [path, accepted] of anyScheme) {
      it(`${path}: app and store schemes, never javascript:, vbscript:, data: or file:`, () => {
        for (const url of accepted) expectValid(validateCreate, withValue(aFullLink(), path, url));
        for (const url of [...script, 'vbscript:msgbox(1)', 'DATA:text/plain,hi', '/relative/path']) expectRejected(validateCreate, withValue(aFullLink(), path, url), path);
      });
    }

    it('app_url must be a URI with a scheme and no spaces or control characters', () => {
      for (const url of ['product/42', 'myapp://a b', 'java\tscript:alert(1)', 'myapp://a\u0000', ' javascript:alert(1)']) {
        expectRejected(validateCreate, aLink({ mobile: { ios: { app_url: url } } }), 'mobile.ios.app_url');
      }
    });
  });

  describe('defaults (ajv useDefaults on the input path)', () => {
    it('a rule gets enabled: true and invert: false; given values stay', () => {
      const link = expectValid(validateCreate, aLink({ rules: [{ match: {}, action: { type: 'pass' } }, { enabled: false, invert: true, match: {}, action: { type: 'warn' } }] }));
      expect(link.rules![0]).to.deep.equal({ enabled: true, invert: false, match: {}, action: { type: 'pass' } });
      expect(link.rules![1]).to.include({ enabled: false, invert: true });
    });

    it('a block action gets status 404; 410 stays; other actions get no status', () => {
      const link = expectValid(
        validateCreate,
        aLink({ rules: [aRule({ action: { type: 'block' } }), aRule({ action: { type: 'block', status: 410 } }), aRule({ action: { type: 'pass' } })] }),
      );
      expect(link.rules!.map((r) => r.action)).to.deep.equal([{ type: 'block', status: 404 }, { type: 'block', status: 410 }, { type: 'pass' }]);
    });

    it('mobile gets enabled, tablet, in_app, delay_ms and deferred; given values stay', () => {
      expect(expectValid(validateCreate, aLink({ mobile: {} })).mobile).to.deep.equal({ enabled: false, tablet: 'mobile', in_app: 'attempt', delay_ms: 1600, deferred: false });
      expect(expectValid(validateCreate, aLink({ mobile: aMobile() })).mobile).to.deep.equal(aMobile());
    });

    it('null mobile, rotator and ab_test stay null', () => {
      const link = expectValid(validateCreate, aLink({ mobile: null, rotator: null, ab_test: null }));
      expect(link).to.include({ mobile: null, rotator: null, ab_test: null });
    });

    it('a rotator gets enabled, mode, sticky_ttl_seconds, fallback_url, auto_disable_unhealthy; a destination weight and active', () => {
      const rotator = expectValid(validateCreate, aLink({ rotator: { destinations: [{ id: 'dst_a', url: 'https://example.com/a' }] } })).rotator;
      expect(rotator).to.deep.equal({
        enabled: true,
        mode: 'weighted',
        sticky_ttl_seconds: 0,
        fallback_url: null,
        auto_disable_unhealthy: false,
        destinations: [{ id: 'dst_a', url: 'https://example.com/a', weight: 1, active: true }],
      });
      expect(expectValid(validateCreate, aLink({ rotator: aRotator() })).rotator).to.deep.equal(aRotator());
    });

    it('ab_test.auto gets min_sample 1000', () => {
      const abTest = expectValid(validateCreate, aLink({ ab_test: { enabled: true, variants: [aVariant()], auto: { enabled: false } } })).ab_test;
      expect(abTest?.auto).to.deep.equal({ enabled: false, min_sample: 1000 });
    });

    it('a created link gets redirect_type 302 and workspace_rules_off false, and nothing else', () => {
      expect(expectValid(validateCreate, aLink())).to.deep.equal({ url: 'https://example.com/landing', redirect_type: 302, workspace_rules_off: false });
    });

    it('a patch gains no field: defaults apply only inside the objects it sends', () => {
      expect(expectValid(validateUpdate, { title: 'New' })).to.deep.equal({ title: 'New' });
      const patch = expectValid(validateUpdate, { rules: [{ match: {}, action: { type: 'block' } }] });
      expect(patch).to.deep.equal({ rules: [{ enabled: true, invert: false, match: {}, action: { type: 'block', status: 404 } }] });
    });

    it('the list query gets limit 50, and coerces the query string', () => {
      expect(expectValid(validateListQuery, {})).to.deep.equal({ limit: 50 });
      expect(expectValid(validateListQuery, { limit: '7', archived: 'true' })).to.deep.equal({ limit: 7, archived: 'true' });
    });

    it('the QR query gets format png; the event query limit 50', () => {
      expect(expectValid(validateQrQuery, {})).to.deep.equal({ format: 'png', logo: 'false' });
      expect(expectValid(validateQrQuery, { size: '512', margin: '2' })).to.deep.equal({ format: 'png', logo: 'false', size: 512, margin: 2 });
      expect(expectValid(validateEventQuery, {})).to.deep.equal({ limit: 50 });
    });
  });

  describe('LinkCreate', () => {
    it('requires url', () => {
      expectRejected(validateCreate, { title: 'No destination' }, 'url', 'is required');
    });

    it('refuses archived (update only) and non-object bodies', () => {
      expectRejected(validateCreate, aLink({ archived: true }), 'archived', 'is not an allowed property');
      expectRejected(validateCreate, [aLink()], '(body)');
      expectRejected(validateCreate, null, '(body)');
    });
  });

  describe('LinkUpdate', () => {
    it('needs at least one field', () => {
      expectRejected(validateUpdate, {}, '(body)');
    });

    it('accepts every field alone, url and archived included', () => {
      for (const [key, value] of Object.entries({ ...aFullLink(), archived: true })) expectValid(validateUpdate, { [key]: value });
    });

    it('accepts null for the nullable fields and clears with it', () => {
      for (const key of ['title', 'note', 'folder_id', 'expires_at', 'expired_url', 'password', 'ab_test', 'mobile', 'rotator']) {
        expect(expectValid(validateUpdate, { [key]: null })).to.deep.equal({ [key]: null });
      }
    });

    it('refuses null where the field is not nullable', () => {
      for (const key of ['url', 'domain_id', 'slug', 'tag_ids', 'redirect_type', 'targeting', 'rules', 'workspace_rules_off', 'archived']) {
        expectRejected(validateUpdate, { [key]: null }, key);
      }
    });

    it('accepts utm, refuses unknown utm parameters and extra fields', () => {
      expectValid(validateUpdate, { utm: { utm_source: 'x' } });
      expectRejected(validateUpdate, { utm: { utm_id: 'x' } }, 'utm.utm_id', 'is not an allowed property');
      expectRejected(validateUpdate, { title: 'x', colour: 'red' }, 'colour', 'is not an allowed property');
    });

    it('applies the same bounds as LinkCreate', () => {
      expectRejected(validateUpdate, { rules: items(21, aRule()) }, 'rules');
      expectRejected(validateUpdate, { mobile: { delay_ms: 499 } }, 'mobile.delay_ms');
      expectRejected(validateUpdate, { url: 'javascript:alert(1)' }, 'url');
      expectValid(validateUpdate, { url: urlOf(8192) });
      expectRejected(validateUpdate, { url: urlOf(8193) }, 'url');
      expectRejected(validateUpdate, { archived: 'true' }, 'archived');
    });
  });

  describe('LinkStored (a link after a patch is merged)', () => {
    const stored = (): Obj => {
      const { utm: _utm, ...content } = aFullLink();
      return { ...content, archived: true };
    };

    it('accepts a full link content with archived, and the minimal one', () => {
      expectValid(validateStored, stored());
      expectValid(validateStored, aLink());
    });

    it('requires url and refuses utm and extra fields', () => {
      const { url: _url, ...withoutUrl } = stored();
      expectRejected(validateStored, withoutUrl, 'url', 'is required');
      expectRejected(validateStored, { ...stored(), utm: {} }, 'utm', 'is not an allowed property');
      expectRejected(validateStored, { ...stored(), has_password: true }, 'has_password', 'is not an allowed property');
    });

    it('refuses a merge the patch made invalid', () => {
      expectRejected(validateStored, { ...stored(), ab_test: { enabled: true, variants: [] } }, 'ab_test.variants');
    });
  });

  describe('Link (response, 2.1)', () => {
    const fields = Object.keys(aLinkView());

    it('has exactly the fields of spec 2.1 plus archived, moderation (abuse reports), the social previews, the import mark and the timestamps', () => {
      expect(fields.sort()).to.deep.equal(
        [
          'id',
          'short_url',
          'domain_id',
          'domain',
          'slug',
          'url',
          'title',
          'note',
          'folder_id',
          'tags',
          'redirect_type',
          'expires_at',
          'expired_url',
          'has_password',
          'targeting',
          'ab_test',
          'rules',
          'workspace_rules_off',
          'mobile',
          'rotator',
          'preview',
          'destination_preview',
          'archived',
          'moderation',
          'imported',
          'created_at',
          'updated_at',
        ].sort(),
      );
    });

    for (const field of fields) {
      it(`requires ${field}`, () => {
        const view = aLinkView();
        delete view[field];
        expectRejected(validateLink, view, field, 'is required');
      });
    }

    it('accepts nulls where 2.1 says "or null", and empty lists', () => {
      const nulls = { title: null, note: null, folder_id: null, expires_at: null, expired_url: null, ab_test: null, mobile: null, rotator: null };
      expectValid(validateLink, aLinkView({ ...nulls, tags: [], targeting: [], rules: [] }));
    });

    boundTests(validateLink, aLinkView, [
      b('short_url', 'https://lnk.example/x', 'lnk.example/x'),
      b('redirect_type', 302, 300),
      b('expires_at', '2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00+02:00'),
      b('has_password', false, 'false'),
      b('targeting', items(50, aTargeting()), items(51, aTargeting())),
      b('rules', items(20, aRule()), items(21, aRule())),
      b('tags[0].color', null, 3),
      b('created_at', '2030-01-01T00:00:00Z', 'yesterday'),
    ]);

    it('a tag has id, name and color, nothing else', () => {
      for (const key of ['id', 'name', 'color']) {
        const view = aLinkView();
        delete (view.tags as Obj[])[0]![key];
        expectRejected(validateLink, view, `tags[0].${key}`, 'is required');
      }
      expectRejected(validateLink, withValue(aLinkView(), 'tags[0].slug', 'x'), 'tags[0].slug', 'is not an allowed property');
    });

    it('refuses extra properties, password among them', () => {
      expectRejected(validateLink, aLinkView({ password: 'hunter2' }), 'password', 'is not an allowed property');
      expectRejected(validateLink, aLinkView({ utm: {} }), 'utm', 'is not an allowed property');
    });

    it('fills in nothing: rule enabled/invert and block status must be present', () => {
      expectRejected(validateLink, aLinkView({ rules: [{ invert: false, match: {}, action: { type: 'pass' } }] }), 'rules[0].enabled', 'is required');
      expectRejected(validateLink, aLinkView({ rules: [{ enabled: true, match: {}, action: { type: 'pass' } }] }), 'rules[0].invert', 'is required');
      expectRejected(validateLink, aLinkView({ rules: [aRule({ action: { type: 'block' } })] }), 'rules[0].action.status', 'is required');
      const paths = detailsOf(validateLink, aLinkView({ mobile: { enabled: true } })).map((d) => d.path);
      expect(paths).to.have.members(['mobile.tablet', 'mobile.in_app', 'mobile.delay_ms', 'mobile.deferred']);
    });

    it('LinkList: data and pagination {next_cursor, has_more}', () => {
      expectValid(validateLinkList, { data: [aLinkView()], pagination: { next_cursor: 'abc', has_more: true } });
      expectValid(validateLinkList, { data: [], pagination: { next_cursor: null, has_more: false } });
      expectRejected(validateLinkList, { data: [], pagination: { next_cursor: null } }, 'pagination.has_more', 'is required');
      expectRejected(validateLinkList, { data: [], pagination: { next_cursor: null, has_more: false, total: 0 } }, 'pagination.total');
      expectRejected(validateLinkList, { data: [aLinkView({ id: 7 })], pagination: { next_cursor: null, has_more: false } }, 'data[0].id');
      expectRejected(validateLinkList, { data: [], pagination: { next_cursor: null, has_more: false }, total: 0 }, 'total', 'is not an allowed property');
    });
  });

  describe('bulk', () => {
    it('accepts 1 to 100 links and refuses 0 or 101', () => {
      expectValid(validateBulk, [aLink()]);
      expectValid(validateBulk, items(100, aLink()));
      expectRejected(validateBulk, [], '(body)');
      expectRejected(validateBulk, items(101, aLink()), '(body)');
      expectRejected(validateBulk, { links: [aLink()] }, '(body)');
    });

    it('validates each item as LinkCreate, naming it by index, with defaults', () => {
      expectRejected(validateBulk, [aLink(), aLink({ url: 'ftp://example.com' })], '[1].url');
      expectRejected(validateBulk, [aLink({ rules: [aRule({ action: { type: 'redirect' } })] })], '[0].rules[0].action.url', 'is required');
      const [link] = expectValid(validateBulk, [aLink({ mobile: {} })]);
      expect(link!.mobile).to.include({ delay_ms: 1600 });
    });

    const created = () => ({ index: 0, status: 'created', link: aLinkView() });
    const failed = () => ({ index: 1, status: 'failed', error: { code: 'conflict', message: 'The slug is taken.', details: [{ path: 'slug', message: 'taken' }] } });

    it('BulkResult: created items carry the link, failed ones the error', () => {
      expectValid(validateBulkResult, { data: [created(), failed()], created: 1, failed: 1 });
      const { details: _details, ...withoutDetails } = failed().error;
      expectValid(validateBulkResult, { data: [{ ...failed(), error: withoutDetails }], created: 0, failed: 1 });
    });

    it('BulkResult: refuses a result without its link or error, an unknown status, and extra fields', () => {
      const bad: Obj[] = [
        { index: 0, status: 'created' },
        { index: 0, status: 'failed' },
        { ...created(), status: 'skipped' },
        { ...created(), error: failed().error },
        { ...failed(), error: { ...failed().error, doc_url: 'x' } },
        { ...failed(), error: { ...failed().error, details: [{ path: 'slug', message: 'taken', code: 'x' }] } },
        { ...created(), index: -1 },
        { ...failed(), index: -1 },
        { ...created(), index: 0.5 },
      ];
      for (const item of bad) expect(detailsOf(validateBulkResult, { data: [item], created: 0, failed: 0 })).to.not.be.empty;
      expectRejected(validateBulkResult, { data: [], created: 0 }, 'failed', 'is required');
      expectRejected(validateBulkResult, { data: [], created: 0, failed: -1 }, 'failed');
      expectRejected(validateBulkResult, { data: [], created: -1, failed: 0 }, 'created');
      expectRejected(validateBulkResult, { data: [], created: 0, failed: 0, skipped: 0 }, 'skipped', 'is not an allowed property');
    });
  });

  describe('GET /links query (4.1)', () => {
    const query = () => ({ cursor: 'abc', limit: '20', search: 'sale', domain_id: 'dom_x', tag: 'tag_x', folder_id: 'fld_x', archived: 'false' });
    boundTests(validateListQuery, query, [
      b('cursor', chars(1), ''),
      b('cursor', chars(500), chars(501)),
      b('limit', '1', '0'),
      b('limit', '100', '101'),
      b('limit', '50', '1.5'),
      b('limit', '50', 'ten'),
      b('search', chars(200), chars(201)),
      b('search', '', ['a', 'b']),
      b('domain_id', chars(3), chars(2)),
      b('domain_id', chars(64), chars(65)),
      b('tag', chars(3), chars(2)),
      b('tag', chars(64), chars(65)),
      b('folder_id', chars(3), chars(2)),
      b('folder_id', chars(64), chars(65)),
      b('archived', 'true', 'yes'),
      b('archived', 'false', 'FALSE'),
    ]);

    it('refuses an unknown query parameter, naming it', () => {
      expectRejected(validateListQuery, { ...query(), page: '2' }, 'page', 'is not an allowed property');
    });
  });

  describe('GET /links/{id}/qr query', () => {
    boundTests(validateQrQuery, () => ({ format: 'svg', size: '256', preset: 'large', margin: '4' }), [
      b('format', 'png', 'jpg'),
      b('size', '64', '63'),
      b('size', '2048', '2049'),
      b('size', '128', '128.5'),
      b('preset', 'small', 'huge'),
      b('preset', 'print', 'Print'),
      b('margin', '0', '-1'),
      b('margin', '16', '17'),
      b('error_correction', 'H', 'h'),
      b('error_correction', 'L', 'X'),
      b('color', '1a237e', 'red'),
      b('color', '#1A237E', '#1a237'),
      b('background', 'ffffff', 'fffffff'),
      b('background', '#fff8e1', '##fff8e1'),
      b('logo', 'true', 'yes'),
    ]);

    it('defaults logo to false', () => {
      expect(expectValid(validateQrQuery, {})).to.deep.equal({ format: 'png', logo: 'false' });
    });

    it('refuses an unknown parameter', () => {
      expectRejected(validateQrQuery, { fg: 'ff0000' }, 'fg', 'is not an allowed property');
    });
  });

  describe('tags and folders', () => {
    boundTests(validateTagCreate, () => ({ name: 'Spring', color: '#22aa55' }), [
      b('name', chars(1), ''),
      b('name', chars(50), chars(51)),
      b('color', '#A1b2C3', '#abc'),
      b('color', null, 'red'),
      b('color', '#000000', '#0000000'),
      b('color', '#ffffff', 'x#ffffff'),
    ]);
    boundTests(validateFolderCreate, () => ({ name: 'Campaigns' }), [b('name', chars(1), ''), b('name', chars(100), chars(101))]);

    it('TagCreate needs a name, color is optional; no extras', () => {
      expectValid(validateTagCreate, { name: 'Plain' });
      expectRejected(validateTagCreate, { color: '#ffffff' }, 'name', 'is required');
      expectRejected(validateTagCreate, { name: 'x', id: 'tag_1' }, 'id', 'is not an allowed property');
    });

    it('TagUpdate needs at least one field, each bounded as on create', () => {
      expectRejected(validateTagUpdate, {}, '(body)');
      expectValid(validateTagUpdate, { color: null });
      expectValid(validateTagUpdate, { name: 'Renamed' });
      expectRejected(validateTagUpdate, { name: chars(51) }, 'name');
      expectRejected(validateTagUpdate, { color: 'blue' }, 'color');
      expectRejected(validateTagUpdate, { name: 'x', created_at: 'now' }, 'created_at', 'is not an allowed property');
    });

    it('FolderCreate and FolderUpdate need a name; no extras', () => {
      expectRejected(validateFolderCreate, {}, 'name', 'is required');
      expectRejected(validateFolderUpdate, {}, 'name', 'is required');
      expectValid(validateFolderUpdate, { name: 'Renamed' });
      expectRejected(validateFolderUpdate, { name: chars(101) }, 'name');
      expectRejected(validateFolderCreate, { name: 'x', color: null }, 'color', 'is not an allowed property');
      expectRejected(validateFolderUpdate, { name: 'x', color: null }, 'color', 'is not an allowed property');
    });

    it('Tag, Folder and their lists as responses', () => {
      const tag = { id: 'tag_1', name: 'Spring', color: null, created_at: '2030-01-01T00:00:00.000Z' };
      const folder = { id: 'fld_1', name: 'Campaigns', created_at: '2030-01-01T00:00:00.000Z' };
      expectValid(validateTag, tag);
      expectValid(validateFolder, folder);
      expectValid(validateTagList, { data: [tag] });
      expectValid(validateFolderList, { data: [folder] });
      const { color: _color, ...colorless } = tag;
      expectRejected(validateTag, colorless, 'color', 'is required');
      expectRejected(validateTag, { ...tag, workspace_id: 'ws_1' }, 'workspace_id', 'is not an allowed property');
      expectRejected(validateTag, { ...tag, created_at: 'today' }, 'created_at');
      expectRejected(validateFolderList, { data: [folder], pagination: {} }, 'pagination', 'is not an allowed property');
      expectRejected(validateFolder, { ...folder, color: null }, 'color', 'is not an allowed property');
      expectRejected(validateTagList, { data: [tag], pagination: {} }, 'pagination', 'is not an allowed property');
      expectRejected(validateFolderList, { data: [{ ...folder, created_at: 'today' }] }, 'data[0].created_at');
    });
  });

  describe('events', () => {
    const event = (overrides: Obj = {}) => ({ id: 'evt_1', type: 'link.created', created_at: '2030-01-01T00:00:00.000Z', data: { id: 'lnk_1' }, ...overrides });

    it('every event type of spec 6.1 (and alert.fired, alert.resolved) is accepted, an unknown one is refused; link.clicked is streamed to webhooks, never logged', () => {
      expect(EVENT_TYPES).to.have.length(16);
      expect(LOGGED_EVENT_TYPES).to.have.length(15);
      expect(EVENT_TYPES).to.include.members(['conversion.created', 'alert.fired', 'alert.resolved', 'link.clicked']);
      expect(LOGGED_EVENT_TYPES).to.not.include('link.clicked');
      for (const type of LOGGED_EVENT_TYPES) {
        expectValid(validateEvent, event({ type }));
        expectValid(validateEventQuery, { type });
      }
      expectRejected(validateEventQuery, { type: 'link.clicked' }, 'type');
      expectRejected(validateEvent, event({ type: 'link.exploded' }), 'type');
      expectRejected(validateEventQuery, { type: 'link.exploded' }, 'type');
    });

    it('an event has id, type, created_at and an object data; nothing else', () => {
      for (const key of ['id', 'type', 'created_at', 'data']) {
        const value: Obj = event();
        delete value[key];
        expectRejected(validateEvent, value, key, 'is required');
      }
      expectRejected(validateEvent, event({ data: [1] }), 'data');
      expectRejected(validateEvent, event({ data: null }), 'data');
      expectRejected(validateEvent, event({ workspace_id: 'ws_1' }), 'workspace_id', 'is not an allowed property');
      expectValid(validateEventList, { data: [event()], pagination: { next_cursor: null, has_more: false } });
      expectRejected(validateEventList, { data: [event()] }, 'pagination', 'is required');
      expectRejected(validateEventList, { data: [], pagination: { next_cursor: null, has_more: false }, total: 0 }, 'total', 'is not an allowed property');
      expectRejected(validateEvent, event({ created_at: 'just now' }), 'created_at');
    });

    boundTests(validateEventQuery, () => ({ cursor: 'abc', limit: '10', type: 'payment.refunded' }), [
      b('cursor', chars(1), ''),
      b('cursor', chars(500), chars(501)),
      b('limit', '1', '0'),
      b('limit', '100', '101'),
    ]);

    it('the event query refuses an unknown parameter', () => {
      expectRejected(validateEventQuery, { since: '2030-01-01' }, 'since', 'is not an allowed property');
    });
  });
});
