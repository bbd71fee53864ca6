import { expect } from 'chai';
import { Binary, Long } from 'mongodb';
import { compileFilter, project } from '../../src/devdb/engine.ts';
import { matchesStrings, projectRaw, rawProjection, stringsFilter } from '../../src/devdb/raw-read.ts';
import { decodeDoc, decodeView, encodeDoc, type Doc } from '../../src/devdb/values.ts';
import { pick, seeded } from '../helpers/analytics-clicks.ts';
import { startHarness, type Harness } from './harness.ts';

const NAMES = ['w', 'l', 'v', 's', 'country', 'city', 'US', 'é', 'c'];

function aDocument(rand: () => number): Doc {
  const sub = (depth: number): Doc => {
    const doc: Doc = {};
    for (let i = 0; i < 1 + Math.floor(rand() * 4); i++) {
      const r = rand();
      doc[pick(rand, NAMES)] = depth > 0 && r < 0.4 ? sub(depth - 1) : r < 0.6 ? Math.floor(rand() * 100) : r < 0.7 ? Long.fromNumber(3) : r < 0.8 ? new Binary(Buffer.from([1, 2])) : r < 0.9 ? 'text' : null;
    }
    return doc;
  };
  return { _id: `r${Math.floor(rand() * 1000)}`, ...sub(2) };
}

function aProjection(rand: () => number): Doc {
  const projection: Doc = {};
  for (let i = 0; i < 1 + Math.floor(rand() * 3); i++) {
    const depth = 1 + Math.floor(rand() * 3);
    projection[Array.from({ length: depth }, () => pick(rand, NAMES)).join('.')] = 1;
  }
  if (rand() < 0.2) projection._id = 0;
  return projection;
}

describe('devdb raw reads (projections and key filters answered from the stored bytes)', () => {
  it('project as MongoDB does, or leave it to the general path, over random documents and projections', () => {
    const rand = seeded(11);
    let done = 0;
    for (let i = 0; i < 3000; i++) {
      const doc = aDocument(rand);
      const projection = aProjection(rand);
      const compiled = rawProjection(projection);
      if (!compiled) continue;
      const bytes = projectRaw(encodeDoc(doc), compiled);
      if (!bytes) continue;
      done++;
      expect(decodeDoc(bytes), JSON.stringify(projection)).to.deep.equal(project([decodeDoc(encodeDoc(doc))], projection)[0]);
    }
    expect(done).to.be.greaterThan(1000);
  });

  it('keep a sub-document whose field is missing as an empty document, and leave arrays and non-documents on the path to the general path', () => {
    const raw = encodeDoc({ _id: 'r', w: 'ws', v: { city: { Paris: { c: 1 } } }, list: [{ a: 1 }], n: 3 });
    expect(decodeDoc(projectRaw(raw, rawProjection({ w: 1, 'v.country': 1 })!)!)).to.deep.equal({ _id: 'r', w: 'ws', v: {} });
    expect(projectRaw(raw, rawProjection({ 'list.a': 1 })!)).to.equal(undefined);
    expect(projectRaw(raw, rawProjection({ 'n.x': 1 })!)).to.equal(undefined);
    for (const p of [{ a: 0 }, { a: 1, 'a.b': 1 }, { a: { $slice: 1 } }, { a: 'x' }, { _id: 1 }]) expect(rawProjection(p), JSON.stringify(p)).to.equal(undefined);
  });

  it('match one field against strings as the general matcher does', () => {
    const docs: Doc[] = [{ _id: 1, r: 'a' }, { _id: 2, r: 'b' }, { _id: 3 }, { _id: 4, r: ['a', 'z'] }, { _id: 5, r: 7 }, { _id: 6, r: null }, { _id: 7, é: 'a' }];
    for (const filter of [{ r: 'a' }, { r: { $in: ['a', 'b'] } }, { r: { $in: [] } }, { é: { $in: ['a'] } }]) {
      const strings = stringsFilter(filter)!;
      const general = compileFilter(filter);
      for (const doc of docs) {
        const raw = encodeDoc(doc);
        expect(matchesStrings(raw, strings) ?? general(decodeView(raw)), `${JSON.stringify(filter)} on ${JSON.stringify(doc)}`).to.equal(general(decodeView(raw)));
      }
    }
    // Only that shape: anything else keeps the general matcher.
    for (const filter of [{ r: { $in: ['a', null] } }, { 'r.x': 'a' }, { r: 'a', s: 'b' }, { r: { $ne: 'a' } }, { r: 1 }]) expect(stringsFilter(filter), JSON.stringify(filter)).to.equal(undefined);
  });

  describe('through the server', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness();
    });
    after(async () => {
      await h.stop();
    });

    it('answer finds by key with projected documents', async () => {
      const coll = h.db.collection<Doc & { _id: string }>('raw_reads');
      await coll.createIndex({ r: 1 });
      await coll.insertMany([
        { _id: 'a', r: 'x', v: { country: { US: 1 }, city: { Paris: 2 } } },
        { _id: 'b', r: 'y', v: { city: { Lyon: 1 } } },
        { _id: 'c', r: ['x'], v: { country: { FR: 1 } } },
        { _id: 'd', r: 'z' },
      ]);
      const found = await coll.find({ r: { $in: ['x', 'y'] } }, { projection: { 'v.country': 1 } }).sort({ _id: 1 }).toArray();
      expect(found).to.deep.equal([
        { _id: 'a', v: { country: { US: 1 } } },
        { _id: 'b', v: {} },
        { _id: 'c', v: { country: { FR: 1 } } },
      ]);
      expect(await coll.find({ _id: { $in: ['a', 'd'] } }, { projection: { r: 1, _id: 0 } }).toArray()).to.deep.equal([{ r: 'x' }, { r: 'z' }]);
    });

    it('cut projected documents batch by batch into reused memory, two cursors interleaved, raw cuts and general projections mixed', async () => {
      const coll = h.db.collection<Doc & { _id: number }>('raw_read_batches');
      const rand = seeded(11);
      const docs: Array<Doc & { _id: number }> = [];
      for (let i = 0; i < 400; i++) {
        // Sketch-sized blobs: a batch outgrows the first chunk of the batch memory, so it grows while batches are cut.
        const blob = Buffer.alloc(1 + Math.floor(rand() * 20_000), i % 251);
        // Every seventh document has an array on a projected path: the general path projects it.
        docs.push({ _id: i, n: i, blob: new Binary(blob), s: { a: i % 7 === 0 ? [{ x: i }, { y: 1 }] : { x: i, y: 1 }, b: 'dropped' }, other: 'dropped' });
      }
      await coll.insertMany(docs);
      // Blobs compared by their bytes (the driver hands back its own Binary).
      const plain = (d: Doc) => ({ ...d, blob: Buffer.from((d.blob as Binary).buffer).toString('base64') });
      const expected = docs.map((d) => plain({ _id: d._id, blob: d.blob, s: { a: Array.isArray((d.s as Doc).a) ? [{ x: d._id }, {}] : { x: d._id } } }));
      const projection = { blob: 1, 's.a.x': 1 };
      const first = coll.find({}, { projection, batchSize: 37 }).sort({ _id: 1 });
      const second = coll.find({ n: { $gte: 200 } }, { projection, batchSize: 23 }).sort({ _id: -1 });
      const seen: { first: Doc[]; second: Doc[] } = { first: [], second: [] };
      for (;;) {
        const [a, b] = [await first.next(), await second.next()];
        if (a) seen.first.push(plain(a));
        if (b) seen.second.push(plain(b));
        if (!a && !b) break;
      }
      expect(seen.first).to.deep.equal(expected);
      expect(seen.second).to.deep.equal(expected.slice(200).reverse());
    });
  });
});
