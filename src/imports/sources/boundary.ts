// Reading a list that a service sorts by a key that is not unique (YOURLS by a timestamp to the second, Shlink by a
// creation date) without skipping or repeating a row. The services hand out such a list by offset or by `key ≥ x`,
// and SQL leaves the order of rows that share a key undefined: two requests for neighbouring pages may both hold, or
// both miss, one row of a tie. So the position a source keeps is a boundary, not an offset: the last key read and the
// rows of that key already given out. The next request re-reads the whole group at the boundary, and only the rows
// after the boundary (in the scan's order) or in its group but not yet given out are new.
//
// Rows that appear before the boundary are ones given out already, or ones the service gained behind the scan while
// the import ran (a link created meanwhile with an older key); neither is given out again.

export type SortKey = string | number;

export interface Boundary {
  /** Key of the last row given out; null before the first page. */
  key: SortKey | null;
  /** Ids of the rows with that key given out so far. */
  seen: string[];
}

export interface KeyedRow {
  id: string;
  key: SortKey;
}

export type ScanOrder = 'asc' | 'desc';

export const START: Boundary = { key: null, seen: [] };

/** True when key `a` comes strictly before key `b` in the scan. */
export function comesBefore(a: SortKey, b: SortKey, order: ScanOrder): boolean {
  return order === 'asc' ? a < b : a > b;
}

export interface Advance<R> {
  /** The rows not given out before, in the order the service gave them. */
  fresh: R[];
  boundary: Boundary;
  /** Index in `rows` where the new boundary's group begins, or null when the boundary did not move. */
  groupStart: number | null;
}

/** Splits a page of rows, sorted by the service in `order`, into the new ones and the boundary after them. */
export function advance<R extends KeyedRow>(rows: readonly R[], boundary: Boundary, order: ScanOrder): Advance<R> {
  const seen = new Set(boundary.seen);
  const fresh = rows.filter((row) => {
    if (boundary.key === null) return true;
    if (row.key === boundary.key) return !seen.has(row.id);
    return comesBefore(boundary.key, row.key, order);
  });
  const last = rows.at(-1);
  if (!last || (boundary.key !== null && comesBefore(last.key, boundary.key, order))) return { fresh, boundary, groupStart: null };
  const sameGroup = last.key === boundary.key ? [...boundary.seen] : [];
  for (const row of fresh) if (row.key === last.key) sameGroup.push(row.id);
  return { fresh, boundary: { key: last.key, seen: sameGroup }, groupStart: rows.findIndex((row) => row.key === last.key) };
}
