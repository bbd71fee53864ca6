import { expect } from 'chai';
import { startHarness, type Harness } from './harness.ts';

describe('devdb aggregation through the driver', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    await h.db.collection('sales').insertMany([
      { item: 'a', qty: 2, price: 10, at: new Date('2024-03-10T23:30:00Z'), tags: ['x', 'y'] },
      { item: 'a', qty: 3, price: 10, at: new Date('2024-03-11T01:15:00Z'), tags: ['x'] },
      { item: 'b', qty: 1, price: 5, at: new Date('2024-03-11T10:45:00Z'), tags: [] },
      { item: 'c', qty: 7, price: 1, at: new Date('2024-04-02T08:00:00Z'), tags: ['z'] },
    ]);
  });
  after(async () => {
    await h.stop();
  });

  it('groups with $sum, $avg, $min, $max, $first, $last, $push, $addToSet and $count', async () => {
    const rows = await h.db
      .collection('sales')
      .aggregate([
        { $match: { qty: { $gte: 1 } } },
        { $sort: { at: 1 } },
        {
          $group: {
            _id: '$item',
            total: { $sum: { $multiply: ['$qty', '$price'] } },
            avgQty: { $avg: '$qty' },
            minQty: { $min: '$qty' },
            maxQty: { $max: '$qty' },
            first: { $first: '$qty' },
            last: { $last: '$qty' },
            all: { $push: '$qty' },
            prices: { $addToSet: '$price' },
            n: { $count: {} },
          },
        },
        { $sort: { _id: 1 } },
      ])
      .toArray();
    expect(rows[0]).to.deep.equal({ _id: 'a', total: 50, avgQty: 2.5, minQty: 2, maxQty: 3, first: 2, last: 3, all: [2, 3], prices: [10], n: 2 });
    expect(rows.map((r) => r._id as string)).to.deep.equal(['a', 'b', 'c']);
  });

  it('runs $project, $addFields/$set, $unwind, $skip, $limit and $count', async () => {
    const coll = h.db.collection('sales');
    const unwound = await coll
      .aggregate([{ $unwind: '$tags' }, { $set: { upper: { $toUpper: '$tags' } } }, { $addFields: { one: 1 } }, { $project: { _id: 0, item: 1, upper: 1, one: 1 } }, { $sort: { item: 1, upper: 1 } }, { $skip: 1 }, { $limit: 2 }])
      .toArray();
    expect(unwound).to.deep.equal([
      { item: 'a', upper: 'X', one: 1 },
      { item: 'a', upper: 'Y', one: 1 },
    ]);
    const [counted] = await coll.aggregate([{ $match: { item: 'a' } }, { $count: 'n' }]).toArray();
    expect(counted).to.deep.equal({ n: 2 });
  });

  it('runs $facet', async () => {
    const [facets] = await h.db
      .collection('sales')
      .aggregate([{ $facet: { cheap: [{ $match: { price: { $lt: 6 } } }, { $count: 'n' }], items: [{ $group: { _id: null, items: { $addToSet: '$item' } } }] } }])
      .toArray();
    expect(facets!.cheap).to.deep.equal([{ n: 2 }]);
    expect((facets!.items[0].items as string[]).sort()).to.deep.equal(['a', 'b', 'c']);
  });

  it('buckets with $dateTrunc by day in a timezone', async () => {
    const rows = await h.db
      .collection('sales')
      .aggregate([{ $group: { _id: { $dateTrunc: { date: '$at', unit: 'day', timezone: 'America/New_York' } }, n: { $sum: 1 } } }, { $sort: { _id: 1 } }])
      .toArray();
    // 23:30Z on the 10th and 01:15Z on the 11th are both March 10th in New York (UTC-4 after DST).
    expect(rows.map((r) => [(r._id as Date).toISOString(), r.n as number])).to.deep.equal([
      ['2024-03-10T05:00:00.000Z', 2],
      ['2024-03-11T04:00:00.000Z', 1],
      ['2024-04-02T04:00:00.000Z', 1],
    ]);
  });

  it('computes $dateTrunc for minute, hour with binSize, week and month', async () => {
    const [row] = await h.db
      .collection('sales')
      .aggregate([
        { $match: { item: 'b' } },
        {
          $project: {
            minute: { $dateTrunc: { date: '$at', unit: 'minute', binSize: 15 } },
            hour: { $dateTrunc: { date: '$at', unit: 'hour', binSize: 2, timezone: '+05:30' } },
            week: { $dateTrunc: { date: '$at', unit: 'week' } },
            monday: { $dateTrunc: { date: '$at', unit: 'week', startOfWeek: 'monday' } },
            month: { $dateTrunc: { date: '$at', unit: 'month', timezone: 'Asia/Tokyo' } },
          },
        },
      ])
      .toArray();
    expect((row!.minute as Date).toISOString()).to.equal('2024-03-11T10:45:00.000Z');
    // 10:45Z is 16:15 at +05:30; two-hour bins from local midnight start at 16:00 = 10:30Z.
    expect((row!.hour as Date).toISOString()).to.equal('2024-03-11T10:30:00.000Z');
    expect((row!.week as Date).toISOString()).to.equal('2024-03-10T00:00:00.000Z');
    expect((row!.monday as Date).toISOString()).to.equal('2024-03-11T00:00:00.000Z');
    expect((row!.month as Date).toISOString()).to.equal('2024-02-29T15:00:00.000Z');
  });

  it('pages aggregation results with batchSize and getMore', async () => {
    const coll = h.db.collection('agg_paging');
    await coll.insertMany(Array.from({ length: 120 }, (_, i) => ({ i })));
    const cursor = coll.aggregate([{ $match: { i: { $gte: 10 } } }, { $project: { _id: 0, i: 1 } }], { batchSize: 25 });
    const rows = await cursor.toArray();
    expect(rows).to.have.length(110);
    expect(rows[0]).to.deep.equal({ i: 10 });
  });

  it('joins another collection with $lookup', async () => {
    await h.db.collection('items').insertMany([
      { _id: 'a' as never, label: 'Apple' },
      { _id: 'b' as never, label: 'Banana' },
    ]);
    const rows = await h.db
      .collection('sales')
      .aggregate([{ $match: { item: 'b' } }, { $lookup: { from: 'items', localField: 'item', foreignField: '_id', as: 'info' } }, { $project: { _id: 0, label: { $first: '$info.label' } } }])
      .toArray();
    expect(rows).to.deep.equal([{ label: 'Banana' }]);
  });
});
