import { expect } from 'chai';
import { advance, START } from '../../src/imports/sources/boundary.ts';

const row = (id: string, key: number | string) => ({ id, key });
const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id);

describe('import sources: reading past a boundary of tied keys', () => {
  it('gives out every row of the first page and keeps the last key with the rows of it given out', () => {
    const step = advance([row('a', 1), row('b', 2), row('c', 2)], START, 'asc');
    expect(ids(step.fresh)).to.deep.equal(['a', 'b', 'c']);
    expect(step.boundary).to.deep.equal({ key: 2, seen: ['b', 'c'] });
    expect(step.groupStart).to.equal(1);
  });

  it('drops the rows of the boundary key already given out, whatever order the tie comes in this time', () => {
    const step = advance([row('c', 2), row('d', 2), row('b', 2), row('e', 3)], { key: 2, seen: ['b', 'c'] }, 'asc');
    expect(ids(step.fresh)).to.deep.equal(['d', 'e']);
    expect(step.boundary).to.deep.equal({ key: 3, seen: ['e'] });
    expect(step.groupStart).to.equal(3);
  });

  it('adds to the group when a whole page is one tie, so a group larger than a page is read to its end', () => {
    const step = advance([row('x', 5), row('a', 5), row('y', 5)], { key: 5, seen: ['x'] }, 'asc');
    expect(ids(step.fresh)).to.deep.equal(['a', 'y']);
    expect(step.boundary.seen).to.have.members(['x', 'a', 'y']);
  });

  it('reads a descending scan: rows newer than the boundary were given out (or came after the scan passed)', () => {
    const step = advance([row('new', '2024-01-03'), row('b', '2024-01-02'), row('c', '2024-01-02'), row('d', '2024-01-01')], { key: '2024-01-02', seen: ['b'] }, 'desc');
    expect(ids(step.fresh)).to.deep.equal(['c', 'd']);
    expect(step.boundary).to.deep.equal({ key: '2024-01-01', seen: ['d'] });
  });

  it('keeps the boundary when every row of the page is before it', () => {
    const boundary = { key: '2024-01-02', seen: ['b'] };
    const step = advance([row('n1', '2024-01-05'), row('n2', '2024-01-04')], boundary, 'desc');
    expect(step.fresh).to.deep.equal([]);
    expect(step.boundary).to.equal(boundary);
    expect(step.groupStart).to.equal(null);
  });

  it('keeps the boundary on an empty page', () => {
    const step = advance([], { key: 3, seen: ['q'] }, 'asc');
    expect(step).to.deep.equal({ fresh: [], boundary: { key: 3, seen: ['q'] }, groupStart: null });
  });
});
