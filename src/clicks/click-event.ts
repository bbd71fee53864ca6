// A click as it leaves the platform, to a webhook endpoint (`link.clicked`) or a live stream (GET /clicks/stream):
// the visitor profile and the decision the redirect took. One declaration for both, published in the OpenAPI
// document (the webhook's payload and the stream's events).
import { Type, type Static } from '@sinclair/typebox';
import { closed, DateTime, Nullable, StringEnum } from '../platform/schema.ts';
import { PROXY_TYPES, VISITOR_TYPES } from '../visitor/visitor-profile.ts';
import { DEVICES, OPERATING_SYSTEMS } from '../platform/schema.ts';
import type { ClickRecord } from '../visitor/click-record.ts';
import { storedDecisionOf } from './click.store.ts';

const DECISION_STEPS = ['expired', 'rule', 'password', 'targeting', 'mobile', 'ab_test', 'rotator', 'url'] as const;

export const ClickEventSchema = Type.Object(
  {
    id: Type.String({ description: 'The click id (unique; receivers deduplicate by it)' }),
    ts: DateTime({ description: 'When the redirect answered, UTC' }),
    link_id: Type.String(),
    domain: Type.String({ description: 'The hostname of the short link' }),
    slug: Type.String(),
    outcome: Type.String({
      description: 'What the visitor got: `redirect`, `block`, `gone`, `password`, `warn`, `page`, `app`, or `preview` (a social crawler shown the link\'s card)',
    }),
    destination: Nullable(Type.String(), { description: 'Where the visitor was sent (redirects), else null' }),
    decision: Type.Object(
      {
        step: StringEnum(DECISION_STEPS, { description: 'The step of the decision order that decided' }),
        rule_id: Nullable(Type.String(), { description: 'The rule that matched (also when it passed)' }),
        workspace_rule: Type.Boolean({ description: 'That rule is a workspace rule' }),
        targeting_index: Nullable(Type.Integer({ minimum: 0 })),
        variant_index: Nullable(Type.Integer({ minimum: 0 })),
        destination_id: Nullable(Type.String(), { description: 'The rotator destination chosen' }),
        rotator_fallback: Type.Boolean(),
      },
      closed,
    ),
    visitor: Type.Object(
      {
        ip: Nullable(Type.String(), { description: 'As stored under IP_STORAGE: truncated, a keyed hash, or null' }),
        device: StringEnum(DEVICES),
        os: StringEnum(OPERATING_SYSTEMS),
        browser: Nullable(Type.String()),
        language: Nullable(Type.String()),
        country: Nullable(Type.String({ description: 'ISO 3166-1 alpha-2' })),
        region: Nullable(Type.String()),
        city: Nullable(Type.String()),
        asn: Nullable(Type.Integer({ minimum: 0 })),
        visitor_type: StringEnum(VISITOR_TYPES),
        verified_bot: Type.Boolean(),
        bot_name: Nullable(Type.String()),
        proxy_type: Nullable(StringEnum(PROXY_TYPES)),
        quality: Type.Integer({ minimum: 0, maximum: 100 }),
        referer: Nullable(Type.String()),
        visit: StringEnum(['first', 'repeat'] as const),
        visitor_id: Type.String({ description: 'Pseudonymous, from the visitor cookie' }),
      },
      closed,
    ),
  },
  { ...closed, $id: 'ClickEvent', description: 'One click: the visitor profile and the decision the redirect took' },
);
export type ClickEvent = Static<typeof ClickEventSchema>;

/** The `data` of a `link.clicked` delivery: a batch of clicks of one workspace, oldest first. */
export const ClickedEventDataSchema = Type.Object(
  {
    clicks: Type.Array(ClickEventSchema, { minItems: 1, description: 'At most WEBHOOK_CLICK_BATCH_SIZE clicks (100 by default), in the order they were recorded' }),
  },
  { ...closed, $id: 'ClickedEventData' },
);
export type ClickedEventData = Static<typeof ClickedEventDataSchema>;

export function clickEventOf(record: ClickRecord): ClickEvent {
  return {
    id: record.id,
    ts: record.ts,
    link_id: record.link_id,
    domain: record.domain,
    slug: record.slug,
    outcome: record.outcome,
    destination: record.destination,
    decision: storedDecisionOf(record.decision),
    visitor: { ...record.visitor },
  };
}
