// The opaque cursor a source hands the job between pages: the state it needs to read the next page (a service's own
// page token, the ids it resumes after, which domain it is on), written as base64url JSON and tagged with the source's
// kind, so a cursor stored by one source is never taken for another's. A cursor that cannot be read is the stored job
// being wrong, not the service failing: `input`.
import { SourceError, type SourceKind } from '../source.ts';

export function encodeCursor(kind: SourceKind, state: object): string {
  return Buffer.from(JSON.stringify({ k: kind, s: state }), 'utf8').toString('base64url');
}

/** The state `encodeCursor` wrote, checked by `isState`; a cursor of another source or of another shape is refused. */
export function decodeCursor<T>(kind: SourceKind, cursor: string, isState: (state: unknown) => state is T): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  const envelope = parsed as { k?: unknown; s?: unknown } | null;
  if (envelope === null || typeof envelope !== 'object' || envelope.k !== kind || !isState(envelope.s)) {
    throw new SourceError('input', `the stored ${kind} cursor cannot be read; start the import again`);
  }
  return envelope.s;
}

export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
