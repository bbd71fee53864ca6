// Picks candidate documents for a filter from top-level equality conditions, so that lookups
// like {_id}, {key_hash} or {domain_id, slug} do not scan the collection. Candidates are a
// superset: the full mingo filter still runs on each one.
import { Binary, ObjectId } from 'bson';
import type { Index } from './indexes.ts';
import { isPlainObject, keyOf, promote, type Doc } from './values.ts';

function indexable(v: unknown): boolean {
  return (
    typeof v === 'string' ||
    (typeof v === 'number' && !Number.isNaN(v)) ||
    typeof v === 'boolean' ||
    v instanceof Date ||
    v instanceof ObjectId ||
    v instanceof Binary
  );
}

/** Canonical keys a field must equal one of, or undefined when the condition is not a plain equality. */
function equalityKeys(cond: unknown): string[] | undefined {
  const v = promote(cond);
  if (indexable(v)) return [keyOf(v)];
  if (!isPlainObject(v)) return undefined;
  if ('$eq' in v && indexable(v.$eq)) return [keyOf(v.$eq)];
  if ('$in' in v && Array.isArray(v.$in) && v.$in.length > 0 && v.$in.every(indexable)) return [...new Set(v.$in.map(keyOf))];
  return undefined;
}

function collectEqualities(filter: Doc, out: Map<string, string[]>): void {
  for (const [field, cond] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(cond)) {
      for (const sub of cond) if (isPlainObject(sub)) collectEqualities(sub, out);
      continue;
    }
    if (field.startsWith('$')) continue;
    const keys = equalityKeys(cond);
    if (keys && !out.has(field)) out.set(field, keys);
  }
}

export type Plan = { kind: 'ids'; ids: string[] } | { kind: 'index'; index: Index; lookups: string[][] } | { kind: 'scan' };

export function plan(filter: Doc | undefined, indexes: readonly Index[]): Plan {
  if (!filter) return { kind: 'scan' };
  const eq = new Map<string, string[]>();
  collectEqualities(filter, eq);
  if (eq.size === 0) return { kind: 'scan' };
  const ids = eq.get('_id');
  if (ids) return { kind: 'ids', ids };
  let best: { index: Index; lookups: string[][]; score: number } | undefined;
  for (const index of indexes) {
    if (!index.complete) continue;
    const perField = index.fields.map((f) => eq.get(f));
    const full = perField.every((k) => k?.length === 1);
    if (full) {
      const score = index.fields.length * 10 + (index.unique ? 5 : 0);
      if (!best || score > best.score) best = { index, lookups: [perField.map((k) => k![0]!)], score };
    } else if (perField[0]) {
      const score = 1;
      if (!best || score > best.score) best = { index, lookups: perField[0].map((k) => [k]), score };
    }
  }
  return best ? { kind: 'index', index: best.index, lookups: best.lookups } : { kind: 'scan' };
}
