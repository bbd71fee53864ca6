// Refusals that carry MongoDB's own code rather than a generic BadValue (2): the driver and the product branch on
// codes, so a refusal answered with the wrong one hides bugs until production.
import { expect } from 'chai';
import type { Document } from 'mongodb';
import { refusal, startHarness, type Harness } from './harness.ts';

describe('devdb answers MongoDB\'s error codes', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    await h.db.collection('codes').insertMany([{ _id: 1, a: 1, b: 2, s: 'abc' } as Document]);
  });
  after(async () => {
    await h.stop();
  });

  it('two operators on the same path: 40 ConflictingUpdateOperators "Updating the path \'a\' would create a conflict at \'a\'"', async () => {
    const err = await refusal(h.db.collection('codes').updateOne({ _id: 1 } as never, { $set: { a: 5 }, $inc: { a: 1 } }));
    expect(err.code).to.equal(40);
    expect(err.message).to.equal("Updating the path 'a' would create a conflict at 'a'");
    expect(await h.db.collection('codes').findOne({ _id: 1 } as never)).to.include({ a: 1 });
  });

  it('an exclusion in an inclusion projection (find and $project): 31254 "Cannot do exclusion on field b in inclusion projection"', async () => {
    const coll = h.db.collection('codes');
    for (const attempt of [() => coll.find({}, { projection: { a: 1, b: 0 } }).toArray(), () => coll.aggregate([{ $project: { a: 1, b: 0 } }]).toArray()]) {
      const err = await refusal(attempt());
      expect(err.code).to.equal(31254);
      expect(err.codeName).to.equal('Location31254');
      expect(err.message).to.equal('Cannot do exclusion on field b in inclusion projection');
    }
    // _id may be excluded from an inclusion projection.
    expect(await coll.find({}, { projection: { a: 1, _id: 0 } }).toArray()).to.deep.equal([{ a: 1 }]);
  });

  it('an inclusion in an exclusion projection: 31253 "Cannot do inclusion on field a in exclusion projection"', async () => {
    const err = await refusal(h.db.collection('codes').find({}, { projection: { b: 0, a: 1 } }).toArray());
    expect(err.code).to.equal(31253);
  });

  it('an unknown pipeline stage: 40324 "Unrecognized pipeline stage name: \'$frobnicate\'"', async () => {
    const err = await refusal(h.db.collection('codes').aggregate([{ $frobnicate: {} }]).toArray());
    expect(err.code).to.equal(40324);
    expect(err.codeName).to.equal('Location40324');
    expect(err.message).to.equal("Unrecognized pipeline stage name: '$frobnicate'");
  });

  it('a conversion that fails without onError ($toInt, $convert): 241 ConversionFailure', async () => {
    const coll = h.db.collection('codes');
    for (const expr of [{ $toInt: '$s' }, { $convert: { input: '$s', to: 'int' } }]) {
      const err = await refusal(coll.aggregate([{ $project: { x: expr } }]).toArray());
      expect(err.code).to.equal(241);
      expect(err.codeName).to.equal('ConversionFailure');
    }
  });

  it('an _id that is an array or a regex: 53 InvalidIdField', async () => {
    const coll = h.db.collection('codes');
    for (const _id of [[1, 2], /x/]) {
      const err = await refusal(coll.insertOne({ _id } as never));
      expect(err.code).to.equal(53);
      expect(err.message).to.match(/^The '_id' value cannot be of type (array|regex)$/);
    }
    expect(await coll.countDocuments({})).to.equal(1);
  });

  it('an invalid regular expression in a filter: 51091 "Regular expression is invalid"', async () => {
    const err = await refusal(h.db.collection('codes').find({ s: { $regex: '(' } }).toArray());
    expect(err.code).to.equal(51091);
    expect(err.codeName).to.equal('Location51091');
    expect(err.message).to.match(/^Regular expression is invalid/);
  });

  it('an unknown regex option: 51108 "invalid flag in regex options"', async () => {
    const err = await refusal(h.db.collection('codes').find({ s: { $regex: 'a', $options: 'z' } }).toArray());
    expect(err.code).to.equal(51108);
  });

  it('$switch with no matching branch and no default: 40066', async () => {
    const err = await refusal(h.db.collection('codes').aggregate([{ $project: { x: { $switch: { branches: [{ case: { $eq: ['$a', 99] }, then: 'no' }] } } } }]).toArray());
    expect(err.code).to.equal(40066);
    expect(err.codeName).to.equal('Location40066');
    expect(err.message).to.equal('$switch could not find a matching branch for an input, and no default was specified.');
    const [ok] = await h.db.collection('codes').aggregate([{ $project: { _id: 0, x: { $switch: { branches: [{ case: { $eq: ['$a', 99] }, then: 'no' }], default: 'yes' } } } }]).toArray();
    expect(ok).to.deep.equal({ x: 'yes' });
  });
});
