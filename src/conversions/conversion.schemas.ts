// The conversions API contract (spec 1, 6.1, 7): what a customer's site reports when a visitor it received through
// a short link converts, and the conversion as stored and listed. One declaration: validator, types and OpenAPI.
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Integer, Nullable, PaginationSchema, StringEnum, Text, closed } from '../platform/schema.ts';

export const CONVERSION_TYPES = ['order', 'signup', 'custom'] as const;
export type ConversionType = (typeof CONVERSION_TYPES)[number];

export const MAX_METADATA_KEYS = 20;
export const MAX_METADATA_VALUE_CHARS = 500;

const ClickId = Text(1, 200, { description: 'The `lp_click_id` query parameter the visitor arrived with on the destination' });
const Amount = Integer(0, Number.MAX_SAFE_INTEGER, { description: 'Integer minor units of `currency` (cents for USD, yen for JPY): never a float' });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, uppercase' });
const Goal = Text(1, 100, { description: 'The goal reached; required for `custom`' });
const ExternalId = Text(1, 200, { description: 'Your id for this conversion (an order number): the same id again answers the first conversion, 200, and records nothing' });
const CustomerExternalId = Text(1, 200, { description: 'Your id for the customer' });

/** Flat, bounded: at most 20 keys, values scalars, strings at most 500 characters. */
const Metadata = Type.Unsafe<Record<string, string | number | boolean | null>>({
  type: 'object',
  maxProperties: MAX_METADATA_KEYS,
  propertyNames: { pattern: '^[A-Za-z0-9_.-]{1,40}$' },
  additionalProperties: { type: ['string', 'number', 'boolean', 'null'], maxLength: MAX_METADATA_VALUE_CHARS },
  description: `Free-form facts for your own use: at most ${MAX_METADATA_KEYS} keys (letters, digits, \`_ . -\`, at most 40 characters), scalar values, strings at most ${MAX_METADATA_VALUE_CHARS} characters`,
});

function needs(...fields: string[]) {
  return { type: 'object', properties: Object.fromEntries(fields.map((f) => [f, {}])), required: fields };
}

export const ConversionCreateSchema = Type.Object(
  {
    click_id: ClickId,
    type: StringEnum(CONVERSION_TYPES, { description: '`order` needs amount and currency; `custom` needs goal' }),
    goal: Type.Optional(Goal),
    amount: Type.Optional(Amount),
    currency: Type.Optional(Currency),
    external_id: Type.Optional(ExternalId),
    customer_external_id: Type.Optional(CustomerExternalId),
    occurred_at: Type.Optional(DateTime({ description: 'When the conversion happened (default: now); not before the click, not in the future' })),
    metadata: Type.Optional(Metadata),
  },
  {
    ...closed,
    $id: 'ConversionCreate',
    // Which fields each type needs (ajv's strictRequired wants every required name declared where it is required).
    allOf: [
      { if: { type: 'object', properties: { type: { const: 'order' } } }, then: needs('amount', 'currency') },
      { if: { type: 'object', properties: { type: { const: 'custom' } } }, then: needs('goal') },
      { if: { type: 'object', properties: { amount: {} }, required: ['amount'] }, then: needs('currency') },
      { if: { type: 'object', properties: { currency: {} }, required: ['currency'] }, then: needs('amount') },
    ],
  },
);
export type ConversionCreate = Static<typeof ConversionCreateSchema>;

export const ConversionSchema = Type.Object(
  {
    id: Type.String({ description: 'Prefix `cnv_`' }),
    click_id: Type.String(),
    clicked_at: DateTime({ description: 'When the click the conversion is attributed to happened' }),
    link_id: Type.String(),
    domain: Type.String(),
    slug: Type.String(),
    type: StringEnum(CONVERSION_TYPES),
    goal: Nullable(Type.String()),
    amount: Nullable(Type.Integer({ minimum: 0 })),
    currency: Nullable(Type.String()),
    external_id: Nullable(Type.String()),
    customer_external_id: Nullable(Type.String()),
    occurred_at: DateTime(),
    created_at: DateTime(),
    metadata: Metadata,
    attribution: Type.Object(
      {
        variant_index: Nullable(Type.Integer({ minimum: 0, maximum: 9 }), { description: 'The A/B variant the click was sent to' }),
        destination_id: Nullable(Type.String(), { description: 'The rotator destination the click was sent to' }),
        country: Nullable(Type.String()),
        device: Type.String(),
      },
      { ...closed, description: 'What the click that converted was: the dimensions conversions are broken down by' },
    ),
  },
  { ...closed, $id: 'Conversion' },
);
export type Conversion = Static<typeof ConversionSchema>;

export const ConversionListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Text(1, 500, { description: 'The next_cursor of the previous page, unchanged' })),
    limit: Integer(1, 100, { default: 50 }),
    link_id: Type.Optional(Text(3, 64)),
    type: Type.Optional(StringEnum(CONVERSION_TYPES)),
    from: Type.Optional(DateTime({ description: 'occurred_at at or after this instant' })),
    to: Type.Optional(DateTime({ description: 'occurred_at before this instant' })),
  },
  closed,
);
export type ConversionListQuery = Static<typeof ConversionListQuerySchema>;

export const ConversionListSchema = Type.Object({ data: Type.Array(ConversionSchema), pagination: PaginationSchema }, { ...closed, $id: 'ConversionList' });
