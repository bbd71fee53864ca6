// The Links API contract (spec 2.1–2.6, 4.1): the request and response schemas that the router validates with and
// the OpenAPI document is generated from. Every bound of the spec is encoded here, nowhere else; the targeting entry
// (2.2) and the rule (2.4), which workspace settings share, are in src/rules/rule.schemas.ts.
//
// The building blocks come from src/platform/schema.ts; its header says why nullable objects are one schema and why
// defaulted fields are required.
import { Type, type Static } from '@sinclair/typebox';
import {
  StringEnum, IntegerEnum, Nullable, withoutDefaults, HttpUrl, SafeUri, DateTime, Integer, Text, ReferenceId, closed, PaginationSchema, NOT_DANGEROUS,
} from '../platform/schema.ts';
import { RuleSchema, TargetingEntrySchema } from '../rules/rule.schemas.ts';

export const REDIRECT_TYPES = [301, 302, 307, 308] as const;

// ---------------------------------------------------------------------------------------------------------------
// utm (create and update)
// ---------------------------------------------------------------------------------------------------------------

const UtmValue = Text(1, 200);

export const UtmSchema = Type.Object(
  {
    utm_source: Type.Optional(UtmValue),
    utm_medium: Type.Optional(UtmValue),
    utm_campaign: Type.Optional(UtmValue),
    utm_term: Type.Optional(UtmValue),
    utm_content: Type.Optional(UtmValue),
  },
  { ...closed, description:
      'UTM parameters written into the destinations when the link is created or updated: into `url`, replacing parameters of the same name, ' +
      'and into each A/B variant, rotator destination and rule redirect that does not set that parameter itself' },
);
export type Utm = Static<typeof UtmSchema>;

// ---------------------------------------------------------------------------------------------------------------
// 2.3 ab_test
// ---------------------------------------------------------------------------------------------------------------

const Weight = Integer(1, 100);
const Count = Integer(0, Number.MAX_SAFE_INTEGER);

export const AbVariantSchema = Type.Object(
  {
    url: HttpUrl(),
    weight: Weight,
    label: Type.Optional(Type.String({ maxLength: 40 })),
  },
  closed,
);

export const AbAutoSchema = Type.Object(
  {
    enabled: Type.Boolean(),
    min_sample: Integer(10, 1_000_000_000, { default: 1000, description: 'Clicks per variant before a winner can be chosen' }),
    warmup_until: Type.Optional(DateTime()),
    weights: Type.Optional(Type.Array(Weight, { maxItems: 10 })),
    samples: Type.Optional(
      Type.Object(
        {
          clicks: Type.Array(Count, { maxItems: 10 }),
          conversions: Type.Array(Count, { maxItems: 10 }),
        },
        closed,
      ),
    ),
    winner_index: Type.Optional(Integer(0, 9)),
    stopped_at: Type.Optional(DateTime()),
  },
  closed,
);

export const AbTestSchema = Type.Object(
  {
    enabled: Type.Boolean(),
    variants: Type.Array(AbVariantSchema, { minItems: 1, maxItems: 10 }),
    auto: Type.Optional(AbAutoSchema),
  },
  closed,
);
export type AbTest = Static<typeof AbTestSchema>;

// ---------------------------------------------------------------------------------------------------------------
// 2.5 mobile
// ---------------------------------------------------------------------------------------------------------------

export const MobileAppSchema = Type.Object(
  {
    app_url: Type.Optional(
      Type.String({
        maxLength: 2048,
        // A deep link of any app scheme, but never one a browser would run or read locally.
        pattern: `${NOT_DANGEROUS}[A-Za-z][A-Za-z0-9+.\\-]*:[^\\s\\u0000-\\u001f\\u007f]+$`,
        description: 'App deep link, any scheme (e.g. myapp://path)',
      }),
    ),
    store_url: Type.Optional(SafeUri(8192)),
    web_url: Type.Optional(HttpUrl()),
  },
  closed,
);
export type MobileApp = Static<typeof MobileAppSchema>;

export const MobileSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: false }),
    ios: Type.Optional(MobileAppSchema),
    android: Type.Optional(MobileAppSchema),
    desktop_url: Type.Optional(HttpUrl()),
    tablet: StringEnum(['mobile', 'desktop'], { default: 'mobile', description: 'Whether tablets are handled as mobile or desktop' }),
    in_app: StringEnum(['attempt', 'store', 'web'], { default: 'attempt' }),
    delay_ms: Integer(500, 5000, { default: 1600 }),
    deferred: Type.Boolean({ default: false }),
  },
  closed,
);
export type Mobile = Static<typeof MobileSchema>;

// ---------------------------------------------------------------------------------------------------------------
// 2.6 rotator
// ---------------------------------------------------------------------------------------------------------------

const ClickLimit = Integer(1, 1_000_000_000);

export const RotatorLimitsSchema = Type.Object(
  {
    max_total_clicks: Type.Optional(ClickLimit),
    max_daily_clicks: Type.Optional(ClickLimit),
    starts_at: Type.Optional(DateTime()),
  },
  closed,
);

export const RotatorDestinationSchema = Type.Object(
  {
    // Spec 2.6: "id string", no more; the length cap only keeps a stored link bounded.
    id: Type.String({ maxLength: 200, description: 'Chosen by the client; names the destination in click records and counts' }),
    url: HttpUrl(),
    weight: Integer(1, 100, { default: 1 }),
    active: Type.Boolean({ default: true }),
    limits: Type.Optional(Nullable(RotatorLimitsSchema)),
  },
  closed,
);
export type RotatorDestination = Static<typeof RotatorDestinationSchema>;

export const RotatorSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: true }),
    mode: StringEnum(['weighted', 'round_robin', 'uniform'], { default: 'weighted' }),
    sticky_ttl_seconds: Integer(0, 2_592_000, { default: 0, description: 'How long a visitor keeps its destination; 0: not sticky' }),
    fallback_url: Nullable(HttpUrl(), { default: null }),
    auto_disable_unhealthy: Type.Boolean({ default: false }),
    destinations: Type.Array(RotatorDestinationSchema, { minItems: 1, maxItems: 50 }),
  },
  closed,
);
export type Rotator = Static<typeof RotatorSchema>;

// ---------------------------------------------------------------------------------------------------------------
// preview (what social and chat crawlers are shown: src/redirect/preview.ts)
// ---------------------------------------------------------------------------------------------------------------

/** Bounds as the networks cut: Open Graph titles show about 60–90 characters, descriptions about 200. */
export const PREVIEW_TITLE_MAX = 120;
export const PREVIEW_DESCRIPTION_MAX = 300;
export const PREVIEW_IMAGE_MAX = 2048;

export const LinkPreviewSchema = Type.Object(
  {
    title: Text(1, PREVIEW_TITLE_MAX, { description: 'og:title and twitter:title' }),
    description: Type.Optional(Nullable(Text(1, PREVIEW_DESCRIPTION_MAX, { description: 'og:description and twitter:description' }))),
    image: Type.Optional(
      Nullable(
        Type.String({
          format: 'uri',
          pattern: '^[Hh][Tt][Tt][Pp][Ss]://',
          maxLength: PREVIEW_IMAGE_MAX,
          description: 'og:image and twitter:image: an absolute https URL (networks fetch it themselves; 1200×630 suits most)',
        }),
      ),
    ),
  },
  {
    ...closed,
    description:
      'The card social and chat crawlers (visitor type `social_preview`) are shown for the short link instead of the redirect. ' +
      'Without it the destination\'s own Open Graph tags are used, as last fetched by the worker; everyone else is redirected as usual',
  },
);
export type LinkPreview = Static<typeof LinkPreviewSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Link requests
// ---------------------------------------------------------------------------------------------------------------

/** Paths the redirect process answers itself (health, readiness, metrics): never a slug. */
export const RESERVED_SLUGS = ['healthz', 'readyz', 'metrics'] as const;
const Slug = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: `^(?!(?:${RESERVED_SLUGS.join('|')})$)[A-Za-z0-9][A-Za-z0-9_-]*$`,
  description: `Letters, digits, "_" and "-", starting with a letter or digit; ${RESERVED_SLUGS.join(', ')} are reserved`,
});
const RedirectType = IntegerEnum(REDIRECT_TYPES);

/** The settable fields of a link besides `url`, all optional and without defaults (a patch must not gain any). */
const linkContent = {
  domain_id: Type.Optional(ReferenceId()),
  slug: Type.Optional(Slug),
  title: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  note: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  folder_id: Type.Optional(Nullable(ReferenceId())),
  tag_ids: Type.Optional(Type.Array(ReferenceId(), { maxItems: 20, uniqueItems: true })),
  redirect_type: Type.Optional(RedirectType),
  expires_at: Type.Optional(Nullable(DateTime())),
  expired_url: Type.Optional(Nullable(HttpUrl(), { description: 'Where an expired link sends visitors' })),
  password: Type.Optional(Nullable(Text(1, 128), { description: 'Write-only; null removes the password' })),
  targeting: Type.Optional(Type.Array(TargetingEntrySchema, { maxItems: 50 })),
  ab_test: Type.Optional(Nullable(AbTestSchema)),
  rules: Type.Optional(Type.Array(RuleSchema, { maxItems: 20 })),
  workspace_rules_off: Type.Optional(Type.Boolean()),
  mobile: Type.Optional(Nullable(MobileSchema)),
  rotator: Type.Optional(Nullable(RotatorSchema)),
  preview: Type.Optional(Nullable(LinkPreviewSchema, { description: 'A custom social preview; null removes it (the destination\'s own tags are then used)' })),
};

export const LinkCreateSchema = Type.Object(
  {
    url: HttpUrl(8192, { description: 'Destination' }),
    ...linkContent,
    redirect_type: Type.Optional(IntegerEnum(REDIRECT_TYPES, { default: 302 })),
    workspace_rules_off: Type.Optional(Type.Boolean({ default: false })),
    utm: Type.Optional(UtmSchema),
  },
  { ...closed, $id: 'LinkCreate' },
);
export type LinkCreate = Static<typeof LinkCreateSchema>;

export const LinkUpdateSchema = Type.Object(
  {
    url: Type.Optional(HttpUrl(8192, { description: 'Destination' })),
    ...linkContent,
    archived: Type.Optional(Type.Boolean()),
    utm: Type.Optional(UtmSchema),
  },
  { ...closed, minProperties: 1, $id: 'LinkUpdate' },
);
export type LinkUpdate = Static<typeof LinkUpdateSchema>;

/** A link's content after a patch is merged into it: what LinkCreate allows, without `utm`, plus `archived`. */
export const LinkStoredSchema = Type.Object(
  {
    url: HttpUrl(),
    ...linkContent,
    archived: Type.Optional(Type.Boolean()),
  },
  closed,
);
export type LinkStored = Static<typeof LinkStoredSchema>;

/** Spec 4.2: "create up to 100 links per call". */
export const BulkCreateSchema = Type.Array(LinkCreateSchema, { minItems: 1, maxItems: 100, $id: 'LinkBulkCreate' });
export type BulkCreate = Static<typeof BulkCreateSchema>;

export const LinkListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Text(1, 500, { description: 'The next_cursor of the previous page, unchanged' })),
    limit: Integer(1, 100, { default: 50 }),
    search: Type.Optional(Type.String({ maxLength: 200 })),
    domain_id: Type.Optional(ReferenceId()),
    tag: Type.Optional(ReferenceId({ description: 'A tag id' })),
    folder_id: Type.Optional(ReferenceId()),
    archived: Type.Optional(StringEnum(['true', 'false'])),
  },
  closed,
);
export type LinkListQuery = Static<typeof LinkListQuerySchema>;

/** The list's filters without the paging: what GET /links/count counts. */
export const LinkCountQuerySchema = Type.Omit(LinkListQuerySchema, ['cursor', 'limit'], closed);
export type LinkCountQuery = Static<typeof LinkCountQuerySchema>;

export const LinkCountSchema = Type.Object(
  { count: Type.Integer({ minimum: 0, description: 'How many links match the filters, over every page' }) },
  { ...closed, $id: 'LinkCount' },
);

// A colour in a query string: `#` starts a URL's fragment, so it is sent as `%23`, or left out.
const QrColor = (description: string) =>
  Type.String({ pattern: '^#?[0-9a-fA-F]{6}$', description: `\`rrggbb\` hex (a leading \`#\` is allowed, sent as \`%23\`). ${description}` });

export const QrQuerySchema = Type.Object(
  {
    format: StringEnum(['png', 'svg'], { default: 'png' }),
    size: Type.Optional(Integer(64, 2048, { description: 'Width and height in pixels; overrides the preset' })),
    preset: Type.Optional(StringEnum(['small', 'medium', 'large', 'print'], {
      description: 'small: 128 px, margin 2, level M; medium (the default): 256 px, margin 4, level M; large: 512 px, margin 4, level Q; print: 1024 px, margin 4, level H',
    })),
    margin: Type.Optional(Integer(0, 16, { description: 'Quiet zone, in modules; overrides the preset' })),
    error_correction: Type.Optional(StringEnum(['L', 'M', 'Q', 'H'], {
      description: 'Error-correction level (L 7 %, M 15 %, Q 25 %, H 30 % of the code recoverable); overrides the preset. With `logo=true` it is at least Q',
    })),
    color: Type.Optional(QrColor(
      'Colour of the modules, `000000` by default. It must be darker than `background` (inverted codes are refused: many scanners do not read ' +
      'them), by a WCAG contrast ratio of at least 3:1 and by 40 % in brightness (Rec. 709 luma of the sRGB values), else 422 `validation_failed`',
    )),
    background: Type.Optional(QrColor('Colour of the background and quiet zone, `ffffff` by default')),
    logo: StringEnum(['true', 'false'], {
      default: 'false',
      description:
        "`true` draws the workspace's QR logo (PUT /workspace/qr-logo) in the centre, on a pad of the background colour covering at most 10 % of the " +
        'symbol; the level is raised to Q if lower. 409 `conflict` when the workspace has no logo',
    }),
  },
  closed,
);
export type QrQuery = Static<typeof QrQuerySchema>;

// ---------------------------------------------------------------------------------------------------------------
// Link responses (spec 2.1): every field present, no defaults
// ---------------------------------------------------------------------------------------------------------------

export const TagRefSchema = Type.Object({ id: Type.String(), name: Type.String(), color: Nullable(Type.String()) }, closed);
export type TagRef = Static<typeof TagRefSchema>;

/** Where an imported link came from (null on a link created here), with the click total its source reported. */
export const LinkImportedSchema = Nullable(
  Type.Object(
    {
      source: Type.String({ description: 'The import source: `bitly`, `dub`, `shlink`, `shlink_csv`, `kutt`, `yourls`, `rebrandly`, `shortio` or `csv`' }),
      source_id: Type.String({ description: 'The source\'s own id of the link' }),
      job_id: Type.String({ description: 'The import job that created the link (GET /imports/{id})' }),
      clicks_total: Nullable(
        Type.Integer({ minimum: 0 }),
        {
          description:
            'The total clicks the source reported for the link when it was imported: a historical figure, never counted as clicks here ' +
            '(analytics count from zero; GET /analytics/summary shows these totals apart as `imported_clicks`). null: the source gave none',
        },
      ),
      imported_at: DateTime({ description: 'When the import created the link' }),
    },
    closed,
  ),
  { description: 'Set when an import job created the link: its origin and the click total its source reported; null for a link created here' },
);
export type LinkImported = Static<typeof LinkImportedSchema>;

export const LinkSchema = Type.Object(
  {
    id: Type.String(),
    short_url: Type.String({ format: 'uri' }),
    domain_id: Type.String(),
    domain: Type.String(),
    slug: Type.String(),
    url: Type.String({ description: 'Destination' }),
    title: Nullable(Type.String()),
    note: Nullable(Type.String()),
    folder_id: Nullable(Type.String()),
    tags: Type.Array(TagRefSchema),
    redirect_type: RedirectType,
    expires_at: Nullable(DateTime({ pattern: 'Z$', description: 'UTC' })),
    expired_url: Nullable(Type.String()),
    has_password: Type.Boolean({ description: 'The password itself is never returned' }),
    targeting: Type.Array(TargetingEntrySchema, { maxItems: 50 }),
    ab_test: withoutDefaults(Nullable(AbTestSchema)),
    rules: withoutDefaults(Type.Array(RuleSchema, { maxItems: 20 })),
    workspace_rules_off: Type.Boolean(),
    mobile: withoutDefaults(Nullable(MobileSchema)),
    rotator: withoutDefaults(Nullable(RotatorSchema)),
    preview: Nullable(LinkPreviewSchema, { description: 'The custom social preview; null: none (crawlers get the destination\'s own tags when fetched)' }),
    destination_preview: Nullable(
      Type.Object(
        {
          title: Nullable(Type.String()),
          description: Nullable(Type.String()),
          image: Nullable(Type.String()),
          fetched_at: DateTime(),
        },
        closed,
      ),
      { description: 'Read-only: the Open Graph tags of the destination as the worker last fetched them (null until then, or when it had none); used for crawlers when `preview` is null' },
    ),
    archived: Type.Boolean(),
    moderation: Nullable(
      Type.Object(
        {
          state: StringEnum(['warned', 'disabled'] as const),
          reason: Type.String({ description: 'The reason of the abuse report' }),
          report_id: Type.String(),
          at: DateTime(),
        },
        closed,
      ),
      { description: 'Set by resolving an abuse report (POST /reports/{id}/resolve): `warned` shows visitors a warning page first; `disabled` answers 410' },
    ),
    imported: LinkImportedSchema,
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { ...closed, $id: 'Link' },
);
export type Link = Static<typeof LinkSchema>;


/**
 * The `data` of `link.created`, `link.updated` and `link.deleted` deliveries: the link's address, and for an update
 * what changed. Every builder of these events is typed with it, and the OpenAPI `webhooks` section publishes it.
 */
export const LinkEventDataSchema = Type.Object(
  {
    id: Type.String(),
    domain: Type.String({ description: 'The domain id (`default` for the shared domain)' }),
    slug: Type.String(),
    url: Type.String({ description: 'The destination' }),
    changed: Type.Optional(Type.Array(Type.String(), { description: '`link.updated` only: the fields that changed' })),
    ab_test: Type.Optional(
      Type.Object(
        {
          winner_index: Type.Integer({ minimum: 0 }),
          stopped_at: DateTime(),
          samples: Type.Object(
            { clicks: Type.Array(Type.Integer({ minimum: 0 })), conversions: Type.Array(Type.Integer({ minimum: 0 })) },
            { ...closed, description: 'Per variant, in the order of `ab_test.variants`' },
          ),
        },
        { ...closed, description: 'When an A/B test stopped with a winner (`changed: ["ab_test"]`)' },
      ),
    ),
    moderation: Type.Optional(
      Nullable(Type.Object({}, { additionalProperties: true }), { description: 'When an abuse report was resolved (`changed: ["moderation"]`): the link\'s moderation' }),
    ),
    report_id: Type.Optional(Type.String({ description: 'The abuse report that changed the moderation' })),
  },
  { ...closed, $id: 'LinkEventData' },
);
export type LinkEventData = Static<typeof LinkEventDataSchema>;

export const LinkListSchema = Type.Object({ data: Type.Array(LinkSchema), pagination: PaginationSchema }, { ...closed, $id: 'LinkList' });
export type LinkList = Static<typeof LinkListSchema>;

const ErrorDetailSchema = Type.Object({ path: Type.String(), message: Type.String() }, closed);

export const BulkResultSchema = Type.Object(
  {
    data: Type.Array(
      Type.Union([
        Type.Object({ index: Type.Integer({ minimum: 0 }), status: Type.Literal('created'), link: LinkSchema }, closed),
        Type.Object(
          {
            index: Type.Integer({ minimum: 0 }),
            status: Type.Literal('failed'),
            error: Type.Object({ code: Type.String(), message: Type.String(), details: Type.Optional(Type.Array(ErrorDetailSchema)) }, closed),
          },
          closed,
        ),
      ]),
      { description: 'One result per submitted item, in order; `index` is its position in the request' },
    ),
    created: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
  },
  { ...closed, $id: 'LinkBulkResult' },
);
export type BulkResult = Static<typeof BulkResultSchema>;

export const LinkExportQuerySchema = Type.Object(
  {
    format: StringEnum(['csv', 'jsonl'], { default: 'csv', description: '`csv` (RFC 4180, `text/csv`) or `jsonl` (JSON Lines, `application/x-ndjson`)' }),
  },
  closed,
);
export type LinkExportQuery = Static<typeof LinkExportQuerySchema>;

/** One line of the JSON Lines export: the link as the API shows it, and the name of its folder. */
export const LinkExportLineSchema = Type.Object(
  {
    ...LinkSchema.properties,
    folder_name: Nullable(Type.String({ description: 'The name of the link\'s folder (its id is `folder_id`)' })),
  },
  { ...closed, $id: 'LinkExportLine', description: 'One line of the JSON Lines export of GET /links/export: a link, every field' },
);
export type LinkExportLine = Static<typeof LinkExportLineSchema>;
