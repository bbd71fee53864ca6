import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';
import { ValidationError, type ErrorDetail } from '../platform/errors.ts';
import { JsonTooDeepError, valueTooDeep } from './json-depth.ts';

// ajv-formats is CommonJS with a default export; under NodeNext its callable sits on `.default`.
const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv };

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: true, coerceTypes, allowUnionTypes: true });
  addFormats.default(ajv);
  return ajv;
}

// Bodies are JSON and typed as sent. Query strings are text: their integers, numbers and booleans are converted by
// `queryCoercer` below, strictly, not by ajv's coerceTypes (which takes " 5", "1e2" or "0x10" for an integer).
const bodyAjv = makeAjv(false);
const queryAjv = makeAjv(false);

export type Validator<T> = (value: unknown, root?: string) => T;

function build<S extends TSchema>(ajv: Ajv, schema: S): Validator<Static<S>> {
  // ajv registers every `$id` it meets, nested ones included: a schema already seen inside another is reused,
  // not compiled again (which ajv refuses), so the order routes are declared in does not matter.
  const id = (schema as { $id?: unknown }).$id;
  const known = typeof id === 'string' ? (ajv.getSchema<Static<S>>(id) as ValidateFunction<Static<S>> | undefined) : undefined;
  const validate: ValidateFunction<Static<S>> = known ?? ajv.compile<Static<S>>(schema);
  return (value, root = '') => {
    // First, before anything recurses into the value: its depth bounds every walk that follows.
    if (valueTooDeep(value)) throw new JsonTooDeepError();
    const illFormed = illFormedString(value, []);
    if (illFormed) throw new ValidationError([{ path: joinPath(root, illFormed) || '(body)', message: ILL_FORMED }]);
    if (validate(value)) return value;
    throw new ValidationError(toDetails(validate.errors ?? [], root));
  };
}

export function bodyValidator<S extends TSchema>(schema: S): Validator<Static<S>> {
  return build(bodyAjv, schema);
}

export function queryValidator<S extends TSchema>(schema: S): Validator<Static<S>> {
  const validate = build(queryAjv, schema);
  const coerce = queryCoercer(schema);
  return (value, root) => validate(coerce(value as Record<string, unknown>), root);
}

export const ILL_FORMED = 'must be well-formed Unicode text (no lone UTF-16 surrogate)';

/**
 * The path of the first string (value or property name) holding a lone UTF-16 surrogate, which JSON can carry as
 * `"\ud800"` but which is not Unicode text: stored, it would break every client that decodes it strictly.
 */
function illFormedString(value: unknown, path: string[]): string[] | null {
  if (typeof value === 'string') return value.isWellFormed() ? null : path;
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = illFormedString(value[i], [...path, String(i)]);
      if (found) return found;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    if (!key.isWellFormed()) return [...path, key];
    const found = illFormedString(item, [...path, key]);
    if (found) return found;
  }
  return null;
}

// The text forms a query value takes for each JSON type: an integer as JSON writes it (decimal digits, no leading
// zero, no blanks, exponent, hex or sign other than "-"), a decimal fraction for a number, `true`/`false` for a
// boolean. Anything else stays a string, and the schema refuses it with its own message.
const QUERY_FORMS: Record<string, { form: RegExp; convert: (text: string) => unknown }> = {
  integer: { form: /^-?(?:0|[1-9][0-9]{0,15})$/, convert: Number },
  number: { form: /^-?(?:0|[1-9][0-9]{0,15})(?:\.[0-9]{1,16})?$/, convert: Number },
  boolean: { form: /^(?:true|false)$/, convert: (text) => text === 'true' },
};

/** Converts the query values whose property is typed integer, number or boolean (a repeated one stays an array, which the schema refuses). */
function queryCoercer(schema: TSchema): (query: Record<string, unknown>) => Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  const conversions = new Map<string, (text: string) => unknown>();
  for (const [name, property] of Object.entries(properties)) {
    const declared = (property as { type?: unknown }).type;
    const types = Array.isArray(declared) ? (declared as string[]) : typeof declared === 'string' ? [declared] : [];
    const forms = types.flatMap((type) => (QUERY_FORMS[type] ? [QUERY_FORMS[type]] : []));
    if (forms.length === 0) continue;
    conversions.set(name, (text) => {
      const match = forms.find(({ form }) => form.test(text));
      return match ? match.convert(text) : text;
    });
  }
  return (query) => {
    if (conversions.size === 0) return query;
    const out: Record<string, unknown> = { ...query };
    for (const [name, convert] of conversions) {
      const value = out[name];
      if (typeof value === 'string') out[name] = convert(value);
    }
    return out;
  };
}

/** ajv's errors as the spec's details: `path` names the field (`targeting[0].match.country`), one entry each. */
export function toDetails(errors: ErrorObject[], root = ''): ErrorDetail[] {
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  for (const e of errors) {
    // A failed oneOf/anyOf repeats every branch's errors; the branch errors already say what is wrong.
    if (e.keyword === 'if') continue;
    const segments = e.instancePath.split('/').slice(1).map(unescapePointer);
    const params = e.params as { missingProperty?: string; additionalProperty?: string };
    if (e.keyword === 'required' && params.missingProperty) segments.push(params.missingProperty);
    if (e.keyword === 'additionalProperties' && params.additionalProperty) segments.push(params.additionalProperty);
    const path = joinPath(root, segments);
    const message =
      e.keyword === 'additionalProperties' ? 'is not an allowed property' : e.keyword === 'required' ? 'is required' : (e.message ?? 'is invalid');
    const id = `${path}\n${message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    details.push({ path: path || '(body)', message });
  }
  return details;
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function joinPath(root: string, segments: string[]): string {
  let path = root;
  for (const s of segments) {
    if (/^\d+$/.test(s)) path += `[${s}]`;
    else path += path === '' ? s : `.${s}`;
  }
  return path;
}
