// Alert rules and their firings (spec 1, tag Alerts): conditions over the workspace's clicks and the platform's
// health and delivery state, evaluated by the worker; one firing per incident, from firing to resolved.
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Integer, Nullable, PaginationSchema, StringEnum, Text, closed } from '../platform/schema.ts';

export const ALERT_TYPES = ['click_spike', 'click_drop', 'bot_share', 'rotator_unhealthy', 'webhook_failing', 'domain_error', 'tracked_clicks_share'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

/** How each condition reads its threshold, for the docs and the firing's message. */
export const ALERT_TYPE_DOCS: Record<AlertType, string> = {
  click_spike: 'clicks in the window at least `threshold` times the baseline (the mean of the `baseline_windows` windows before it); `threshold` > 1',
  click_drop: 'clicks in the window at most `threshold` times the baseline (0.5: halved); a baseline of zero clicks never drops',
  bot_share: 'share of the window\'s clicks by non-human visitors (bots, crawlers, automated) at least `threshold` (0 to 1)',
  rotator_unhealthy: 'rotator destinations marked unhealthy by the health checks, at least `threshold` (1: any)',
  webhook_failing: 'webhook endpoints in state `failing`, at least `threshold` (1: any)',
  domain_error: 'custom domains in error, at least `threshold` (1: any)',
  tracked_clicks_share: 'tracked clicks this month as a share of the plan\'s monthly limit, at least `threshold` (0.8: 80 %)',
};

const Emails = Type.Array(Type.String({ format: 'email', maxLength: 254 }), { maxItems: 5, uniqueItems: true, description: 'Addresses e-mailed when the alert fires and resolves' });

export const AlertChannelsSchema = Type.Object(
  {
    emails: Emails,
    webhook: Type.Boolean({ description: 'Emit `alert.fired` and `alert.resolved` to the workspace\'s webhook endpoints subscribed to them' }),
  },
  closed,
);

const Name = Text(1, 100);
const Type_ = StringEnum(ALERT_TYPES, { description: Object.entries(ALERT_TYPE_DOCS).map(([k, v]) => `\`${k}\`: ${v}`).join('; ') });
const Threshold = Type.Number({ minimum: 0, maximum: 1_000_000, description: 'Read as each type says' });
const WindowMinutes = Integer(15, 10_080, {
  multipleOf: 15,
  description: 'The window the click conditions count over, in minutes: whole quarter-hours (the analytics rollups\' finest bucket), ending at the last complete one; ignored by state conditions',
});
const CooldownMinutes = Integer(0, 10_080, { description: 'After a firing starts, no new firing for the same rule before this long' });
const BaselineWindows = Integer(1, 28, { description: 'click_spike / click_drop: how many windows before the current one make the baseline' });
const LinkId = Nullable(Text(3, 64), { description: 'Click conditions: only this link\'s clicks (null: the whole workspace)' });

export const AlertRuleCreateSchema = Type.Object(
  {
    name: Name,
    type: Type_,
    threshold: Threshold,
    window_minutes: Type.Optional(WindowMinutes),
    baseline_windows: Type.Optional(BaselineWindows),
    cooldown_minutes: Type.Optional(CooldownMinutes),
    link_id: Type.Optional(LinkId),
    channels: Type.Optional(AlertChannelsSchema),
    enabled: Type.Optional(Type.Boolean()),
  },
  { ...closed, $id: 'AlertRuleCreate' },
);
export type AlertRuleCreate = Static<typeof AlertRuleCreateSchema>;

export const AlertRuleUpdateSchema = Type.Object(
  {
    name: Type.Optional(Name),
    threshold: Type.Optional(Threshold),
    window_minutes: Type.Optional(WindowMinutes),
    baseline_windows: Type.Optional(BaselineWindows),
    cooldown_minutes: Type.Optional(CooldownMinutes),
    link_id: Type.Optional(LinkId),
    channels: Type.Optional(AlertChannelsSchema),
    enabled: Type.Optional(Type.Boolean()),
  },
  { ...closed, minProperties: 1, $id: 'AlertRuleUpdate' },
);
export type AlertRuleUpdate = Static<typeof AlertRuleUpdateSchema>;

export const AlertRuleSchema = Type.Object(
  {
    id: Type.String({ description: 'Prefix `alr_`' }),
    name: Type.String(),
    type: StringEnum(ALERT_TYPES),
    threshold: Type.Number(),
    window_minutes: Type.Integer(),
    baseline_windows: Type.Integer(),
    cooldown_minutes: Type.Integer(),
    link_id: Nullable(Type.String()),
    channels: AlertChannelsSchema,
    enabled: Type.Boolean(),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { ...closed, $id: 'AlertRule' },
);
export type AlertRule = Static<typeof AlertRuleSchema>;

export const AlertRuleListSchema = Type.Object({ data: Type.Array(AlertRuleSchema), pagination: PaginationSchema }, { ...closed, $id: 'AlertRuleList' });

export const AlertFiringSchema = Type.Object(
  {
    id: Type.String({ description: 'Prefix `alf_`' }),
    rule_id: Type.String(),
    rule_name: Type.String(),
    type: StringEnum(ALERT_TYPES),
    state: StringEnum(['firing', 'resolved'] as const),
    value: Type.Number({ description: 'The value observed when the firing started' }),
    last_value: Type.Number({ description: 'The value at the latest evaluation' }),
    threshold: Type.Number(),
    message: Type.String(),
    started_at: DateTime(),
    resolved_at: Nullable(DateTime()),
    acknowledged_at: Nullable(DateTime()),
  },
  { ...closed, $id: 'AlertFiring' },
);
export type AlertFiring = Static<typeof AlertFiringSchema>;

export const AlertFiringListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Text(1, 500, { description: 'The next_cursor of the previous page, unchanged' })),
    limit: Integer(1, 100, { default: 50 }),
    state: Type.Optional(StringEnum(['firing', 'resolved'] as const)),
    rule_id: Type.Optional(Text(3, 64)),
  },
  closed,
);
export type AlertFiringListQuery = Static<typeof AlertFiringListQuerySchema>;

export const AlertFiringListSchema = Type.Object({ data: Type.Array(AlertFiringSchema), pagination: PaginationSchema }, { ...closed, $id: 'AlertFiringList' });
