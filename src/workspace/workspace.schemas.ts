import { Type, type Static } from '@sinclair/typebox';
import { CAPABILITIES } from '../tenancy/plans.ts';
import { DEFAULT_ATTRIBUTION_WINDOW_DAYS } from '../tenancy/workspace.store.ts';
import { LinkSchema, UtmSchema } from '../links/link.schemas.ts';
import { RuleSchema } from '../rules/rule.schemas.ts';

const Count = Type.Integer({ minimum: 0 });

export const MAX_WORKSPACE_RULES = 20;

const RULES_DESCRIPTION =
  "Evaluated on every link of the workspace before the link's own rules (unless the link sets `workspace_rules_off`), " +
  'in order; the first enabled rule whose match holds acts. Rules without an `id` get one. Needs the plan capability ' +
  '`rules`, and `ip_lists` for `match.ip_list_ids`.';
const CONVERSION_TRACKING_DESCRIPTION = 'Appends a signed click id to every destination, for conversions to be attributed; turning it on needs the plan capability `conversions`';
const ATTRIBUTION_WINDOW_DESCRIPTION = 'Conversions reporting a click id older than this are refused as `attribution_expired`';
const TIMEZONE_DESCRIPTION =
  'IANA time zone name (e.g. `Europe/Paris`) the analytics endpoints answer in when a request names no `timezone`; `UTC` by default. ' +
  'An unknown name is 422 `validation_failed`';

export const MAX_UTM_TEMPLATES = 20;

export const UtmTemplateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 60, description: 'Unique within the workspace (compared without case)' }),
    utm: UtmSchema,
  },
  { additionalProperties: false, $id: 'UtmTemplate', description: 'A saved set of UTM parameters the dashboard offers when a link is created or edited' },
);
export type UtmTemplate = Static<typeof UtmTemplateSchema>;

const NAME_DESCRIPTION = 'The workspace name shown in the dashboard and to its partner';
const OWNER_EMAIL_DESCRIPTION = "The owner's address for notices (a webhook endpoint turning failing); null when none is on file";
const UTM_TEMPLATES_DESCRIPTION = `Saved UTM parameter sets (at most ${MAX_UTM_TEMPLATES}), offered in the dashboard's link editor; the list given replaces the stored one`;

/** PATCH /workspace: the workspace's name, notice address and settings; each field given replaces the stored one. */
export const WorkspaceUpdateSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 120, description: NAME_DESCRIPTION })),
    owner_email: Type.Optional(Type.Union([Type.String({ maxLength: 254 }), Type.Null()], { description: `${OWNER_EMAIL_DESCRIPTION}; null or "" removes it` })),
    utm_templates: Type.Optional(Type.Array(UtmTemplateSchema, { maxItems: MAX_UTM_TEMPLATES, description: UTM_TEMPLATES_DESCRIPTION })),
    rules: Type.Optional(Type.Array(RuleSchema, { maxItems: MAX_WORKSPACE_RULES, description: RULES_DESCRIPTION })),
    conversion_tracking: Type.Optional(Type.Boolean({ description: CONVERSION_TRACKING_DESCRIPTION })),
    attribution_window_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, description: ATTRIBUTION_WINDOW_DESCRIPTION })),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: TIMEZONE_DESCRIPTION })),
  },
  { additionalProperties: false, minProperties: 1, $id: 'WorkspaceUpdate' },
);
export type WorkspaceUpdate = Static<typeof WorkspaceUpdateSchema>;

export const PlanLimitsSchema = Type.Object(
  {
    links: Count,
    domains: Count,
    tracked_clicks_per_month: Count,
    rate_limit_per_minute: Type.Integer({ minimum: 1, description: 'Requests per sliding minute for each key' }),
  },
  { additionalProperties: false },
);

export const WorkspaceProfileSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    partner_id: Type.Union([Type.String(), Type.Null()]),
    owner_email: Type.Union([Type.String({ format: 'email' }), Type.Null()], {
      description: "The owner's address for notices (a webhook endpoint turning failing); null when none is on file",
    }),
    created_at: Type.String({ format: 'date-time' }),
    plan: Type.Object(
      {
        id: Type.String(),
        name: Type.String(),
        limits: PlanLimitsSchema,
        capabilities: Type.Array(Type.Union(CAPABILITIES.map((c) => Type.Literal(c)))),
      },
      { additionalProperties: false },
    ),
    usage: Type.Object(
      {
        links: Count,
        domains: Count,
        tracked_clicks: Count,
        period_start: Type.String({ format: 'date-time', description: 'Start of the current monthly period (UTC)' }),
        period_end: Type.String({ format: 'date-time', description: 'End of the current monthly period (UTC)' }),
      },
      { additionalProperties: false },
    ),
    // The link's rule array as answered (no defaults): one declaration for rules wherever they are shown.
    rules: { ...LinkSchema.properties.rules, description: RULES_DESCRIPTION },
    conversion_tracking: Type.Boolean({ description: CONVERSION_TRACKING_DESCRIPTION }),
    attribution_window_days: Type.Integer({ minimum: 1, maximum: 90, description: `${ATTRIBUTION_WINDOW_DESCRIPTION} (default ${DEFAULT_ATTRIBUTION_WINDOW_DAYS})` }),
    timezone: Type.String({ description: TIMEZONE_DESCRIPTION }),
    utm_templates: Type.Array(UtmTemplateSchema, { description: UTM_TEMPLATES_DESCRIPTION }),
  },
  { additionalProperties: false, $id: 'WorkspaceProfile' },
);

export type WorkspaceProfile = Static<typeof WorkspaceProfileSchema>;
