// Query planning over the indexes. `plan` picks candidate documents for a filter from top-level equality
// conditions, so that lookups like {_id}, {key_hash} or {domain_id, slug} do not scan the collection (candidates
// are a superset: the full mingo filter still runs on each one). `orderedPlan` finds an index whose order is the
// requested sort after an equality prefix, so that a sorted, limited read walks it and stops at the limit.
import { Binary, ObjectId } from 'bson';
import type { Index, KeysetStart, WalkStart } from './indexes.ts';
import { compareIndexValues, keysetClass } from './indexes.ts';
import { isPlainObject, keyOf, promote, toNumber, type Doc } from './values.ts';

function indexable(v: unknown): boolean {
  return (
    v === null ||
    typeof v === 'string' ||
    (typeof v === 'number' && !Number.isNaN(v)) ||
    typeof v === 'boolean' ||
    v instanceof Date ||
    v instanceof ObjectId ||
    v instanceof Binary
  );
}

function unique(values: unknown[]): unknown[] {
  const seen = new Map<string, unknown>();
  for (const v of values) seen.set(keyOf(v), v);
  return [...seen.values()];
}

/** The values a field must equal one of, or undefined when the condition is not a plain equality. */
function equalityValues(cond: unknown): unknown[] | undefined {
  const v = promote(cond);
  if (indexable(v)) return [v];
  if (!isPlainObject(v)) return undefined;
  if ('$eq' in v && indexable(v.$eq)) return [v.$eq];
  if ('$in' in v && Array.isArray(v.$in) && v.$in.length > 0 && v.$in.every(indexable)) return unique(v.$in);
  return undefined;
}

function collectEqualities(filter: Doc, out: Map<string, unknown[]>): void {
  for (const [field, cond] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(cond)) {
      for (const sub of cond) if (isPlainObject(sub)) collectEqualities(sub, out);
      continue;
    }
    if (field.startsWith('$')) continue;
    const values = equalityValues(cond);
    if (values && !out.has(field)) out.set(field, values);
  }
}

/**
 * `range`: an index with the equalities of the best `index` plan (`equalities` fields) and then a range of the filter
 * (`{workspace_id, 'imported.clicks_total': {$gt: 0}}`), walked over that range only, where the equalities alone would
 * yield every document they name.
 */
export type Plan =
  | { kind: 'ids'; ids: string[] }
  | { kind: 'index'; index: Index; lookups: unknown[][] }
  | { kind: 'range'; range: OrderedPlan; equalities: number }
  | { kind: 'scan' };

/**
 * Lookups a plan may combine from several fields' `$in` lists (their product grows fast). The first field's list is
 * always taken whole: a lookup per value is never more work than the scan it replaces. A few thousand lookups cost
 * milliseconds, where stopping short of a field can leave every document of the prefix to decode: a bulk create's
 * slug check (`{domain_id, slug: {$in: 500 slugs}}`) walked every link of the domain at 256.
 */
const MAX_LOOKUPS = 4096;

function product(lists: unknown[][]): unknown[][] {
  let out: unknown[][] = [[]];
  for (const vals of lists) out = out.flatMap((prefix) => vals.map((v) => [...prefix, v]));
  return out;
}

/** The leading index fields constrained by equalities, as value lists (bounded number of combinations). */
function equalityPrefix(index: Index, eq: Map<string, unknown[]>): unknown[][] {
  const lists: unknown[][] = [];
  let combos = 1;
  for (const f of index.fields) {
    const vals = eq.get(f);
    if (!vals || (lists.length > 0 && combos * vals.length > MAX_LOOKUPS)) break;
    combos *= vals.length;
    lists.push(vals);
  }
  return lists;
}

/**
 * Whether an index holds every document a filter can match, given whether the filter makes one of the index's fields
 * present (a value other than null on it). A sparse index lacks the documents missing all its fields, so it serves
 * only then (the settling job's `{u: {$lt: date}}` on the sparse index of unsettled parts), as in MongoDB; a partial
 * index never does here.
 */
function holdsMatches(index: Index, present: boolean): boolean {
  return index.complete || (index.sparse && !index.partial && present);
}

export function plan(filter: Doc | undefined, indexes: readonly Index[]): Plan {
  if (!filter) return { kind: 'scan' };
  const eq = new Map<string, unknown[]>();
  collectEqualities(filter, eq);
  if (eq.size === 0) return { kind: 'scan' };
  const ids = eq.get('_id');
  if (ids && ids.every((v) => v !== null)) return { kind: 'ids', ids: ids.map(keyOf) };
  let best: { index: Index; lookups: unknown[][]; score: number } | undefined;
  for (const index of indexes) {
    const lists = equalityPrefix(index, eq);
    if (lists.length === 0 || !holdsMatches(index, lists[0]!.every((v) => v !== null))) continue;
    const full = lists.length === index.fields.length;
    const single = lists.every((l) => l.length === 1);
    const score = lists.length * 10 + (full && index.unique ? 5 : 0) + (single ? 1 : 0);
    if (!best || score > best.score) best = { index, lookups: product(lists), score };
  }
  if (!best) return { kind: 'scan' };
  if (best.lookups.length === 1) {
    const equalities = best.lookups[0]!.length;
    const range = rangeAfter(filter, eq, indexes);
    if (range && range.prefix.length >= equalities) return { kind: 'range', range, equalities };
  }
  return { kind: 'index', index: best.index, lookups: best.lookups };
}

export interface OrderedPlan {
  index: Index;
  prefix: unknown[];
  reverse: boolean;
  start: WalkStart | undefined;
  stop?: WalkStart | undefined;
  /** Every document the walk yields matches the filter: the index answered all of it, nothing needs decoding. */
  covered?: boolean;
  /** A keyset position: the walk starts just past these values of the first two sort fields (see `keysetOf`). */
  after?: KeysetStart | undefined;
}

/**
 * For a filter no equality narrows: an index whose field after an equality prefix has a range in the filter
 * (`{_id: {$gt: 'a.', $lt: 'a/'}}`, `{created_at: {$gte: t}}`), walked from one end of the range to the other.
 * On a multikey index only the lower end is used: the two ends may be met by different elements of an array.
 */
export function rangePlan(filter: Doc | undefined, indexes: readonly Index[]): OrderedPlan | undefined {
  if (!filter) return undefined;
  const eq = new Map<string, unknown[]>();
  collectEqualities(filter, eq);
  return rangeAfter(filter, eq, indexes);
}

/** rangePlan with the filter's equalities already collected. */
function rangeAfter(filter: Doc, eq: ReadonlyMap<string, unknown[]>, indexes: readonly Index[]): OrderedPlan | undefined {
  let best: (OrderedPlan & { score: number }) | undefined;
  for (const index of indexes) {
    // Only a bound makes this index a plan, and a bound is never null (boundOf): every match has the field.
    if (!holdsMatches(index, true)) continue;
    let p = 0;
    while (p < index.fields.length && eq.get(index.fields[p]!)?.length === 1) p++;
    if (p >= index.fields.length) continue;
    const field = index.fields[p]!;
    const lo = boundOf(filter, field, false);
    const hi = index.multikey ? undefined : boundOf(filter, field, true);
    if (!lo && !hi) continue;
    const score = p * 10 + (lo ? 1 : 0) + (hi ? 1 : 0);
    if (best && best.score >= score) continue;
    // Walk the values ascending from the lower end; without one, descending from the upper end.
    const reverse = lo ? index.dirs[p]! < 0 : index.dirs[p]! > 0;
    best = { index, prefix: index.fields.slice(0, p).map((f) => eq.get(f)![0]), reverse, start: lo ?? hi, stop: lo ? hi : undefined, score };
  }
  return best;
}

interface Bound {
  value: unknown;
  inclusive: boolean;
}

function tighter(a: Bound | undefined, b: Bound | undefined, upper: boolean): Bound | undefined {
  if (!a || !b) return a ?? b;
  const c = compareIndexValues(a.value, b.value) * (upper ? 1 : -1);
  return c < 0 || (c === 0 && !a.inclusive) ? a : b;
}

function looser(a: Bound | undefined, b: Bound | undefined, upper: boolean): Bound | undefined {
  if (!a || !b) return undefined;
  const c = compareIndexValues(a.value, b.value) * (upper ? 1 : -1);
  return c > 0 || (c === 0 && a.inclusive) ? a : b;
}

/** A bound every matching document's `field` is within (upper: at most, else at least), or undefined. */
function boundOf(filter: Doc, field: string, upper: boolean): Bound | undefined {
  let bound: Bound | undefined;
  for (const [k, cond] of Object.entries(filter)) {
    if (k === '$and' && Array.isArray(cond)) {
      for (const sub of cond) if (isPlainObject(sub)) bound = tighter(bound, boundOf(sub, field, upper), upper);
    } else if (k === '$or' && Array.isArray(cond) && cond.length > 0) {
      let any: Bound | undefined = isPlainObject(cond[0]) ? boundOf(cond[0], field, upper) : undefined;
      for (const sub of cond.slice(1)) any = looser(any, isPlainObject(sub) ? boundOf(sub, field, upper) : undefined, upper);
      bound = tighter(bound, any, upper);
    } else if (k === field) {
      const v = promote(cond);
      if (indexable(v) && v !== null) bound = tighter(bound, { value: v, inclusive: true }, upper);
      else if (isPlainObject(v)) {
        for (const [op, operand] of Object.entries(v)) {
          if (!indexable(operand) || operand === null) continue;
          const b =
            op === '$eq'
              ? { value: operand, inclusive: true }
              : upper && (op === '$lt' || op === '$lte')
                ? { value: operand, inclusive: op === '$lte' }
                : !upper && (op === '$gt' || op === '$gte')
                  ? { value: operand, inclusive: op === '$gte' }
                  : undefined;
          bound = tighter(bound, b, upper);
        }
      }
    }
  }
  return bound;
}

/**
 * An index that yields `sort`'s order: an equality prefix (one value per field), then the sort fields in the
 * index's order, all in its direction or all against it. Multikey, sparse and partial indexes do not qualify.
 * `minPrefix`: the equality plan's prefix length, so that walking never replaces a narrower lookup.
 */
export function orderedPlan(filter: Doc | undefined, sort: Doc, indexes: readonly Index[]): OrderedPlan | undefined {
  const eq = new Map<string, unknown[]>();
  if (filter) collectEqualities(filter, eq);
  if (eq.get('_id')) return undefined;
  const sortKeys = Object.entries(sort).map(([f, d]) => [f, toNumber(d, 1) < 0 ? -1 : 1] as const);
  if (sortKeys.length === 0 || Object.values(sort).some((d) => isPlainObject(d))) return undefined;
  const eqPlan = plan(filter, indexes);
  const minPrefix = eqPlan.kind === 'index' ? (eqPlan.lookups[0]?.length ?? 0) : eqPlan.kind === 'range' ? eqPlan.equalities : 0;
  let best: OrderedPlan | undefined;
  for (const index of indexes) {
    // The walk yields the documents in the index only: taken as if the filter made no field present.
    if (!holdsMatches(index, false) || index.multikey) continue;
    let p = 0;
    while (p < index.fields.length && eq.get(index.fields[p]!)?.length === 1) p++;
    const rest = sortKeys.filter(([f]) => !index.fields.slice(0, p).includes(f) || !eq.has(f));
    if (rest.length === 0 || p + rest.length > index.fields.length || p < minPrefix) continue;
    let relative = 0;
    let ok = true;
    rest.forEach(([f, d], i) => {
      if (index.fields[p + i] !== f) ok = false;
      const r = d * index.dirs[p + i]!;
      if (relative === 0) relative = r;
      else if (r !== relative) ok = false;
    });
    if (!ok) continue;
    if (best && best.prefix.length >= p) continue;
    const reverse = relative < 0;
    const first = rest[0]!;
    // The walk meets the first sort field ascending or descending; start at the bound on that side.
    const ascending = first[1] > 0;
    const bound = filter ? boundOf(filter, first[0], !ascending) : undefined;
    // ...and stop at the bound on the other side, instead of walking to the end of the prefix.
    const stop = filter ? boundOf(filter, first[0], ascending) : undefined;
    const prefixFields = index.fields.slice(0, p);
    const prefix = prefixFields.map((f) => eq.get(f)![0]);
    const after = keysetOf(filter, prefixFields, prefix, rest);
    best = after
      ? { index, prefix, reverse, start: undefined, stop: undefined, covered: true, after }
      : { index, prefix, reverse, start: bound, stop, covered: covers(filter, prefixFields, first[0]) };
  }
  return best;
}

const RANGE_OPERATORS: ReadonlySet<string> = new Set(['$gt', '$gte', '$lt', '$lte']);

/** The comparison class of a bound: a range between two values of one class holds only values of that class. */
function boundClass(v: unknown): string | undefined {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number' && !Number.isNaN(v)) return 'number';
  if (v instanceof Date) return 'date';
  return undefined;
}

/**
 * Whether a walk of `prefix` (equalities) then `field` between its bounds yields exactly the filter's documents:
 * the filter holds nothing else (no operator at its top, no other field), each prefix field equals one plain
 * value, and `field` has a lower and an upper bound of one class (strings, numbers or dates), so that type
 * bracketing, which the index order follows, excludes the same documents the filter would.
 */
function covers(filter: Doc | undefined, prefix: readonly string[], field: string): boolean {
  if (!filter) return true;
  for (const [key, raw] of Object.entries(filter)) {
    const cond = promote(raw);
    if (prefix.includes(key)) {
      if (boundClass(cond) === undefined && !(cond instanceof ObjectId)) return false;
    } else if (key === field) {
      if (!isPlainObject(cond)) return false;
      const ops = Object.entries(cond);
      if (ops.length === 0 || ops.some(([op]) => !RANGE_OPERATORS.has(op))) return false;
      const classes = new Set(ops.map(([, v]) => boundClass(promote(v))));
      if (classes.size !== 1 || classes.has(undefined)) return false;
      if (!ops.some(([op]) => op === '$gt' || op === '$gte') || !ops.some(([op]) => op === '$lt' || op === '$lte')) return false;
    } else return false;
  }
  return true;
}

/** A prefix field's condition a walk answers: one plain value of a class (or an ObjectId), not null. */
function prefixValue(cond: unknown): boolean {
  const v = promote(cond);
  return boundClass(v) !== undefined || v instanceof ObjectId;
}

/** Equal in the index's order, and of one class (1 and 1.0 are one key; a Date and its time are not). */
function sameValue(a: unknown, b: unknown): boolean {
  return compareIndexValues(a, b) === 0 && (boundClass(a) ?? 'other') === (boundClass(b) ?? 'other');
}

/** The filter's conditions joined by `$and` (at its top and inside `$and`s), each as [field or operator, condition]. */
function conjuncts(filter: Doc, out: Array<[string, unknown]> = []): Array<[string, unknown]> | undefined {
  for (const [key, cond] of Object.entries(filter)) {
    if (key === '$and') {
      if (!Array.isArray(cond) || cond.length === 0) return undefined;
      for (const sub of cond) if (!isPlainObject(sub) || !conjuncts(sub, out)) return undefined;
    } else out.push([key, cond]);
  }
  return out;
}

/** `{field: {op: value}}` with nothing else: the value, or undefined. */
function single(doc: unknown, field: string, op: string): unknown {
  if (!isPlainObject(doc)) return undefined;
  const keys = Object.keys(doc);
  if (keys.length !== 1 || keys[0] !== field) return undefined;
  const cond = promote(doc[field]);
  if (!isPlainObject(cond)) return undefined;
  const ops = Object.keys(cond);
  return ops.length === 1 && ops[0] === op ? promote(cond[op]) : undefined;
}

/**
 * A page after a position, as keyset pagination writes it for a sort on (a, b) (here both descending):
 * `{$or: [{a: {$lt: x}}, {a: x, b: {$lt: y}}]}`, beside equalities on the index's prefix and nothing else. The
 * documents it matches are exactly those the walk meets after the key (x, y) while `a` stays of x's class and,
 * where `a` equals x, `b` is of y's class (MongoDB compares values of one class only): the index answers it all.
 */
function keysetOf(filter: Doc | undefined, prefix: readonly string[], prefixValues: readonly unknown[], sort: ReadonlyArray<readonly [string, number]>): KeysetStart | undefined {
  if (!filter || sort.length < 2) return undefined;
  const [[a, dirA], [b, dirB]] = [sort[0]!, sort[1]!];
  const all = conjuncts(filter);
  if (!all) return undefined;
  let start: KeysetStart | undefined;
  for (const [key, cond] of all) {
    const at = prefix.indexOf(key);
    if (at >= 0 && prefixValue(cond) && sameValue(promote(cond), prefixValues[at])) continue;
    if (key !== '$or' || start || !Array.isArray(cond) || cond.length !== 2) return undefined;
    const [one, two] = cond as [unknown, unknown];
    for (const [past, tie] of [[one, two], [two, one]]) {
      const x = single(past, a, dirA < 0 ? '$lt' : '$gt');
      if (!isPlainObject(tie) || Object.keys(tie).length !== 2) continue;
      const equal = promote(tie[a]);
      const y = single({ [b]: tie[b] }, b, dirB < 0 ? '$lt' : '$gt');
      const classes = [keysetClass(x), keysetClass(y)] as const;
      if (classes[0] === undefined || classes[1] === undefined || keysetClass(equal) !== classes[0] || compareIndexValues(equal, x) !== 0) continue;
      start = { values: [x, y], classes: [classes[0], classes[1]] };
      break;
    }
    if (!start) return undefined;
  }
  return start;
}
