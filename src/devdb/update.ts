// Computing the new version of a document for update/findAndModify: operator updates,
// replacements, pipeline updates and upserts. Always works on a private copy.
import { ObjectId } from 'bson';
import { applyUpdateOperators, runPipeline } from './engine.ts';
import { CommandError } from './errors.ts';
import { checkOperatorTargets } from './update-checks.ts';
import { cloneValue, isPlainObject, keyOf, promote, restoreTypes, type Doc } from './values.ts';

const OPERATORS = new Set(['$set', '$unset', '$inc', '$mul', '$min', '$max', '$push', '$pull', '$pullAll', '$addToSet', '$pop', '$rename', '$currentDate', '$bit', '$setOnInsert']);
// Arithmetic/comparison operators must see JS numbers; value-storing ones keep BSON wrappers.
const PROMOTED = new Set(['$inc', '$mul', '$min', '$max', '$pull', '$pullAll', '$bit']);

export type UpdateSpec = Doc | Doc[];

export function isOperatorUpdate(u: UpdateSpec): boolean {
  return !Array.isArray(u) && Object.keys(u).some((k) => k.startsWith('$'));
}

export function validateUpdate(u: unknown): UpdateSpec {
  if (Array.isArray(u)) {
    if (!u.every(isPlainObject)) throw new CommandError('FailedToParse', 'Each pipeline update stage must be an object');
    return u;
  }
  if (!isPlainObject(u)) throw new CommandError('FailedToParse', 'Update argument must be either an object or an array');
  const keys = Object.keys(u);
  const ops = keys.filter((k) => k.startsWith('$'));
  if (ops.length > 0) {
    if (ops.length !== keys.length) throw new CommandError('FailedToParse', 'Update document cannot mix operators and fields');
    for (const op of ops) if (!OPERATORS.has(op)) throw new CommandError('FailedToParse', `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`);
  }
  return u;
}

function withIdFirst(doc: Doc, id: unknown): Doc {
  const { _id: _ignored, ...rest } = doc;
  return { _id: id, ...rest };
}

function immutableId(): CommandError {
  return new CommandError('ImmutableField', "Performing an update on the path '_id' would modify the immutable field '_id'");
}

/** Equality fields of a filter become the starting document of an upsert, like MongoDB. */
export function upsertSeed(filter: Doc | undefined): Doc {
  const seed: Doc = {};
  const visit = (f: Doc) => {
    for (const [k, v] of Object.entries(f)) {
      if (k === '$and' && Array.isArray(v)) {
        for (const sub of v) if (isPlainObject(sub)) visit(sub);
        continue;
      }
      if (k.startsWith('$')) continue;
      let value: unknown = v;
      if (isPlainObject(v) && Object.keys(v).some((x) => x.startsWith('$'))) {
        if (!('$eq' in v)) continue;
        value = v.$eq;
      }
      if (value instanceof RegExp) continue;
      setPath(seed, k, cloneValue(value));
    }
  };
  if (filter) visit(filter);
  return seed;
}

function setPath(doc: Doc, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = doc;
  for (const p of parts.slice(0, -1)) {
    if (!isPlainObject(cur[p])) cur[p] = {};
    cur = cur[p] as Doc;
  }
  cur[parts[parts.length - 1]!] = value;
}

/**
 * `$set` and `$inc` on plain dotted paths through sub-documents, applied directly: many-counter updates (analytics
 * rollups `$inc` hundreds of paths at once) spent most of their time in mingo's general updater. Anything else (an
 * array on the way, `$`/`$[]` paths, overlapping paths, a non-numeric `$inc` target) returns null and takes
 * mingo's path, which also raises MongoDB's errors.
 */
function applySimple(work: Doc, modifier: Doc): string[] | null {
  const entries: Array<[op: '$set' | '$inc', path: string[], key: string, value: unknown]> = [];
  for (const [op, args] of Object.entries(modifier)) {
    if ((op !== '$set' && op !== '$inc') || !isPlainObject(args)) return null;
    for (const [key, value] of Object.entries(args)) {
      const path = key.split('.');
      // A numeric segment names a field of a sub-document (an array on the way is refused below).
      if (path.some((p) => p === '' || p.startsWith('$'))) return null;
      if (op === '$inc' && typeof value !== 'number') return null;
      entries.push([op, path, key, value]);
    }
  }
  const keys = entries.map((e) => e[2]).sort();
  for (let i = 1; i < keys.length; i++) if (keys[i] === keys[i - 1] || keys[i]!.startsWith(`${keys[i - 1]}.`)) return null;
  // Check every path before changing anything: the update is applied whole or handed to mingo untouched.
  for (const [op, path] of entries) {
    let cur: unknown = work;
    for (let i = 0; i < path.length; i++) {
      if (cur === undefined) break;
      if (!isPlainObject(cur)) return null;
      cur = cur[path[i]!];
    }
    if (op === '$inc' && cur !== undefined && typeof cur !== 'number') return null;
  }
  const changed: string[] = [];
  for (const [op, path, key, value] of entries) {
    let parent = work;
    for (const p of path.slice(0, -1)) {
      if (parent[p] === undefined) parent[p] = {};
      parent = parent[p] as Doc;
    }
    const leaf = path[path.length - 1]!;
    const old = parent[leaf];
    if (op === '$inc') {
      if (value === 0 && old !== undefined) continue;
      parent[leaf] = ((old as number | undefined) ?? 0) + (value as number);
    } else {
      if (old !== undefined && keyOf(promote(old)) === keyOf(promote(value))) continue;
      parent[leaf] = cloneValue(value);
    }
    changed.push(key);
  }
  return changed;
}

export interface UpdateOutcome {
  doc: Doc;
  modified: boolean;
}

/** Whether an update modifier names a path through the positional `$` operator (`a.$.b`, `a.$`). */
function usesPositional(modifier: Doc): boolean {
  for (const fields of Object.values(modifier)) {
    if (fields === null || typeof fields !== 'object') continue;
    for (const path of Object.keys(fields)) if (path === '$' || path.includes('.$.') || path.endsWith('.$') || path.startsWith('$.')) return true;
  }
  return false;
}

/**
 * The common updates, `$set` of top-level fields and `$inc` of top-level plain numbers, applied without mingo
 * (whose update rebuilds its operator tables on every call). Undefined when the update needs the general path.
 */
function simpleUpdate(old: Doc, oldView: Doc, u: Doc): UpdateOutcome | undefined {
  const ops = Object.keys(u);
  if (ops.some((op) => op !== '$set' && op !== '$inc' && op !== '$setOnInsert')) return undefined;
  const set = (u.$set ?? {}) as Doc;
  const inc = (u.$inc ?? {}) as Doc;
  if (!isPlainObject(set) || !isPlainObject(inc)) return undefined;
  const next: Doc = { ...old };
  let modified = false;
  for (const [k, v] of Object.entries(set)) {
    if (k.includes('.') || k.startsWith('$') || k in inc) return undefined;
    if (!(k in old) || keyOf(promote(v)) !== keyOf(oldView[k])) modified = true;
    next[k] = cloneValue(v);
  }
  for (const [k, v] of Object.entries(inc)) {
    if (k.includes('.') || k.startsWith('$') || typeof v !== 'number') return undefined;
    const cur = old[k];
    if (cur !== undefined && typeof cur !== 'number') return undefined;
    next[k] = (cur ?? 0) + v;
    if (v !== 0 || cur === undefined) modified = true;
  }
  return { doc: next, modified };
}

/**
 * `$inc` of dotted paths through sub-documents to plain numbers (with a `$setOnInsert`, which an existing document
 * ignores), applied to `old` itself: the analytics rollups `$inc` hundreds of counters of large documents per batch,
 * and the general path copied the whole document, then walked it again to put its numeric wrappers back. A path
 * through an array or to a wrapped number (Long, integral Double, Decimal128), or overlapping paths, return undefined
 * before anything changed, and take the general path.
 */
function incInPlace(old: Doc, u: Doc): UpdateOutcome | undefined {
  for (const op of Object.keys(u)) if (op !== '$inc' && op !== '$setOnInsert') return undefined;
  const inc = u.$inc;
  if (!isPlainObject(inc)) return undefined;
  const keys = Object.keys(inc);
  if (keys.length === 0) return undefined;
  const sorted = [...keys].sort();
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1] || sorted[i]!.startsWith(`${sorted[i - 1]}.`)) return undefined;
  const paths: string[][] = [];
  for (const key of keys) {
    if (typeof inc[key] !== 'number') return undefined;
    const path = key.split('.');
    if (path[0] === '_id' || path.some((p) => p === '' || p.startsWith('$'))) return undefined;
    let cur: unknown = old;
    for (let i = 0; i < path.length - 1 && cur !== undefined; i++) {
      if (!isPlainObject(cur)) return undefined;
      cur = cur[path[i]!];
    }
    if (cur !== undefined && !isPlainObject(cur)) return undefined;
    const leaf = cur === undefined ? undefined : cur[path[path.length - 1]!];
    if (leaf !== undefined && typeof leaf !== 'number') return undefined;
    paths.push(path);
  }
  let modified = false;
  keys.forEach((key, k) => {
    const path = paths[k]!;
    let parent = old;
    for (let i = 0; i < path.length - 1; i++) parent = (parent[path[i]!] ??= {}) as Doc;
    const leaf = path[path.length - 1]!;
    const value = inc[key] as number;
    const before = parent[leaf] as number | undefined;
    if (value === 0 && before !== undefined) return;
    parent[leaf] = (before ?? 0) + value;
    modified = true;
  });
  return { doc: old, modified };
}

/**
 * New stored document for `old` (or, when `old` is undefined, for an upsert starting from the
 * filter's equality fields). `oldView` is the promoted form of `old`. `old` must be a private copy (Entry.doc): an
 * update may be applied to it in place.
 */
export function computeUpdate(old: Doc | undefined, oldView: Doc | undefined, u: UpdateSpec, filter: Doc | undefined, arrayFilters?: Doc[]): UpdateOutcome {
  const inserting = old === undefined;
  if (!inserting && !arrayFilters && !Array.isArray(u) && isOperatorUpdate(u)) {
    const simple = simpleUpdate(old, oldView ?? (promote(old) as Doc), u);
    if (simple) {
      if (keyOf(promote(simple.doc._id)) !== keyOf((oldView ?? promote(old) as Doc)._id)) throw immutableId();
      return simple;
    }
    const inPlace = incInPlace(old, u);
    if (inPlace) return inPlace;
  }
  const base = old ?? upsertSeed(filter);
  const baseView = oldView ?? (promote(base) as Doc);
  let next: Doc;
  let modified: boolean;
  if (Array.isArray(u)) {
    const [result] = runPipeline([cloneValue(baseView)], u);
    next = restoreTypes(result ?? {}, base) as Doc;
    modified = keyOf(promote(next)) !== keyOf(baseView);
  } else if (!isOperatorUpdate(u)) {
    if ('_id' in u && base._id !== undefined && keyOf(promote(u._id)) !== keyOf(baseView._id)) throw immutableId();
    next = cloneValue(u);
    if (base._id !== undefined) next = withIdFirst(next, base._id);
    modified = keyOf(promote(next)) !== keyOf(baseView);
  } else {
    const work = cloneValue(baseView);
    const modifier: Doc = {};
    for (const [op, args] of Object.entries(u)) {
      if (op === '$setOnInsert') {
        if (inserting) modifier.$set = { ...(modifier.$set as Doc | undefined), ...(args as Doc) };
        continue;
      }
      if (op === '$set' && modifier.$set) {
        modifier.$set = { ...(args as Doc), ...(modifier.$set as Doc) };
        continue;
      }
      modifier[op] = PROMOTED.has(op) ? promote(args) : args;
    }
    // The filter is only needed to resolve the positional `$`; compiling it for every matched document made an
    // update of n documents by {_id: {$in: [n ids]}} cost n².
    const positional = !inserting && usesPositional(modifier);
    // The fast paths above take only updates MongoDB accepts; what reaches here is checked first.
    checkOperatorTargets(work, modifier);
    const changed =
      Object.keys(modifier).length === 0
        ? []
        : (applySimple(work, modifier) ?? applyUpdateOperators(work, modifier, positional ? filter : undefined, arrayFilters));
    if (!inserting && keyOf(work._id) !== keyOf(baseView._id)) throw immutableId();
    next = restoreTypes(work, base) as Doc;
    modified = changed.length > 0;
  }
  if (!isPlainObject(next)) throw new CommandError('BadValue', 'update produced a non-document');
  if (inserting && next._id === undefined) next = withIdFirst(next, new ObjectId());
  else if (!inserting && keyOf(promote(next._id)) !== keyOf(baseView._id)) throw immutableId();
  else if (Object.keys(next)[0] !== '_id') next = withIdFirst(next, next._id);
  return { doc: next, modified };
}
