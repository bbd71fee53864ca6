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
