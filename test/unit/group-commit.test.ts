import { expect } from 'chai';
import { GroupCommit, type GroupOutcome } from '../../src/platform/group-commit.ts';

/** A write that records each group it was given and waits for the test to let it end. */
function recordingWrite() {
  const groups: number[][] = [];
  const ends: Array<() => void> = [];
  const write = async (items: readonly number[]): Promise<Array<GroupOutcome<string>>> => {
    groups.push([...items]);
    await new Promise<void>((resolve) => ends.push(resolve));
    return items.map((n) => (n < 0 ? { error: new Error(`negative ${n}`) } : { value: `ok ${n}` }));
  };
  const endNext = async (): Promise<void> => {
    while (ends.length === 0) await new Promise((resolve) => setImmediate(resolve));
    ends.shift()!();
  };
  return { groups, write, endNext };
}

describe('GroupCommit', () => {
  it('writes the calls of one turn together, in one group, and later calls in a group of their own', async () => {
    const { groups, write, endNext } = recordingWrite();
    const commit = new GroupCommit(write, 100);
    const first = [1, 2, 3].map((n) => commit.submit(n));
    await endNext();
    expect(await Promise.all(first)).to.deep.equal(['ok 1', 'ok 2', 'ok 3']);
    const second = [4, 5].map((n) => commit.submit(n));
    await endNext();
    expect(await Promise.all(second)).to.deep.equal(['ok 4', 'ok 5']);
    expect(groups).to.deep.equal([[1, 2, 3], [4, 5]]);
  });

  it('holds calls made while a group is being written for the next group, whatever their number up to the cap', async () => {
    const { groups, write, endNext } = recordingWrite();
    const commit = new GroupCommit(write, 3);
    const all = [commit.submit(1)];
    while (groups.length === 0) await new Promise((resolve) => setImmediate(resolve));
    for (const n of [2, 3, 4, 5, 6, 7]) all.push(commit.submit(n));
    await endNext();
    await endNext();
    await endNext();
    expect(await Promise.all(all)).to.deep.equal([1, 2, 3, 4, 5, 6, 7].map((n) => `ok ${n}`));
    expect(groups).to.deep.equal([[1], [2, 3, 4], [5, 6, 7]]);
  });

  it('gives each caller its own outcome, and every caller of a group a write that throws', async () => {
    const failing = new GroupCommit<number, string>((items) => Promise.resolve(items.map((n) => (n < 0 ? { error: new Error(`negative ${n}`) } : { value: `ok ${n}` }))), 100);
    const results = await Promise.allSettled([failing.submit(1), failing.submit(-2), failing.submit(3)]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).to.deep.equal(['ok 1', 'negative -2', 'ok 3']);

    let calls = 0;
    const broken = new GroupCommit<number, string>(() => {
      calls++;
      return Promise.reject(new Error('the database went away'));
    }, 100);
    const refused = await Promise.allSettled([broken.submit(1), broken.submit(2)]);
    expect(refused.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'fulfilled'))).to.deep.equal(['the database went away', 'the database went away']);
    expect(calls).to.equal(1);
    // A failed group does not stop the next one.
    const again = new GroupCommit<number, string>((items) => (items[0] === 1 ? Promise.reject(new Error('once')) : Promise.resolve(items.map((n) => ({ value: `ok ${n}` })))), 100);
    await Promise.allSettled([again.submit(1)]);
    expect(await again.submit(2)).to.equal('ok 2');
  });
});
