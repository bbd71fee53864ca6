import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';
import { ValidationError, type ErrorDetail } from '../platform/errors.ts';

// ajv-formats is CommonJS with a default export; under NodeNext its callable sits on `.default`.
const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv };

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: true, coerceTypes, allowUnionTypes: true });
  addFormats.default(ajv);
  return ajv;
}

// Bodies are JSON and typed as sent; query strings are text, so their numbers and booleans are coerced.
const bodyAjv = makeAjv(false);
const queryAjv = makeAjv(true);

export type Validator<T> = (value: unknown, root?: string) => T;

function build<S extends TSchema>(ajv: Ajv, schema: S): Validator<Static<S>> {
  // ajv registers every `$id` it meets, nested ones included: a schema already seen inside another is reused,
  // not compiled again (which ajv refuses), so the order routes are declared in does not matter.
  const id = (schema as { $id?: unknown }).$id;
  const known = typeof id === 'string' ? (ajv.getSchema<Static<S>>(id) as ValidateFunction<Static<S>> | undefined) : undefined;
  const validate: ValidateFunction<Static<S>> = known ?? ajv.compile<Static<S>>(schema);
  return (value, root = '') => {
    if (validate(value)) return value;
    throw new ValidationError(toDetails(validate.errors ?? [], root));
  };
}

export function bodyValidator<S extends TSchema>(schema: S): Validator<Static<S>> {
  return build(bodyAjv, schema);
}

export function queryValidator<S extends TSchema>(schema: S): Validator<Static<S>> {
  return build(queryAjv, schema);
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
