// Schema building blocks every feature declares its shapes with (JSON Schema through TypeBox). They sit below every
// feature, so analytics, partner or conversions need not import links to say "an http URL" or "a country".
//
// Two constraints of the validator (src/http/validation.ts, ajv strict with useDefaults) shape these helpers:
// - ajv ignores `default` inside anyOf/oneOf (and strict mode refuses to compile it), so a nullable object is one
//   schema with `type: ['object', 'null']` rather than a union with null.
// - A field with a default is listed as required: ajv fills it in before `required` is checked, so a request may omit
//   it, and the validated value (and the Static type) always has it. The published document leaves such fields out
//   of `required` (src/http/openapi.ts), since a client may omit them. Response schemas carry no defaults at all.
import { Kind, Type, type SchemaOptions, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** A closed set of strings, as one `enum` (one error message, not one per branch of a union of literals). */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/** A closed set of integers, as one `enum`. */
export function IntegerEnum<const T extends readonly number[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'integer', enum: [...values] });
}

/** `T or null` as one schema (`type: [t, 'null']`): defaults inside still apply, and errors name the field once. */
export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}): TUnsafe<Static<T> | null> {
  const type = (schema as { type?: unknown }).type;
  if (typeof type !== 'string') throw new Error('Nullable() needs a schema with a single `type`');
  // A closed set takes null among its values too: `enum` is checked beside `type`, and would refuse it.
  const values = (schema as { enum?: unknown }).enum;
  const closedSet = Array.isArray(values) ? { enum: [...(values as unknown[]), null] } : {};
  return Type.Unsafe<Static<T> | null>({ ...schema, ...options, ...closedSet, [Kind]: 'Unsafe', type: [type, 'null'] });
}

/** A deep copy without `default` keywords: response schemas describe what is sent, nothing is filled in. */
export function withoutDefaults<T extends TSchema>(schema: T): T {
  return strip(schema, false) as T;
}

function strip(value: unknown, isPropertyMap: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => strip(item, false));
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<PropertyKey, unknown>;
  const copy: Record<PropertyKey, unknown> = {};
  for (const key of Reflect.ownKeys(source)) {
    // In a `properties` map the keys are field names, so a field called "default" stays.
    if (key === 'default' && !isPropertyMap) continue;
    copy[key] = strip(source[key], key === 'properties' && !isPropertyMap);
  }
  return copy;
}

/** Case-insensitive regex source for a word, for ajv patterns (which take no flags). */
function anyCase(word: string): string {
  return [...word].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join('');
}

/** Schemes that run code or read local files where a browser opens them; never accepted in any URL field. */
const DANGEROUS_SCHEMES = ['javascript', 'vbscript', 'data', 'file', 'blob'].map(anyCase).join('|');
export const NOT_DANGEROUS = `^(?!(?:${DANGEROUS_SCHEMES}):)`;

/** A destination: an absolute http(s) URI. */
export function HttpUrl(maxLength = 8192, options: SchemaOptions = {}) {
  return Type.String({ description: 'Absolute http(s) URL', ...options, format: 'uri', pattern: '^https?://', maxLength });
}

/** Any absolute URI (store links may be `market:` or `itms-apps:`) except a script, data or file URI. */
export function SafeUri(maxLength: number, options: SchemaOptions = {}) {
  return Type.String({ description: 'Absolute URI; javascript:, vbscript:, data:, file: and blob: are refused', ...options, format: 'uri', pattern: NOT_DANGEROUS, maxLength });
}

export const DateTime = (options: SchemaOptions = {}) => Type.String({ ...options, format: 'date-time' });
export const Integer = (minimum: number, maximum: number, options: SchemaOptions = {}) => Type.Integer({ ...options, minimum, maximum });
export const Text = (minLength: number, maxLength: number, options: SchemaOptions = {}) => Type.String({ ...options, minLength, maxLength });
export const ReferenceId = (options: SchemaOptions = {}) => Text(3, 64, options);

/**
 * A name people read (a workspace, a client): counted in Unicode characters, as JSON Schema and ajv count them (an
 * emoji is one), with at least one character that is not white space. Surrounding white space is trimmed when stored.
 */
export const DisplayName = (maxLength: number, options: SchemaOptions = {}) =>
  Type.String({ description: `1 to ${maxLength} characters, not all white space; trimmed when stored`, ...options, minLength: 1, maxLength, pattern: '\\S' });

/** The rule of `DisplayName` for names that do not come through a validated request (the CLI): trimmed, or null if out of bounds. */
export function displayName(value: string, maxLength: number): string | null {
  const name = value.trim();
  const length = [...name].length;
  return length === 0 || length > maxLength ? null : name;
}
export const closed = { additionalProperties: false } as const;

export const COUNTRY = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 code, uppercase' });
export const LANGUAGE = Type.String({ pattern: '^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?$', description: 'Language tag such as `en` or `pt-BR`' });

export const DEVICES = ['desktop', 'mobile', 'tablet'] as const;
export const OPERATING_SYSTEMS = ['ios', 'android', 'windows', 'macos', 'linux', 'other'] as const;

/** The cursor pagination envelope of spec part 8. */
export const PaginationSchema = Type.Object({ next_cursor: Nullable(Type.String()), has_more: Type.Boolean() }, closed);
