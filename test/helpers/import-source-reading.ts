// Reading a source to its end as a job would, for the sources' integration tests: page after page from a cursor,
// every page's links, errors and cursors kept.
import { expect } from 'chai';
import { SourceError, type ImportSource, type ImportedLink, type SourcePage, type SourceRowError } from '../../src/imports/source.ts';
import { importedLink } from '../../src/imports/sources/link-fields.ts';

export interface Reading {
  links: ImportedLink[];
  errors: SourceRowError[];
  pages: SourcePage[];
  /** The cursor each page was read from (null for the first). */
  cursors: Array<string | null>;
}

export async function readAll(source: ImportSource, from: string | null = null): Promise<Reading> {
  const reading = await readSome(source, from, 1000);
  if (reading.pages.at(-1)?.next !== null) throw new Error('the source had not ended after 1000 pages');
  return reading;
}

/** At most `pages` pages from `from` (fewer when the source ends first), as a job stopped midway would have read. */
export async function readSome(source: ImportSource, from: string | null, pages: number): Promise<Reading> {
  const reading: Reading = { links: [], errors: [], pages: [], cursors: [] };
  let cursor = from;
  for (let count = 0; count < pages; count++) {
    const page = await source.page(cursor, new AbortController().signal);
    reading.cursors.push(cursor);
    reading.pages.push(page);
    reading.links.push(...page.links);
    reading.errors.push(...page.errors);
    if (page.next === null) break;
    cursor = page.next;
  }
  return reading;
}

/** The SourceError a read fails with, checked to be of `kind`. */
export async function failure(read: Promise<unknown>, kind: SourceError['kind']): Promise<SourceError> {
  const error = await read.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'the read should have failed').to.be.instanceOf(SourceError);
  expect((error as SourceError).kind, (error as SourceError).message).to.equal(kind);
  return error as SourceError;
}

/** A link as a source gives it when the service has nothing but its id and destination, plus `fields`. */
export function bareLink(sourceId: string, url: string, fields: Partial<ImportedLink> = {}): ImportedLink {
  return { ...importedLink(sourceId, url), ...fields };
}
