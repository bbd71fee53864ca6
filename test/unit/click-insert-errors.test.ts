import { expect } from 'chai';
import { MongoBulkWriteError, MongoServerError, type BulkWriteResult } from 'mongodb';
import { duplicateIdErrors, eachIdOnce } from '../../src/clicks/click.store.ts';
import type { ClickRecord } from '../../src/visitor/click-record.ts';

/** A bulk write error as the driver builds it from a server reply. */
function bulkError(writeErrors: Array<{ index: number; code: number }>, code = writeErrors[0]?.code ?? 64): MongoBulkWriteError {
  const errors = writeErrors.map((e) => ({ ...e, errmsg: `error ${e.code}`, errInfo: undefined, getOperation: () => ({}), toJSON: () => e }));
  return new MongoBulkWriteError({ message: 'bulk write failed', code, writeErrors: errors } as never, {} as BulkWriteResult);
}

describe('click insert errors', () => {
  it('answers the write errors when every one is a duplicate id, else null', () => {
    expect(duplicateIdErrors(bulkError([{ index: 2, code: 11000 }, { index: 7, code: 11000 }]))?.map((e) => e.index)).to.deep.equal([2, 7]);
    expect(duplicateIdErrors(bulkError([{ index: 2, code: 11000 }, { index: 3, code: 121 }])), 'a document failing validation too').to.equal(null);
    // A bulk error with no write error (a write concern error): not a duplicate, the batch must be redelivered.
    expect(duplicateIdErrors(bulkError([])), 'no write error').to.equal(null);
    expect(duplicateIdErrors(new MongoServerError({ message: 'E11000', code: 11000 })), 'not a bulk write error').to.equal(null);
    expect(duplicateIdErrors(new Error('network')), 'another error').to.equal(null);
  });

  it('keeps each id of a batch once, in the batch order, among those kept', () => {
    const records = ['a', 'b', 'a', 'c', 'b', 'd'].map((id) => ({ id }) as ClickRecord);
    expect(eachIdOnce(records, () => true).map((r) => r.id)).to.deep.equal(['a', 'b', 'c', 'd']);
    expect(eachIdOnce(records, (r) => r.id !== 'b').map((r) => r.id)).to.deep.equal(['a', 'c', 'd']);
    // Kept by position: the second `a` alone (the first was counted before).
    expect(eachIdOnce(records, (_, i) => i >= 2).map((r) => r.id)).to.deep.equal(['a', 'c', 'b', 'd']);
  });
});
