// A source's cursor is its own state (an offset, a boundary key...) as JSON. The job stores it as an opaque string and
// hands it back after a restart, so a source checks it against its schema before trusting it: a cursor that does not
// parse is a job that cannot resume, which is an `input` error rather than a crash deep in a page.
import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { SourceError } from '../source.ts';

export function encodeCursor<S extends TSchema>(_schema: S, state: Static<S>): string {
  return JSON.stringify(state);
}

export function decodeCursor<S extends TSchema>(schema: S, cursor: string, service: string): Static<S> {
  let state: unknown;
  try {
    state = JSON.parse(cursor);
  } catch {
    state = undefined;
  }
  if (!Value.Check(schema, state)) throw new SourceError('input', `the saved position of this ${service} import cannot be read; start the import again`);
  return state;
}
