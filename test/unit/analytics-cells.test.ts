import { expect } from 'chai';
import { decodeCells, encodeCells, encodeOneClick, newCell, addCell, type CellBuilder } from '../../src/analytics/cells.ts';
import { CELL_PRECISION, Hll, TOTAL_PRECISION, countVisitors, hashVisitor, registersToBytes, visitorKey } from '../../src/analytics/hll.ts';
import { smallParts } from '../../src/analytics/rollup.store.ts';
import { seeded } from '../helpers/analytics-clicks.ts';

/** The visitors' keys (the precision applies only once a sketch outgrows its exact set). */
function registers(visitors: readonly string[], _p: number): number[] {
  return visitors.map((v) => visitorKey(hashVisitor(v)));
}

function sketchOf(visitors: readonly string[], p: number): Uint8Array {
  const sketch = new Hll(p);
  for (const v of visitors) sketch.add(hashVisitor(v));
  return sketch.registers;
}

describe('analytics cells: packing a dimension of a rollup part', () => {
  it('reads back keys, counts, revenue and sketches exactly, whatever the key and however large the numbers', () => {
    const cells = new Map<string, CellBuilder>();
    const keys = ['US', '~', '%', 'Zürich', '東京', 'a'.repeat(600), 'https://site.example/p?q=1&x=%2E', ''];
    keys.forEach((key, i) => {
      const cell = newCell();
      cell.c = i === 0 ? 2 ** 53 - 1 : i * 1000 + 7;
      cell.b = i;
      cell.cv = i === 2 ? -3 : i;
      if (i === 3) cell.rev = { EUR: 1250, USD: -300, JPY: 2 ** 40 };
      cell.humanRegisters = registers(['a', 'b', `k${i}`], CELL_PRECISION);
      if (i % 2 === 0) cell.botRegisters = registers([`bot${i}`], CELL_PRECISION);
      cells.set(key, cell);
    });
    const decoded = decodeCells(encodeCells(cells, CELL_PRECISION));
    expect(decoded.map((c) => c.key)).to.deep.equal(keys);
    decoded.forEach((cell, i) => {
      const source = cells.get(cell.key)!;
      expect([cell.c, cell.b, cell.cv], cell.key).to.deep.equal([source.c, source.b, source.cv]);
      expect(cell.rev ?? null).to.deep.equal(source.rev);
      expect(Hll.fromBytes(cell.humans!).registers).to.deep.equal(sketchOf(['a', 'b', `k${i}`], CELL_PRECISION));
      if (i % 2 === 0) expect(Hll.fromBytes(cell.bots!).registers).to.deep.equal(sketchOf([`bot${i}`], CELL_PRECISION));
      else expect(cell.bots).to.equal(null);
    });
  });

  it('packs the sketch of a single visitor as registersToBytes does, beside one stored sketch or more visitors', () => {
    for (const p of [CELL_PRECISION, TOTAL_PRECISION]) {
      const cells = new Map<string, CellBuilder>();
      const one = registers(['solo'], p);
      cells.set('one', { ...newCell(), c: 1, humanRegisters: one });
      cells.set('bot', { ...newCell(), c: 1, b: 1, botRegisters: registers(['robot'], p) });
      cells.set('two', { ...newCell(), c: 2, humanRegisters: registers(['x', 'y'], p) });
      // A register update beside a stored sketch is merged into it, not written alone.
      cells.set('stored', { ...newCell(), c: 2, humanRegisters: one, humanParts: [registersToBytes(registers(['z'], p), p)] });
      const [solo, bot, two, stored] = decodeCells(encodeCells(cells, p));
      expect(solo!.humans).to.deep.equal(Buffer.from(registersToBytes(one, p)));
      expect(bot!.bots).to.deep.equal(Buffer.from(registersToBytes(registers(['robot'], p), p)));
      expect(two!.humans).to.deep.equal(Buffer.from(registersToBytes(registers(['x', 'y'], p), p)));
      expect(Hll.fromBytes(stored!.humans!).registers).to.deep.equal(sketchOf(['solo', 'z'], p));
    }
    // A key without a rank (1..33) is no visitor's.
    const beyond = new Map<string, CellBuilder>([['bad', { ...newCell(), c: 1, humanRegisters: [5 * 64] }]]);
    expect(() => encodeCells(beyond, CELL_PRECISION)).to.throw(RangeError);
  });

  it('packs the cell of one click (a link day with one click in a batch) to the bytes encodeCells gives for it', () => {
    for (const key of ['US', '~', '%', 'Zürich 東京', 'a'.repeat(300), 'https://site%2Eexample/p']) {
      for (const bot of [false, true]) {
        for (const p of [CELL_PRECISION, TOTAL_PRECISION]) {
          const [reg] = registers([`${key}|${bot}`], p);
          const cell: CellBuilder = { ...newCell(), c: 1, b: bot ? 1 : 0 };
          if (bot) cell.botRegisters = [reg!];
          else cell.humanRegisters = [reg!];
          expect(encodeOneClick(key, bot, reg!, p)).to.deep.equal(encodeCells(new Map([[key, cell]]), p));
        }
      }
    }
  });

  it('keeps only the keys asked for, and leaves out cells with nothing in them', () => {
    const cells = new Map<string, CellBuilder>();
    for (const key of ['US', 'DE', 'FR']) cells.set(key, { ...newCell(), c: 1, humanRegisters: registers([key], CELL_PRECISION) });
    cells.set('empty', newCell());
    expect(decodeCells(encodeCells(cells, CELL_PRECISION)).map((c) => c.key)).to.deep.equal(['US', 'DE', 'FR']);
    expect(decodeCells(encodeCells(cells, CELL_PRECISION), new Set(['FR', 'XX'])).map((c) => c.key)).to.deep.equal(['FR']);
  });

  it('counts the visitors of cells merged from parts exactly while they are few, whatever repeats', () => {
    const rand = seeded(11);
    for (const p of [CELL_PRECISION, TOTAL_PRECISION]) {
      const merged = newCell();
      const everyone = new Set<string>();
      for (let part = 0; part < 6; part++) {
        const visitors = Array.from({ length: 150 }, () => `v${Math.floor(rand() * 700)}`);
        visitors.forEach((v) => everyone.add(v));
        addCell(merged, decodeCells(encodeCells(new Map([['_', { ...newCell(), c: visitors.length, humanRegisters: registers(visitors, p) }]]), p))[0]!);
      }
      const [cell] = decodeCells(encodeCells(new Map([['_', merged]]), p));
      expect(countVisitors([cell!.humans!], [], p, cell!.c), `p=${p}`).to.equal(everyone.size);
    }
  });

  it('merges cells: counts add up, revenue adds per currency, sketches hold the union (sparse and dense)', () => {
    const rand = seeded(5);
    const visitorsA = Array.from({ length: 9000 }, () => `v${Math.floor(rand() * 50_000)}`);
    const visitorsB = Array.from({ length: 40 }, () => `v${Math.floor(rand() * 50_000)}`);
    const pack = (visitors: string[], rev: Record<string, number>) => {
      const cells = new Map([['_', { ...newCell(), c: visitors.length, cv: 1, rev, humanRegisters: registers(visitors, TOTAL_PRECISION) }]]);
      return decodeCells(encodeCells(cells, TOTAL_PRECISION))[0]!;
    };
    const merged = newCell();
    addCell(merged, pack(visitorsA, { EUR: 100 }));
    addCell(merged, pack(visitorsB, { EUR: 5, USD: 7 }));
    const [cell] = decodeCells(encodeCells(new Map([['_', merged]]), TOTAL_PRECISION));
    expect(cell!.c).to.equal(visitorsA.length + visitorsB.length);
    expect(cell!.cv).to.equal(2);
    expect(cell!.rev).to.deep.equal({ EUR: 105, USD: 7 });
    expect(Hll.fromBytes(cell!.humans!).registers).to.deep.equal(sketchOf([...visitorsA, ...visitorsB], TOTAL_PRECISION));
  });

  it('refuses malformed bytes with a RangeError', () => {
    const good = encodeCells(new Map([['US', { ...newCell(), c: 3 }]]), CELL_PRECISION);
    for (const bad of [Buffer.alloc(0), Buffer.from([2, 0x80, 0x80, 0x80, 0]), good.subarray(0, good.length - 1), Buffer.concat([good, Buffer.from([0])])]) {
      expect(() => decodeCells(bad)).to.throw(RangeError);
    }
  });
});

describe('analytics parts: which are merged', () => {
  const parts = (...sizes: number[]) => sizes.map((z, i) => ({ z, i }));

  it('merges parts of similar size, and leaves alone a part that outweighs the rest together', () => {
    expect(smallParts(parts(10, 10, 10)).map((p) => p.i)).to.have.members([0, 1, 2]);
    expect(smallParts(parts(1000, 10, 10, 10, 10)).map((p) => p.i)).to.have.members([1, 2, 3, 4]);
    // The big part joins once the others weigh half of it.
    expect(smallParts(parts(100, 30, 20)).map((p) => p.i)).to.have.members([0, 1, 2]);
    expect(smallParts(parts(1000, 300, 10, 10)).map((p) => p.i)).to.have.members([2, 3]);
  });

  it('merges nothing when fewer than two parts would take part', () => {
    expect(smallParts(parts(10))).to.deep.equal([]);
    expect(smallParts(parts(1000, 10))).to.deep.equal([]);
  });

  it('rewrites each byte a logarithmic number of times as parts keep coming', () => {
    let stored: Array<{ z: number }> = [];
    let rewritten = 0;
    const written = 4096;
    for (let i = 0; i < written; i++) {
      stored.push({ z: 1 });
      if (stored.length < 8) continue;
      const merging = smallParts(stored);
      const z = merging.reduce((s, p) => s + p.z, 0);
      rewritten += z;
      stored = [...stored.filter((p) => !merging.includes(p)), { z }];
    }
    expect(stored.length).to.be.at.most(8 + Math.ceil(Math.log2(written)));
    expect(rewritten / written).to.be.at.most(2 * Math.log2(written));
  });
});
