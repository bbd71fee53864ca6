// The webhook endpoints API contract (spec 2.7, 2.8, 6): request and response schemas, validated by the router and
// published in the OpenAPI document from this one declaration.
import { Type, type SchemaOptions, type Static } from '@sinclair/typebox';
import { EVENT_TYPES, type EventType } from '../events/event-types.ts';

const closed = { additionalProperties: false } as const;
const DateTime = (options: SchemaOptions = {}) => Type.String({ ...options, format: 'date-time' });
const NullableDateTime = (description: string) => Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time', description });

export const MAX_ENDPOINTS_PER_TENANT = 20;
/** The delivery log keeps this much of a receiver's answer: enough to debug, bounded for a hostile receiver. */
export const RESPONSE_BODY_CAP_BYTES = 4096;

const EventTypeSchema = Type.Unsafe<EventType>({ type: 'string', enum: [...EVENT_TYPES] });

const TargetUrl = Type.String({
  format: 'uri',
  // Scheme letters in any case: the URI syntax makes them case-insensitive.
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  maxLength: 2048,
  description: 'Absolute http(s) URL receiving the POSTs; it must resolve to globally routable unicast addresses only (loopback, private, link-local, CGNAT, metadata and every other IANA special-purpose range, such as benchmarking 198.18.0.0/15 or documentation, are refused; an IPv6 form carrying an IPv4 address is judged by it)',
});
const Events = Type.Array(EventTypeSchema, {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  description: 'Event types to receive (spec 6.1); partner-only types need a partner key',
});
export const SIGNATURE_SCHEMES = ['linkplane', 'standard'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];
const SchemeDoc =
  'How deliveries are signed: `linkplane` (X-Service-Signature `t=…,v1=<hex>` over `t.body`, verifiable with Stripe\'s libraries) ' +
  'or `standard` (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` over `id.timestamp.body`, ' +
  'a `whsec_<base64>` secret). Changing it on an existing endpoint issues a new secret in that scheme\'s format';
const Scheme = (options: SchemaOptions = {}) => Type.Unsafe<SignatureScheme>({ type: 'string', enum: [...SIGNATURE_SCHEMES], description: SchemeDoc, ...options });

const Name = Type.String({ minLength: 1, maxLength: 100, description: 'A label for people' });

export const WebhookCreateSchema = Type.Object(
  { url: TargetUrl, events: Events, name: Type.Optional(Name), signature_scheme: Type.Optional(Scheme({ default: 'linkplane' })) },
  { ...closed, $id: 'WebhookCreate' },
);
export type WebhookCreate = Static<typeof WebhookCreateSchema>;

export const WebhookUpdateSchema = Type.Object(
  {
    url: Type.Optional(TargetUrl),
    events: Type.Optional(Events),
    name: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], minLength: 1, maxLength: 100, description: 'null clears it' })),
    signature_scheme: Type.Optional(Scheme()),
    status: Type.Optional(
      Type.Unsafe<'active'>({
        type: 'string',
        enum: ['active'],
        description: 'Re-enables a failing endpoint and resets its failure streak; events missed while it was failing are not replayed',
      }),
    ),
  },
  { ...closed, minProperties: 1, $id: 'WebhookUpdate' },
);
export type WebhookUpdate = Static<typeof WebhookUpdateSchema>;

const webhookFields = {
  id: Type.String({ description: 'Prefix `wh_`' }),
  url: Type.String({ format: 'uri' }),
  events: Type.Array(EventTypeSchema),
  name: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
  status: Type.Unsafe<'active' | 'failing'>({
    type: 'string',
    enum: ['active', 'failing'],
    description: '`failing` after the whole retry schedule failed: no new events until PATCHed back to `active`',
  }),
  signature_scheme: Scheme(),
  created_at: DateTime(),
  updated_at: DateTime(),
  secret_rotated_at: NullableDateTime('Last rotation of the signing secret; null if never rotated'),
  previous_secret_expires_at: NullableDateTime('Until then deliveries are also signed with the previous secret; null when no previous secret is live'),
};

export const WebhookSchema = Type.Object(webhookFields, { ...closed, $id: 'Webhook' });
export type Webhook = Static<typeof WebhookSchema>;

export const WebhookWithSecretSchema = Type.Object(
  { ...webhookFields, secret: Type.String({ description: 'The signing secret (`whsec_…`); shown only in this answer, store it now' }) },
  { ...closed, $id: 'WebhookWithSecret' },
);
export type WebhookWithSecret = Static<typeof WebhookWithSecretSchema>;

/** PATCH's answer: the endpoint, with its new secret when the change of `signature_scheme` issued one. */
export const WebhookUpdatedSchema = Type.Object(
  {
    ...webhookFields,
    secret: Type.Optional(Type.String({ description: 'Present only when `signature_scheme` changed: the new signing secret, shown only in this answer; the previous one stops signing at once' })),
  },
  { ...closed, $id: 'WebhookUpdated' },
);
export type WebhookUpdated = Static<typeof WebhookUpdatedSchema>;

export const WebhookListSchema = Type.Object(
  {
    data: Type.Array(WebhookSchema),
    pagination: Type.Object({ next_cursor: Type.Null(), has_more: Type.Literal(false) }, { ...closed, description: 'Always a single page' }),
  },
  { ...closed, $id: 'WebhookList' },
);

const Headers = Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' } });

export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'Prefix `dlv_`; the `id` of the delivered body' }),
    event_id: Type.String(),
    event_type: EventTypeSchema,
    attempt: Type.Integer({ minimum: 1, description: '1 for the first attempt, then one more per retry' }),
    created_at: DateTime(),
    request: Type.Object({ headers: Headers, body: Type.String({ description: 'The raw JSON body sent' }) }, closed),
    response: Type.Unsafe<{ status: number | null; headers: Record<string, string>; body: string } | null>({
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['status', 'headers', 'body'],
      properties: {
        status: { type: ['integer', 'null'], description: 'null when no HTTP answer came (timeout, refused connection)' },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        body: { type: 'string', description: `At most the first ${RESPONSE_BODY_CAP_BYTES} bytes of the answer` },
      },
      description: 'null while the attempt is pending',
    }),
    duration_ms: Type.Integer({ minimum: 0 }),
    outcome: Type.Unsafe<'succeeded' | 'failed' | 'pending'>({ type: 'string', enum: ['succeeded', 'failed', 'pending'] }),
    next_retry_at: NullableDateTime('When the next retry is due after a failure; null when none is scheduled'),
  },
  { ...closed, $id: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;

export const WebhookDeliveryListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'The next_cursor of the previous page, unchanged' })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  },
  closed,
);
export type WebhookDeliveryListQuery = Static<typeof WebhookDeliveryListQuerySchema>;

export const WebhookDeliveryListSchema = Type.Object(
  {
    data: Type.Array(WebhookDeliverySchema),
    pagination: Type.Object({ next_cursor: Type.Unsafe<string | null>({ type: ['string', 'null'] }), has_more: Type.Boolean() }, closed),
  },
  { ...closed, $id: 'WebhookDeliveryList' },
);
