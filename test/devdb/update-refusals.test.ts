// Operator updates MongoDB refuses rather than ignoring: each refusal answers MongoDB's code and leaves the document
// as it was.
import { expect } from 'chai';
import type { Collection, Document, UpdateFilter } from 'mongodb';
import { refusal, startHarness, type Harness } from './harness.ts';

describe('devdb refuses the operator updates MongoDB refuses', () => {
  let h: Harness;
  let coll: Collection<Document>;
  const original = { _id: 1, s: 'text', n: 5, nil: null, list: [1, 2], sub: { c: 'str', k: 1 } };
  before(async () => {
    h = await startHarness();
    coll = h.db.collection('refusals');
  });
  after(async () => {
    await h.stop();
  });
  beforeEach(async () => {
    await coll.deleteMany({});
    await coll.insertOne({ ...original } as never);
  });

  async function refused(update: UpdateFilter<Document> | Document[], code: number, message: RegExp | string, options: Document = {}): Promise<void> {
    const err = await refusal(coll.updateOne({ _id: 1 } as never, update, options));
    expect(err.code, err.message).to.equal(code);
    if (typeof message === 'string') expect(err.message).to.equal(message);
    else expect(err.message).to.match(message);
    expect(await coll.findOne({ _id: 1 } as never)).to.deep.equal(original);
  }

  it('$inc of a string field: 14 TypeMismatch "Cannot apply $inc to a value of non-numeric type"', async () => {
    await refused({ $inc: { s: 1 } }, 14, "Cannot apply $inc to a value of non-numeric type. {_id: 1} has the field 's' of non-numeric type string");
  });

  it('$inc of a string in a sub-document (the stored-bytes path): 14 TypeMismatch', async () => {
    await refused({ $inc: { 'sub.c': 1, 'sub.k': 1 } }, 14, /non-numeric type string/);
  });

  it('$inc of a null field: 14 TypeMismatch', async () => {
    await refused({ $inc: { nil: 1 } }, 14, /of non-numeric type null/);
  });

  it('$inc by a string: 14 TypeMismatch "Cannot increment with non-numeric argument"', async () => {
    await refused({ $inc: { n: 'one' } } as never, 14, 'Cannot increment with non-numeric argument: {n: "one"}');
  });

  it('$mul of a string field: 14 TypeMismatch "Cannot apply $mul to a value of non-numeric type"', async () => {
    await refused({ $mul: { s: 2 } }, 14, /^Cannot apply \$mul to a value of non-numeric type/);
  });

  it('$set of "a.b" where a is a number: 28 PathNotViable "Cannot create field \'b\' in element {a: 5}"', async () => {
    await refused({ $set: { 'n.b': 1 } }, 28, "Cannot create field 'b' in element {n: 5}");
  });

  it('$set of "a.b" where a is null, and where a is an array (b not an index): 28 PathNotViable', async () => {
    await refused({ $set: { 'nil.b': 1 } }, 28, "Cannot create field 'b' in element {nil: null}");
    await refused({ $set: { 'list.b': 1 } }, 28, "Cannot create field 'b' in element {list: [ 1, 2 ]}");
  });

  it('$set of "a.b.c" where a.b is a string: 28 PathNotViable', async () => {
    await refused({ $set: { 'sub.c.d': 1 } }, 28, 'Cannot create field \'d\' in element {sub.c: "str"}');
  });

  it('$push to a non-array: 2 BadValue "The field ... must be an array"', async () => {
    await refused({ $push: { n: 1 } } as never, 2, "The field 'n' must be an array but is of type int in document {_id: 1}");
  });

  it('an arrayFilters identifier no path uses: 9 FailedToParse, even when no document matches', async () => {
    await refused({ $set: { 'list.$[x]': 0 } }, 9, /^The array filter for identifier 'y' was not used in the update/, { arrayFilters: [{ x: 1 }, { y: 2 }] });
    const err = await refusal(coll.updateOne({ _id: 'none' } as never, { $set: { 'list.$[x]': 0 } }, { arrayFilters: [{ x: 1 }, { y: 2 }] }));
    expect(err.code).to.equal(9);
  });

  it('a path identifier without its array filter: 2 BadValue "No array filter found for identifier"', async () => {
    await refused({ $set: { 'list.$[x]': 0 } }, 2, "No array filter found for identifier 'x' in path 'list.$[x]'", { arrayFilters: [] });
  });

  it('still applies the arrayFilters update every identifier of which is used', async () => {
    await coll.updateOne({ _id: 1 } as never, { $set: { 'list.$[x]': 0 } }, { arrayFilters: [{ x: { $gt: 1 } }] });
    expect((await coll.findOne({ _id: 1 } as never))!.list).to.deep.equal([1, 0]);
  });

  it('findAndModify: the same refusals (14 TypeMismatch)', async () => {
    const err = await refusal(coll.findOneAndUpdate({ _id: 1 } as never, { $inc: { s: 1 } }));
    expect(err.code).to.equal(14);
    expect(err.codeName).to.equal('TypeMismatch');
  });
});
