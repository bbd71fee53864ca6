// Computing the new version of a document for update/findAndModify: operator updates,
// replacements, pipeline updates and upserts. Always works on a private copy.
import { ObjectId } from 'bson';
import { applyUpdateOperators, runPipeline } from './engine.ts';
import { CommandError } from './errors.ts';
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

export interface UpdateOutcome {
  doc: Doc;
  modified: boolean;
}

/**
 * New stored document for `old` (or, when `old` is undefined, for an upsert starting from the
 * filter's equality fields). `oldView` is the promoted form of `old`.
 */
export function computeUpdate(old: Doc | undefined, oldView: Doc | undefined, u: UpdateSpec, filter: Doc | undefined, arrayFilters?: Doc[]): UpdateOutcome {
  const inserting = old === undefined;
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
    const changed = Object.keys(modifier).length > 0 ? applyUpdateOperators(work, modifier, inserting ? undefined : filter, arrayFilters) : [];
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
