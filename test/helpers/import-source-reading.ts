// Reading a source to its end as a job would, for the sources' integration tests: page after page from a cursor,
// every page's links, errors and cursors kept.
import { expect } from 'chai';
import { SourceError, type ImportSource, type ImportedLink, type SourcePage, type SourceRowError } from '../../src/imports/source.ts';

export interface Reading {
  links: ImportedLink[];
  errors: SourceRowError[];
  pages: SourcePage[];
  /** The cursor each page was read from (null for the first). */
  cursors: Array<string | null>;
}

export async function readAll(source: ImportSource, from: string | null = null, maxPages = 1000): Promise<Reading> {
  const reading: Reading = { links: [], errors: [], pages: [], cursors: [] };
  let cursor = from;
  for (let count = 0; count < maxPages; count++) {
    const page = await source.page(cursor, new AbortController().signal);
    reading.cursors.push(cursor);
    reading.pages.push(page);
    reading.links.push(...page.links);
    reading.errors.push(...page.errors);
    if (page.next === null) return reading;
    cursor = page.next;
  }
  throw new Error(`the source had not ended after ${maxPages} pages`);
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

/** A link as a source gives it when the service has nothing but its id and destination. */
export function bareLink(sourceId: string, url: string, fields: Partial<ImportedLink> = {}): ImportedLink {
  return {
    sourceId,
    url,
    domain: null,
    slug: null,
    title: null,
    tags: [],
    createdAt: null,
    expiresAt: null,
    expiredUrl: null,
    password: null,
    utm: null,
    targeting: [],
    ios: null,
    android: null,
    clicksTotal: null,
    ...fields,
  };
}
