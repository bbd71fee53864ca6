// What MongoDB refuses in an operator update that mingo would apply as a silent no-op (or apply differently): a
// number operator on a non-number, a path through a scalar, an array operator on a non-array, and array filters
// that do not match the identifiers the update's paths use. Checked before anything is changed, with MongoDB's
// codes and messages.
import { Binary, ObjectId } from 'bson';
import { CommandError } from './errors.ts';
import { isPlainObject, type Doc } from './values.ts';

/** MongoDB's name of a (promoted) value's BSON type, as its messages print it. */
export function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) <= 0x7fffffff ? 'int' : 'double';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'array';
  if (v instanceof Date) return 'date';
  if (v instanceof ObjectId) return 'objectId';
  if (v instanceof Binary) return 'binData';
  if (v instanceof RegExp) return 'regex';
  if (isPlainObject(v)) return 'object';
  return String((v as { _bsontype?: string })._bsontype ?? 'unknown').toLowerCase();
}

function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof ObjectId) return `ObjectId('${v.toHexString()}')`;
  if (v instanceof Date) return `new Date(${v.getTime()})`;
  if (Array.isArray(v)) return `[ ${v.map(show).join(', ')} ]`;
  if (isPlainObject(v)) {
    const fields = Object.entries(v).map(([k, x]) => `${k}: ${show(x)}`);
    return fields.length === 0 ? '{}' : `{ ${fields.join(', ')} }`;
  }
  return String(v);
}

const NUMERIC = new Map([
  ['$inc', ['increment', '$inc']],
  ['$mul', ['multiply', '$mul']],
]);
const ARRAY_OPS = new Set(['$push', '$addToSet', '$pop', '$pull', '$pullAll']);
const PATH_OPS = new Set(['$set', '$inc', '$mul', '$min', '$max', '$push', '$addToSet', '$pop', '$pull', '$pullAll', '$currentDate', '$unset']);
const ARRAY_FILTER_ID = /\$\[([^\]]*)\]/g;

function arrayOperatorRefusal(op: string, path: string, leaf: unknown, doc: Doc): CommandError {
  const type = typeName(leaf);
  switch (op) {
    case '$push':
      return new CommandError('BadValue', `The field '${path}' must be an array but is of type ${type} in document {_id: ${show(doc._id)}}`);
    case '$addToSet':
      return new CommandError('BadValue', `Cannot apply $addToSet to non-array field. Field named '${path.split('.').pop()!}' has non-array type ${type}`);
    case '$pop':
      return new CommandError('TypeMismatch', `Path '${path}' contains an element of non-array type '${type}'`);
    default:
      return new CommandError('BadValue', `Cannot apply ${op} to a non-array value`);
  }
}

/**
 * Walks `path` in `doc` as an update would create it; throws PathNotViable (28) where a segment would have to be a
 * field of a scalar or a non-numeric field of an array. Returns the value at the path (undefined when missing), or
 * `stop` when the path goes through a positional operator (`$`, `$[]`, `$[id]`: checked by the updater itself).
 */
const STOP = Symbol('positional');
function walk(doc: Doc, path: string): unknown {
  const parts = path.split('.');
  let cur: unknown = doc;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.startsWith('$')) return STOP;
    if (cur === undefined) return undefined;
    if (isPlainObject(cur)) {
      cur = Object.hasOwn(cur, part) ? cur[part] : undefined;
      continue;
    }
    if (Array.isArray(cur) && /^\d+$/.test(part)) {
      cur = cur[Number(part)];
      continue;
    }
    const parent = parts.slice(0, i).join('.');
    throw new CommandError('PathNotViable', `Cannot create field '${part}' in element {${parent}: ${show(cur)}}`);
  }
  return cur;
}

/** Refuses, before any change, an operator update MongoDB would refuse for this document (`doc`, promoted). */
export function checkOperatorTargets(doc: Doc, modifier: Doc): void {
  for (const [op, args] of Object.entries(modifier)) {
    if (!PATH_OPS.has(op) || !isPlainObject(args)) continue;
    for (const [path, operand] of Object.entries(args)) {
      const numeric = NUMERIC.get(op);
      if (numeric && typeof operand !== 'number') {
        throw new CommandError('TypeMismatch', `Cannot ${numeric[0]} with non-numeric argument: {${path}: ${show(operand)}}`);
      }
      if (op === '$unset') continue;
      const leaf = walk(doc, path);
      if (leaf === STOP || leaf === undefined) continue;
      if (numeric && typeof leaf !== 'number') {
        throw new CommandError(
          'TypeMismatch',
          `Cannot apply ${numeric[1]} to a value of non-numeric type. {_id: ${show(doc._id)}} has the field '${path.split('.').pop()!}' of non-numeric type ${typeName(leaf)}`,
        );
      }
      if (ARRAY_OPS.has(op) && !Array.isArray(leaf)) throw arrayOperatorRefusal(op, path, leaf, doc);
    }
  }
}

/**
 * The parse-time checks of `arrayFilters`: each filter names one identifier, no identifier twice, every identifier
 * used by a path of the update (else FailedToParse, 9), and every `$[id]` of a path has its filter (else BadValue, 2).
 */
export function checkArrayFilters(u: Doc | Doc[], arrayFilters: Doc[] | undefined): void {
  if (arrayFilters === undefined) return;
  if (Array.isArray(u)) throw new CommandError('FailedToParse', 'arrayFilters may not be specified for pipeline-style updates');
  const given = new Map<string, Doc>();
  for (const filter of arrayFilters) {
    const names = new Set(Object.keys(filter).filter((k) => !k.startsWith('$')).map((k) => k.split('.')[0]!));
    if (names.size === 0) throw new CommandError('FailedToParse', 'Cannot use an expression without a top-level field name in arrayFilters');
    if (names.size > 1) throw new CommandError('FailedToParse', `Error parsing array filter :: caused by :: Expected a single top-level field name, found '${[...names][0]!}' and '${[...names][1]!}'`);
    const [name] = names;
    if (given.has(name!)) throw new CommandError('FailedToParse', `Found multiple array filters with the same top-level field name ${name!}`);
    given.set(name!, filter);
  }
  const used = new Set<string>();
  for (const args of Object.values(u)) {
    if (!isPlainObject(args)) continue;
    for (const path of Object.keys(args)) {
      for (const [, id] of path.matchAll(ARRAY_FILTER_ID)) {
        if (id === '') continue;
        if (!given.has(id!)) throw new CommandError('BadValue', `No array filter found for identifier '${id!}' in path '${path}'`);
        used.add(id!);
      }
    }
  }
  for (const name of given.keys()) {
    if (!used.has(name)) throw new CommandError('FailedToParse', `The array filter for identifier '${name}' was not used in the update ${show(u)}`);
  }
}
