import { InvalidRequestError } from '../platform/errors.ts';

/**
 * Opaque cursors: base64url JSON with a version tag. Clients pass them back unchanged; anything else that does not
 * decode to the expected shape is a malformed cursor (400 invalid_request), never a 500.
 */
export function encodeCursor(position: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify({ v: 1, ...position })).toString('base64url');
}

export function decodeCursor<K extends string>(cursor: string, fields: Record<K, 'string' | 'number'>): Record<K, string | number> {
  let parsed: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidRequestError('The cursor is malformed; pass back next_cursor unchanged.');
  }
  const record = parsed as Record<string, unknown>;
  if (typeof parsed !== 'object' || parsed === null || record.v !== 1) {
    throw new InvalidRequestError('The cursor is malformed; pass back next_cursor unchanged.');
  }
  for (const [name, type] of Object.entries(fields)) {
    if (typeof record[name] !== type) throw new InvalidRequestError('The cursor is malformed; pass back next_cursor unchanged.');
  }
  return record as Record<K, string | number>;
}

export interface Pagination {
  next_cursor: string | null;
  has_more: boolean;
}

/**
 * A page from rows fetched with `limit + 1` (the extra row says whether another page exists, without a count), and
 * the cursor of its last row.
 */
export function pageOf<T>(rows: readonly T[], limit: number, position: (row: T) => Record<string, string | number>): { page: T[]; pagination: Pagination } {
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  const last = page.at(-1);
  return { page, pagination: { next_cursor: hasMore && last !== undefined ? encodeCursor(position(last)) : null, has_more: hasMore } };
}

/** Newest-first lists are positioned by (created_at, id). */
export function timePosition(row: { created_at: Date; _id: string }): Record<string, string | number> {
  return { t: row.created_at.getTime(), id: row._id };
}

export function decodeTimePosition(cursor: string | undefined): { created_at: Date; id: string } | null {
  if (cursor === undefined) return null;
  const position = decodeCursor(cursor, { t: 'number', id: 'string' });
  return { created_at: new Date(position.t), id: position.id as string };
}
