// The opaque cursor a source hands the job between pages: the state it needs to read the next page (a service's own
// page token, the boundary key it resumes after, which domain it is on), written as base64url JSON and tagged with the
// source's kind, so a cursor stored by one source is never taken for another's. The job stores it as an opaque string
// and hands it back after a restart, so a source checks it (against a schema or a guard) before trusting it: a cursor
// that cannot be read is the stored job being wrong, not the service failing, which is an `input` error rather than a
// crash deep in a page.
import { Kind, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { SourceError, type SourceKind } from '../source.ts';

export function encodeCursor(kind: SourceKind, state: object): string {
  return Buffer.from(JSON.stringify({ k: kind, s: state }), 'utf8').toString('base64url');
}

/** The state `encodeCursor` wrote, checked by a schema or a guard; a cursor of another source or shape is refused. */
export function decodeCursor<S extends TSchema>(kind: SourceKind, cursor: string, check: S): Static<S>;
export function decodeCursor<T>(kind: SourceKind, cursor: string, check: (state: unknown) => state is T): T;
export function decodeCursor(kind: SourceKind, cursor: string, check: TSchema | ((state: unknown) => boolean)): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  const envelope = parsed as { k?: unknown; s?: unknown } | null;
  const valid = (state: unknown) => (typeof check === 'function' ? check(state) : Kind in check && Value.Check(check, state));
  if (envelope === null || typeof envelope !== 'object' || envelope.k !== kind || !valid(envelope.s)) {
    throw new SourceError('input', `the saved position of this ${kind} import cannot be read; start the import again`);
  }
  return envelope.s;
}

export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
