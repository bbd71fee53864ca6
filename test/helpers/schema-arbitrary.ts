// fast-check arbitraries from the JSON Schemas of the published OpenAPI document: values meant to be valid (with
// bounds hit exactly and just past them), values with one field of the wrong type, and garbage.
import fc from 'fast-check';

export type Schema = boolean | { [key: string]: unknown };
type Components = Record<string, Schema>;

const MAX_DEPTH = 6;
const SAFE = Number.MAX_SAFE_INTEGER;

/** Any JSON value of the wrong kind for most fields, unicode and long strings included. */
export const garbage: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom('', ' ', '0', '-1', '1e2', '0x10', 'true', 'null', '../../etc/passwd', '<script>alert(1)</script>', '%00', 'x'.repeat(100_000)),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
  fc.jsonValue({ maxDepth: 3 }),
);

export class SchemaArbitraries {
  private readonly components: Components;

  constructor(components: Components) {
    this.components = components;
  }

  /** Values drawn from the schema: mostly valid, sometimes just past a bound. */
  valid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    if (schema === true || (typeof schema === 'object' && Object.keys(schema).length === 0)) return fc.jsonValue({ maxDepth: 2 });
    if (schema === false) return fc.constant(null);
    const s = this.resolve(schema);
    if ('const' in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    for (const key of ['anyOf', 'oneOf'] as const) {
      if (Array.isArray(s[key])) return fc.oneof(...(s[key] as Schema[]).map((branch) => this.valid(branch, depth + 1)));
    }
    if (Array.isArray(s.allOf) && s.type === undefined && s.properties === undefined) return this.valid((s.allOf as Schema[])[0]!, depth + 1);
    const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : s.properties ? ['object'] : [];
    if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
    return fc.oneof(...types.map((type) => this.ofType(type, s, depth)));
  }

  /** A valid value with one property replaced by garbage, or an unknown property added. */
  mutated(schema: Schema): fc.Arbitrary<unknown> {
    return fc.tuple(this.valid(schema), fc.nat(), fc.string({ maxLength: 8 }), garbage).map(([value, pick, extra, junk]) => {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return junk;
      const keys = Object.keys(value);
      const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      if (keys.length === 0 || pick % 4 === 0) copy[extra || 'unexpected'] = junk;
      else copy[keys[pick % keys.length]!] = junk;
      return copy;
    });
  }

  private resolve(schema: Schema): Record<string, unknown> {
    let s = schema as Record<string, unknown>;
    for (let hops = 0; typeof s.$ref === 'string' && hops < 10; hops++) {
      const name = s.$ref.replace('#/components/schemas/', '');
      const target = this.components[name];
      if (target === undefined) throw new Error(`fuzz: unresolved $ref ${s.$ref}`);
      s = { ...(target as Record<string, unknown>), ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== '$ref')) };
    }
    return s;
  }

  private ofType(type: string, s: Record<string, unknown>, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
      case 'number': {
        const min = typeof s.minimum === 'number' ? s.minimum : -SAFE;
        const max = typeof s.maximum === 'number' ? s.maximum : SAFE;
        const inside = type === 'integer' ? fc.integer({ min: Math.max(min, -SAFE), max: Math.min(max, SAFE) }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
        return fc.oneof({ weight: 4, arbitrary: inside }, { weight: 1, arbitrary: fc.constantFrom(min, max, min - 1, max + 1) });
      }
      case 'string':
        return this.string(s);
      case 'array': {
        if (depth >= MAX_DEPTH) return fc.constant([]);
        const minLength = typeof s.minItems === 'number' ? s.minItems : 0;
        const maxLength = Math.max(minLength, Math.min(typeof s.maxItems === 'number' ? s.maxItems : 4, 4));
        const items = s.items !== undefined ? this.valid(s.items as Schema, depth + 1) : fc.jsonValue({ maxDepth: 1 });
        return fc.array(items, { minLength, maxLength });
      }
      case 'object': {
        if (depth >= MAX_DEPTH) return fc.constant({});
        const properties = (s.properties ?? {}) as Record<string, Schema>;
        const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
        const model: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [name, property] of Object.entries(properties)) model[name] = this.valid(property, depth + 1);
        return fc.record(model, { requiredKeys: Object.keys(model).filter((name) => required.has(name)) });
      }
      default:
        return fc.jsonValue({ maxDepth: 1 });
    }
  }

  private string(s: Record<string, unknown>): fc.Arbitrary<string> {
    const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
    const maxLength = typeof s.maxLength === 'number' ? s.maxLength : Math.max(minLength, 40);
    let inside: fc.Arbitrary<string>;
    if (s.format === 'uri') inside = fc.webUrl({ withQueryParameters: true }).filter((u) => u.length <= maxLength);
    else if (s.format === 'date-time') inside = fc.date({ min: new Date(0), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
    else if (s.format === 'email') inside = fc.emailAddress();
    else if (typeof s.pattern === 'string') inside = matching(s.pattern, minLength, Math.min(maxLength, 200));
    else inside = fc.string({ unit: 'grapheme', minLength, maxLength: Math.min(maxLength, 200) });
    // Exactly at the bounds, and one past them.
    const edges = [minLength, maxLength, Math.max(0, minLength - 1), maxLength + 1].filter((n) => n <= 10_000).map((n) => 'a'.repeat(n));
    return fc.oneof({ weight: 5, arbitrary: inside }, { weight: 1, arbitrary: fc.constantFrom(...edges) });
  }
}

function matching(pattern: string, minLength: number, maxLength: number): fc.Arbitrary<string> {
  try {
    return fc.stringMatching(new RegExp(pattern, 'u'), { size: 'small' }).filter((text) => text.length >= minLength && text.length <= maxLength);
  } catch {
    // A pattern fast-check cannot generate from (a lookahead): plain strings, mostly refused.
    return fc.string({ minLength, maxLength });
  }
}
