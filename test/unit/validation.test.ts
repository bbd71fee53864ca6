import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { bodyValidator, queryValidator } from '../../src/http/validation.ts';
import { ValidationError } from '../../src/platform/errors.ts';

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
