// Dotted-path resolution with MongoDB's array traversal: `a.b` reaches into every element of an
// array `a`, and a terminal array contributes each element (that is what makes indexes multikey).
import { isPlainObject } from './values.ts';

/** Marker for an empty terminal array, which MongoDB indexes as `undefined` (not null). */
export const EMPTY_ARRAY = Symbol('empty-array');

function collect(v: unknown, parts: string[], i: number, out: unknown[], expandTerminal: boolean): void {
  if (i === parts.length) {
    if (expandTerminal && Array.isArray(v)) {
      if (v.length === 0) out.push(EMPTY_ARRAY);
      else for (const item of v) out.push(item);
    } else {
      out.push(v);
    }
    return;
  }
  const part = parts[i]!;
  if (Array.isArray(v)) {
    if (/^\d+$/.test(part)) {
      const idx = Number(part);
      if (idx < v.length) collect(v[idx], parts, i + 1, out, expandTerminal);
      return;
    }
    for (const item of v) if (isPlainObject(item)) collect(item, parts, i, out, expandTerminal);
    return;
  }
  if (isPlainObject(v)) {
    if (Object.hasOwn(v, part)) collect(v[part], parts, i + 1, out, expandTerminal);
    else out.push(undefined);
    return;
  }
  out.push(undefined);
}

/** Every value at `path`; a missing field yields `[undefined]`. */
export function pathValues(doc: unknown, path: string, expandTerminal = true): unknown[] {
  const out: unknown[] = [];
  collect(doc, path.split('.'), 0, out, expandTerminal);
  return out.length === 0 ? [undefined] : out;
}

/** Does the document have a value (possibly null) at `path`? */
export function hasPath(doc: unknown, path: string): boolean {
  return pathValues(doc, path, false).some((v) => v !== undefined);
}
