// Reads a source to its end the way an import job does: a page, its cursor kept, the next page from that cursor.
import { expect } from 'chai';
import { SourceError, type ImportSource, type ImportedLink, type SourceRowError } from '../../src/imports/source.ts';

export interface Read {
  links: ImportedLink[];
  errors: SourceRowError[];
  /** The cursor after each page (the last one null). */
  cursors: Array<string | null>;
  totals: Array<number | null>;
}

/** Pages from `from` (null: the start) until the source says there are no more, or `pages` have been read. */
export async function readPages(source: ImportSource, from: string | null = null, pages = Infinity): Promise<Read> {
  const read: Read = { links: [], errors: [], cursors: [], totals: [] };
  const signal = new AbortController().signal;
  let cursor = from;
  for (let page = 0; page < pages; page++) {
    if (page > 10_000) throw new Error('the source never ends');
    const result = await source.page(cursor, signal);
    read.links.push(...result.links);
    read.errors.push(...result.errors);
    read.cursors.push(result.next);
    read.totals.push(result.total);
    cursor = result.next;
    if (cursor === null) break;
  }
  return read;
}

/** The source ids read, in order. */
export const idsOf = (links: readonly ImportedLink[]): string[] => links.map((link) => link.sourceId);

/** The SourceError a page (or anything else) fails with; a test fails if it succeeds. */
export function failureOf(promise: Promise<unknown>): Promise<SourceError> {
  return promise.then(
    () => expect.fail('expected a SourceError'),
    (error: unknown) => {
      expect(error).to.be.instanceOf(SourceError);
      return error as SourceError;
    },
  );
}
