// Filtering and sorting of entries: index-narrowed candidates, mingo predicate on the promoted
// view, then MongoDB-ordered sort (arrays sort by their min ascending, max descending).
import type { DocSet, Entry } from './collection.ts';
import { compileFilter } from './engine.ts';
import { EMPTY_ARRAY, pathValues } from './paths.ts';
import { matchesStrings, stringsFilter } from './raw-read.ts';
import { ObjectId } from 'bson';
import { compareValues, isPlainObject, keyOf, promote, toNumber, type Doc } from './values.ts';

export interface QueryOptions {
  sort?: Doc;
  skip?: number;
  limit?: number;
}

function sortValue(view: Doc, field: string, dir: number): unknown {
  const values = pathValues(view, field).map((v) => (v === EMPTY_ARRAY ? undefined : v));
  if (values.length === 1) return values[0];
  return values.reduce((best, v) => (compareValues(v, best) * dir < 0 ? v : best));
}

export function sortEntries(entries: Entry[], sort: Doc): Entry[] {
  const keys = Object.entries(sort)
    .filter(([, d]) => !isPlainObject(d))
    .map(([f, d]) => [f, toNumber(d, 1) < 0 ? -1 : 1] as const);
  if (keys.length === 0) return entries;
  const decorated = entries.map((e) => ({ e, vals: keys.map(([f, d]) => sortValue(e.view, f, d)) }));
  decorated.sort((a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const c = compareValues(a.vals[i], b.vals[i]);
      if (c !== 0) return c * keys[i]![1];
    }
    return 0;
  });
  return decorated.map((d) => d.e);
}

/** For `{_id: v}` with a string, number or ObjectId, the key of v: the entry of that key is the one match. */
function idEquality(filter: Doc): string | undefined {
  for (const k in filter) if (k !== '_id') return undefined;
  const v = promote(filter._id);
  return typeof v === 'string' || (typeof v === 'number' && !Number.isNaN(v)) || v instanceof ObjectId ? keyOf(v) : undefined;
}

/**
 * What an entry must pass to match: undefined for an empty filter; one equality on _id compares the entry's key;
 * anything else is matched on the decoded document.
 */
function matcherOf(filter: Doc | undefined): ((e: Entry) => boolean) | undefined {
  if (!filter || Object.keys(filter).length === 0) return undefined;
  const id = idEquality(filter);
  if (id !== undefined) return (e) => e.id === id;
  const matcher = compileFilter(filter);
  // One field against a few strings (documents fetched by key) is read from the stored bytes.
  const strings = stringsFilter(filter);
  if (strings) return (e) => matchesStrings(e.raw, strings) ?? matcher(e.view);
  return (e) => matcher(e.view);
}

/**
 * How many entries match, after `skip` and within `limit`: a count needs neither the entries nor their order, so
 * nothing is collected (counting a collection of millions every few hundred milliseconds built an array of millions
 * each time), and an empty filter over a committed collection is its size.
 */
export function countEntries(docs: DocSet | undefined, filter: Doc | undefined, opts: Omit<QueryOptions, 'sort'> = {}): number {
  if (!docs) return 0;
  const skip = Math.max(0, opts.skip ?? 0);
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  const check = matcherOf(filter);
  let n = 0;
  if (!check && docs.size !== undefined) n = docs.size;
  else {
    for (const e of docs.candidates(filter)) {
      if (check && !check(e)) continue;
      if (++n >= skip + limit) break;
    }
  }
  return Math.max(0, Math.min(n - skip, limit));
}

/**
 * Matching entries, sorted, skipped and limited. A sort that an index gives walks that index and stops at the
 * limit, as MongoDB does; otherwise the matches are sorted, keeping only the best skip + limit as it goes.
 */
export function queryEntries(docs: DocSet | undefined, filter: Doc | undefined, opts: QueryOptions = {}): Entry[] {
  if (!docs) return [];
  const skip = opts.skip ?? 0;
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  const hasSort = opts.sort !== undefined && Object.keys(opts.sort).length > 0;
  const walk = hasSort ? docs.ordered?.(filter, opts.sort!) : undefined;
  const inOrder = walk?.entries;
  // A walk the index answers entirely yields only matches: they are not decoded to be checked, nor is the filter
  // compiled.
  const check = walk?.covered ? undefined : matcherOf(filter);
  const needed = hasSort && !inOrder ? Infinity : skip + limit;
  const keep = skip + limit;
  let out: Entry[] = [];
  for (const e of inOrder ?? docs.candidates(filter)) {
    if (check && !check(e)) continue;
    out.push(e);
    if (out.length >= needed) break;
    // Top-k: sorting a bounded buffer now and then instead of every match at the end.
    if (hasSort && !inOrder && keep < 10_000 && out.length >= 4 * keep + 1024) out = sortEntries(out, opts.sort!).slice(0, keep);
  }
  const sorted = hasSort && !inOrder ? sortEntries(out, opts.sort!) : out;
  return skip > 0 || limit !== Infinity ? sorted.slice(skip, skip + limit) : sorted;
}
