// The rule and targeting contract (spec 2.2, 2.4): what a link's `targeting` and `rules`, and a workspace's `rules`,
// may say. Links, workspace settings, IP lists and the redirect all read these shapes; the redirect compiles them
// (match.ts, ip-match.ts). Every bound of the spec is encoded here, nowhere else.
//
// The building blocks come from src/platform/schema.ts; its header says why defaulted fields are required. For the
// same reason the rule action is discriminated with if/then (whose `then` applies defaults) rather than oneOf.
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, IntegerEnum, HttpUrl, SafeUri, Integer, Text, closed, COUNTRY, LANGUAGE, DEVICES, OPERATING_SYSTEMS } from '../platform/schema.ts';
import { PROXY_TYPES, VISITOR_TYPES } from '../visitor/visitor-profile.ts';

// ---------------------------------------------------------------------------------------------------------------
// 2.2 Targeting entry
// ---------------------------------------------------------------------------------------------------------------

export const TargetingMatchSchema = Type.Object(
  {
    country: Type.Optional(Type.Array(COUNTRY, { minItems: 1, maxItems: 50 })),
    device: Type.Optional(Type.Array(StringEnum(DEVICES), { minItems: 1 })),
    os: Type.Optional(Type.Array(StringEnum(OPERATING_SYSTEMS), { minItems: 1 })),
    language: Type.Optional(Type.Array(LANGUAGE, { minItems: 1, maxItems: 20 })),
  },
  { ...closed, minProperties: 1, description: 'All given conditions must hold; at least one is required' },
);

export const TargetingEntrySchema = Type.Object({ match: TargetingMatchSchema, url: HttpUrl() }, closed);
export type TargetingEntry = Static<typeof TargetingEntrySchema>;

// ---------------------------------------------------------------------------------------------------------------
// 2.4 Rule
// ---------------------------------------------------------------------------------------------------------------

export const RULE_ACTION_TYPES = ['pass', 'block', 'redirect', 'page', 'warn'] as const;

const Hour = Integer(0, 23);

export const RuleMatchSchema = Type.Object(
  {
    visitor_type: Type.Optional(Type.Array(StringEnum(VISITOR_TYPES), { minItems: 1, maxItems: 16 })),
    verified_bot: Type.Optional(Type.Boolean()),
    proxy_type: Type.Optional(Type.Array(StringEnum(PROXY_TYPES), { minItems: 1, maxItems: 6 })),
    quality_below: Type.Optional(Integer(1, 100)),
    country: Type.Optional(Type.Array(COUNTRY, { minItems: 1, maxItems: 250 })),
    region: Type.Optional(Type.Array(Text(1, 80), { minItems: 1, maxItems: 100 })),
    city: Type.Optional(Type.Array(Text(1, 120), { minItems: 1, maxItems: 100 })),
    asn: Type.Optional(Type.Array(Integer(1, 4_294_967_295), { minItems: 1, maxItems: 200 })),
    ip: Type.Optional(Type.Array(Text(2, 49, { description: 'An IP address or CIDR range' }), { minItems: 1, maxItems: 1000 })),
    user_agent: Type.Optional(Text(1, 200)),
    referer: Type.Optional(Text(1, 200)),
    has_utm: Type.Optional(Type.Boolean()),
    device: Type.Optional(Type.Array(StringEnum(DEVICES), { minItems: 1, maxItems: 3 })),
    language: Type.Optional(Type.Array(LANGUAGE, { minItems: 1, maxItems: 20 })),
    local_time: Type.Optional(Type.Object({ from: Hour, to: Hour }, { ...closed, description: 'Hours of the day, visitor local time' })),
    weekday: Type.Optional(Type.Array(Integer(1, 7), { minItems: 1, maxItems: 7 })),
    visit: Type.Optional(StringEnum(['first', 'repeat'])),
    ip_list_ids: Type.Optional(Type.Array(Text(3, 40), { minItems: 1, maxItems: 5 })),
  },
  { ...closed, description: 'All given conditions must hold' },
);
export type RuleMatch = Static<typeof RuleMatchSchema>;

const PassActionSchema = Type.Object({ type: Type.Literal('pass') }, closed);
const BlockActionSchema = Type.Object(
  {
    type: Type.Literal('block'),
    status: IntegerEnum([404, 410], { default: 404, description: '404 looks like a nonexistent link; 410 means removed permanently' }),
  },
  closed,
);
const RedirectActionSchema = Type.Object({ type: Type.Literal('redirect'), url: HttpUrl() }, closed);
const PageActionSchema = Type.Object(
  {
    type: Type.Literal('page'),
    title: Type.Optional(Type.String({ maxLength: 140 })),
    text: Type.Optional(Type.String({ maxLength: 600 })),
    button_label: Type.Optional(Type.String({ maxLength: 60 })),
    button_url: Type.Optional(SafeUri(2048)),
  },
  closed,
);
const WarnActionSchema = Type.Object({ type: Type.Literal('warn') }, closed);

export type RuleAction =
  | Static<typeof PassActionSchema>
  | Static<typeof BlockActionSchema>
  | Static<typeof RedirectActionSchema>
  | Static<typeof PageActionSchema>
  | Static<typeof WarnActionSchema>;

const ACTION_SCHEMAS = { pass: PassActionSchema, block: BlockActionSchema, redirect: RedirectActionSchema, page: PageActionSchema, warn: WarnActionSchema };

/**
 * Discriminated by `type`: an unknown type fails on `type`; a known one must match its own shape exactly (a missing
 * field or an extra one is named). if/then rather than oneOf so that `block.status` gets its default.
 */
export const RuleActionSchema = Type.Unsafe<RuleAction>({
  type: 'object',
  description: 'One of the action types pass, block, redirect, page, warn',
  required: ['type'],
  properties: { type: { type: 'string', enum: [...RULE_ACTION_TYPES] } },
  allOf: RULE_ACTION_TYPES.map((type) => ({
    if: { type: 'object', required: ['type'], properties: { type: { const: type } } },
    then: ACTION_SCHEMAS[type],
  })),
});

export const RuleSchema = Type.Object(
  {
    id: Type.Optional(Text(3, 40)),
    enabled: Type.Boolean({ default: true }),
    label: Type.Optional(Type.String({ maxLength: 80 })),
    invert: Type.Boolean({ default: false, description: 'Act when the match does not hold' }),
    match: RuleMatchSchema,
    action: RuleActionSchema,
  },
  closed,
);
export type Rule = Static<typeof RuleSchema>;
