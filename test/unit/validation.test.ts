import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../src/platform/schema.ts';
import { bodyValidator, queryValidator } from '../../src/http/validation.ts';
import { InvalidRequestError, ValidationError } from '../../src/platform/errors.ts';
import { MAX_JSON_DEPTH, jsonTextTooDeep } from '../../src/http/json-depth.ts';

describe('validation details', () => {
  const schema = Type.Object(
    {
      targeting: Type.Array(
        Type.Object({ match: Type.Object({ country: Type.Array(Type.String({ pattern: '^[A-Z]{2}$' })) }, { additionalProperties: false }), url: Type.String() }, { additionalProperties: false }),
        { maxItems: 2 },
      ),
    },
    { additionalProperties: false },
  );
  const validate = bodyValidator(schema);

  function detailsOf(value: unknown): Array<{ path: string; message: string }> {
    try {
      validate(value);
    } catch (error) {
      expect(error).to.be.instanceOf(ValidationError);
      return (error as ValidationError).details!;
    }
    throw new Error('expected a validation error');
  }

  it('names the nested field with array indexes', () => {
    const details = detailsOf({ targeting: [{ match: { country: ['FR', 'fr'] }, url: 'x' }] });
    expect(details.map((d) => d.path)).to.deep.equal(['targeting[0].match.country[1]']);
  });

  it('names a missing field and an extra one', () => {
    const paths = detailsOf({ targeting: [{ match: { country: [], planet: 'mars' } }] }).map((d) => d.path);
    expect(paths).to.include.members(['targeting[0].url', 'targeting[0].match.planet']);
  });

  it('names an array over its bound', () => {
    const item = { match: { country: ['FR'] }, url: 'x' };
    expect(detailsOf({ targeting: [item, item, item] })[0]!.path).to.equal('targeting');
  });

  it('coerces query strings and applies defaults', () => {
    const q = queryValidator(Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }) }));
    expect(q({})).to.deep.equal({ limit: 50 });
    expect(q({ limit: '7' })).to.deep.equal({ limit: 7 });
    expect(() => q({ limit: '101' })).to.throw(ValidationError);
  });

  it('takes only plain decimal digits for an integer query value, and true/false for a boolean', () => {
    const q = queryValidator(Type.Object({ limit: Type.Optional(Type.Integer()), on: Type.Optional(Type.Boolean()) }));
    expect(q({ limit: '-12', on: 'false' })).to.deep.equal({ limit: -12, on: false });
    expect(q({ limit: '0' })).to.deep.equal({ limit: 0 });
    for (const limit of [' 5', '5 ', '1e2', '0x10', '+5', '5.0', '', '0b1', '010', '00', '-01']) {
      expect(() => q({ limit }), JSON.stringify(limit)).to.throw(ValidationError);
    }
    for (const on of ['1', 'TRUE', 'yes', '']) expect(() => q({ on }), JSON.stringify(on)).to.throw(ValidationError);
  });

  it('refuses a lone surrogate anywhere in a body, naming where', () => {
    const b = bodyValidator(Type.Object({ tags: Type.Array(Type.String()) }));
    expect(() => b({ tags: ['ok', 'x\ud800'] })).to.throw(ValidationError).with.property('details').deep.equal([
      { path: 'tags[1]', message: 'must be well-formed Unicode text (no lone UTF-16 surrogate)' },
    ]);
    expect(b({ tags: ['😀'] })).to.deep.equal({ tags: ['😀'] });
  });

  it('compiles a schema after another that contains it (ids are reused, not registered twice)', () => {
    const Inner = Type.Object({ n: Type.Integer({ maximum: 3 }) }, { additionalProperties: false, $id: 'OrderInner' });
    const Outer = Type.Array(Inner, { $id: 'OrderOuter' });
    const outer = bodyValidator(Outer);
    const inner = bodyValidator(Inner);
    expect(outer([{ n: 1 }])).to.deep.equal([{ n: 1 }]);
    expect(() => inner({ n: 4 })).to.throw(ValidationError);
    expect(inner({ n: 2 })).to.deep.equal({ n: 2 });
  });
});

describe('nesting depth bound', () => {
  /** `levels` arrays inside one another around 1, built without recursion. */
  function nestedValue(levels: number): unknown {
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) value = [value];
    return value;
  }

  const validate = bodyValidator(Type.Object({ x: Type.Unknown() }, { additionalProperties: false }));

  it('takes a value nested exactly to the bound', () => {
    // The outer object is one level, the arrays inside it the rest.
    expect(validate({ x: nestedValue(MAX_JSON_DEPTH - 1) })).to.have.property('x');
  });

  it('refuses one level more as an invalid request naming the bound, before any walk of the value', () => {
    expect(() => validate({ x: nestedValue(MAX_JSON_DEPTH) }))
      .to.throw(InvalidRequestError)
      .with.property('message')
      .that.contains(String(MAX_JSON_DEPTH));
  });

  it('refuses 100,000 levels without overflowing the stack', () => {
    expect(() => validate({ x: nestedValue(100_000) })).to.throw(InvalidRequestError);
  });

  it('counts the depth of JSON text, brackets inside strings excepted', () => {
    const text = (levels: number) => '['.repeat(levels) + '1' + ']'.repeat(levels);
    expect(jsonTextTooDeep(text(MAX_JSON_DEPTH))).to.equal(false);
    expect(jsonTextTooDeep(text(MAX_JSON_DEPTH + 1))).to.equal(true);
    expect(jsonTextTooDeep('{"a":' + '{"b":'.repeat(MAX_JSON_DEPTH) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1))).to.equal(true);
    expect(jsonTextTooDeep(JSON.stringify({ s: '['.repeat(1000) + '\\"{' + '{'.repeat(1000) }))).to.equal(false);
    // Siblings do not add up: depth is how far in, not how many.
    expect(jsonTextTooDeep('[' + '[],'.repeat(1000) + '[]]')).to.equal(false);
  });
});

describe('nullable closed sets', () => {
  it('takes null and each value of a nullable enum, and nothing else', () => {
    const validate = bodyValidator(Type.Object({ interval: Nullable(StringEnum(['7d', '30d'] as const)) }, { additionalProperties: false }));
    expect(validate({ interval: null })).to.deep.equal({ interval: null });
    expect(validate({ interval: '7d' })).to.deep.equal({ interval: '7d' });
    expect(() => validate({ interval: '8d' })).to.throw(ValidationError);
  });
});
