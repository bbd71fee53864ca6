// Secondary indexes: every key (the indexed values, then the owner's canonical `_id`) in a B+ tree in
// MongoDB's value order. Equality lookups on a leading prefix, unique checks and sorted walks are all
// range scans, so a sorted, limited read walks the index and stops at the limit.
import { ObjectId } from 'bson';
import sortedBTree from 'sorted-btree';
import bulkLoadModule from 'sorted-btree/extended/bulkLoad.js';
import { compileFilter, type Matcher } from './engine.ts';
import { CommandError } from './errors.ts';
import { EMPTY_ARRAY, pathValues } from './paths.ts';
import { compareValues, describe, intern, isPlainObject, keyOf, toNumber, type Doc } from './values.ts';

export interface IndexSpec {
  name: string;
  key: Doc;
  unique?: boolean;
  sparse?: boolean;
  partialFilterExpression?: Doc;
  expireAfterSeconds?: number;
  [option: string]: unknown;
}

// A CommonJS package: under Node's ESM loader its default import is `module.exports`.
const BTree = sortedBTree.default;
const { bulkLoad } = bulkLoadModule;
type Tree = InstanceType<typeof BTree<Key, undefined>>;

/** A node of sorted-btree, as far as shareValues reads it. */
interface TreeNode {
  values: unknown[];
  children?: TreeNode[];
}

/**
 * The one array of values every leaf of a tree built by set() with no values shares (sorted-btree's own, which its
 * nodes recognise): bulkLoad gives each leaf an array of its own, 8 bytes per key.
 */
const SHARED_VALUES = (new (sortedBTree as unknown as { BNode: new () => TreeNode }).BNode()).values;

function shareValues(node: TreeNode): void {
  if (node.children) for (const child of node.children) shareValues(child);
  else node.values = SHARED_VALUES;
}

/** Positions before and after every key, for range starts: they compare below or above any value. */
export const LOW = Symbol('low');
export const HIGH = Symbol('high');

/** An index key: the indexed values (one per field) followed by the owning document's canonical `_id` key. */
export type Key = unknown[];

function fieldKey(v: unknown): string {
  return v === EMPTY_ARRAY ? 'u' : keyOf(v);
}

/**
 * A date as an index key holds it: its time alone. A Date object takes over 100 bytes, and a stored click has two in
 * its keys (its time and its expiry). Only index keys hold these; comparisons treat them as the Date they stand for.
 */
class KeyDate {
  readonly time: number;
  constructor(time: number) {
    this.time = time;
  }
}

/** The last Date turned into a KeyDate: a document's indexes read the same Date (a click's time, in two of them). */
let lastDate: Date | undefined;
let lastKeyDate: KeyDate | undefined;

/** A value as an index key stores it: a short string shared (intern), a Date as a KeyDate. */
function keyValue(v: unknown): unknown {
  if (!(v instanceof Date)) return intern(v);
  const time = v.getTime();
  if (v !== lastDate || lastKeyDate!.time !== time) {
    lastDate = v;
    lastKeyDate = new KeyDate(time);
  }
  return lastKeyDate;
}

function timeOf(v: unknown): number | undefined {
  return v instanceof KeyDate ? v.time : v instanceof Date ? v.getTime() : undefined;
}

/** MongoDB's order, with NaN below every other number so that the order stays total. */
export function compareIndexValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') {
    if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1;
    if (Number.isNaN(b)) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  const x = timeOf(a);
  const y = timeOf(b);
  if (x !== undefined && y !== undefined) return x < y ? -1 : x > y ? 1 : 0;
  return compareValues(x === undefined ? a : new Date(x), y === undefined ? b : new Date(y));
}

function compareKeys(a: Key, b: Key, dirs: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x === LOW || y === LOW) return x === y ? 0 : x === LOW ? -1 : 1;
    if (x === HIGH || y === HIGH) return x === y ? 0 : x === HIGH ? 1 : -1;
    if (i === dirs.length) return (x as string) < (y as string) ? -1 : (x as string) > (y as string) ? 1 : 0;
    const c = compareIndexValues(x, y);
    if (c !== 0) return c * dirs[i]!;
  }
  return a.length - b.length;
}

export function formatKeyValue(v: unknown): string {
  if (v === undefined || v === null || v === EMPTY_ARRAY) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof ObjectId) return `ObjectId('${v.toHexString()}')`;
  if (v instanceof Date) return `new Date(${v.getTime()})`;
  if (isPlainObject(v) || Array.isArray(v)) return JSON.stringify(v);
  return describe(v);
}

/** Options that make two index definitions different (MongoDB compares these on re-create). */
const SIGNIFICANT_OPTIONS = ['unique', 'sparse', 'partialFilterExpression', 'expireAfterSeconds'] as const;

export function sameOptions(a: IndexSpec, b: IndexSpec): boolean {
  return SIGNIFICANT_OPTIONS.every((o) => keyOf(a[o] ?? (o === 'unique' || o === 'sparse' ? false : null)) === keyOf(b[o] ?? (o === 'unique' || o === 'sparse' ? false : null)));
}

export function defaultIndexName(key: Doc): string {
  return Object.entries(key)
    .map(([f, d]) => `${f}_${typeof d === 'string' ? d : String(toNumber(d))}`)
    .join('_');
}

export type KeysetClass = 'string' | 'date';

/** Strings and dates only: each is one run of the index order, and none has a value its comparisons leave out. */
export function keysetClass(v: unknown): KeysetClass | undefined {
  if (typeof v === 'string') return 'string';
  const time = timeOf(v);
  if (time !== undefined && !Number.isNaN(time)) return 'date';
  return undefined;
}

/** The values of the first two sort fields a page ended on, and the one comparison class each must keep. */
export interface KeysetStart {
  values: [unknown, unknown];
  classes: [KeysetClass, KeysetClass];
}

/** Where an ordered walk starts on the field after the equality prefix. */
export interface WalkStart {
  value: unknown;
  inclusive: boolean;
}

/**
 * A B+ tree of keys in the index's own order (each field ascending or descending as declared). Equality lookups,
 * unique checks and ordered walks are all range scans over a key prefix.
 */
export class Index {
  readonly spec: IndexSpec;
  readonly fields: string[];
  /** 1 or -1 per field, as declared. */
  readonly dirs: number[];
  readonly unique: boolean;
  readonly sparse: boolean;
  readonly partial: Matcher | undefined;
  /** Usable to narrow arbitrary queries: it contains every document. */
  readonly complete: boolean;
  /** Some document had several values (or an empty array) for a field: the key order is then not the sort order. */
  multikey = false;
  private tree: Tree;
  private readonly compare: (a: Key, b: Key) => number;

  constructor(spec: IndexSpec) {
    this.spec = spec;
    this.fields = Object.keys(spec.key);
    if (this.fields.length === 0) throw new CommandError('BadValue', 'Index keys cannot be empty.');
    this.dirs = this.fields.map((f) => (toNumber(spec.key[f], 1) < 0 ? -1 : 1));
    this.unique = spec.unique === true;
    this.sparse = spec.sparse === true;
    this.partial = spec.partialFilterExpression ? compileFilter(spec.partialFilterExpression) : undefined;
    this.complete = !this.sparse && !this.partial;
    const dirs = this.dirs;
    this.compare = (a, b) => compareKeys(a, b, dirs);
    this.tree = new BTree<Key, undefined>(undefined, this.compare);
  }

  get ttlSeconds(): number | undefined {
    return this.spec.expireAfterSeconds === undefined ? undefined : toNumber(this.spec.expireAfterSeconds);
  }

  get size(): number {
    return this.tree.size;
  }

  /** Whether a change to these top-level fields may change this index's keys (a partial filter may read any field). */
  reads(fields: ReadonlySet<string>): boolean {
    if (this.partial) return true;
    return this.fields.some((f) => f.startsWith('$') || fields.has(f.split('.', 1)[0]!));
  }

  /** Per-field value lists, or null when the document is not part of this index. */
  private fieldValues(view: Doc): unknown[][] | null {
    if (this.partial && !this.partial(view)) return null;
    const perField = this.fields.map((f) => pathValues(view, f));
    if (this.sparse && perField.every((vals) => vals.every((v) => v === undefined))) return null;
    return perField;
  }

  private static combos(perField: unknown[][]): unknown[][] {
    if (perField.every((vals) => vals.length === 1)) return [perField.map((vals) => vals[0])];
    let out: unknown[][] = [[]];
    for (const vals of perField) {
      const next: unknown[][] = [];
      for (const prefix of out) for (const v of vals) next.push([...prefix, v]);
      out = next;
    }
    return out;
  }

  private keysWithValues(view: Doc): Map<string, unknown[]> {
    const perField = this.fieldValues(view);
    const keys = new Map<string, unknown[]>();
    if (!perField) return keys;
    for (const combo of Index.combos(perField)) keys.set(combo.map(fieldKey).join('\u0000'), combo);
    return keys;
  }

  add(id: string, view: Doc): void {
    this.keysOf(id, view, this.put);
  }

  private readonly put = (key: Key): void => {
    this.tree.set(key, undefined);
  };

  /** Hands each of a document's keys to `take` (and notes when the index becomes multikey). */
  keysOf(id: string, view: Doc, take: (key: Key) => void): void {
    const perField = this.fieldValues(view);
    if (!perField) return;
    if (!this.multikey && perField.some((vals) => vals.length !== 1 || vals[0] === EMPTY_ARRAY)) this.multikey = true;
    for (const combo of Index.combos(perField)) {
      // Sized once: a push() grows an array's storage by half plus 16 slots, most of a stored key's memory.
      const key: Key = new Array<unknown>(combo.length + 1);
      for (let i = 0; i < combo.length; i++) key[i] = keyValue(combo[i]);
      key[combo.length] = id;
      take(key);
    }
  }

  /**
   * Replaces the index's contents by `keys` (from keysOf; sorted here, repeats dropped), built bottom-up rather than
   * inserted one by one: loading a journal, whose documents were checked when they were written.
   */
  load(keys: Key[]): void {
    const compare = this.compare;
    keys.sort(compare);
    let n = 0;
    for (let i = 0; i < keys.length; i++) if (n === 0 || compare(keys[n - 1]!, keys[i]!) !== 0) keys[n++] = keys[i]!;
    keys.length = n;
    this.tree = bulkLoad<Key, undefined>(keys, new Array<undefined>(n).fill(undefined), this.tree.maxNodeSize, compare);
    shareValues((this.tree as unknown as { _root: TreeNode })._root);
  }

  /** The top-level fields this index's keys and partial filter read, or undefined when it may read any. */
  topFields(): string[] | undefined {
    const partial = Object.keys(this.spec.partialFilterExpression ?? {});
    const paths = [...this.fields, ...partial];
    if (paths.some((f) => f.startsWith('$') || f.includes('.$'))) return undefined;
    return paths.map((f) => f.split('.', 1)[0]!);
  }

  remove(id: string, view: Doc): void {
    const perField = this.fieldValues(view);
    if (!perField) return;
    for (const combo of Index.combos(perField)) {
      combo.push(id);
      this.tree.delete(combo);
    }
  }

  /** Owners of the keys that start with `prefix` (values, in field order), in index order. */
  *owners(prefix: readonly unknown[]): Iterable<string> {
    for (const [key] of this.tree.entries([...prefix, LOW])) {
      if (!this.hasPrefix(key, prefix)) return;
      yield key[key.length - 1] as string;
    }
  }

  private hasPrefix(key: Key, prefix: readonly unknown[]): boolean {
    for (let i = 0; i < prefix.length; i++) if (compareIndexValues(key[i], prefix[i]) !== 0) return false;
    return true;
  }

  /**
   * Owners of the keys that start with `prefix`, in index order (`reverse`: backwards), from `start` on the next
   * field when given, up to `stop` on that field when given; or, with `after`, from just past a keyset position on
   * the next two fields. The caller stops when it has enough.
   */
  *walk(prefix: readonly unknown[], reverse: boolean, start?: WalkStart, stop?: WalkStart, after?: KeysetStart): Iterable<string> {
    let from: Key;
    if (after) from = [...prefix, ...after.values, reverse ? LOW : HIGH];
    else if (start) from = [...prefix, start.value, reverse === start.inclusive ? HIGH : LOW];
    else from = [...prefix, reverse ? HIGH : LOW];
    const keys = reverse ? this.tree.entriesReversed(from) : this.tree.entries(from);
    const p = prefix.length;
    // Whether the walk meets the next field's values in ascending order.
    const ascending = p < this.dirs.length && (this.dirs[p]! > 0) !== reverse;
    for (const [key] of keys) {
      if (!this.hasPrefix(key, prefix)) return;
      if (stop && p < this.dirs.length) {
        const c = compareIndexValues(key[p], stop.value) * (ascending ? 1 : -1);
        if (c > 0 || (c === 0 && !stop.inclusive)) return;
      }
      if (after) {
        // Past the first field's class, nothing more can match; where it ties, only the second's class does.
        if (keysetClass(key[p]) !== after.classes[0]) return;
        if (compareIndexValues(key[p], after.values[0]) === 0 && keysetClass(key[p + 1]) !== after.classes[1]) continue;
      }
      yield key[key.length - 1] as string;
    }
  }

  /**
   * For a unique index: the first key of `view` already owned by a document that `isOther`
   * accepts, as the error MongoDB would raise. `extraOwners` adds uncommitted owners.
   */
  findDuplicate(ns: string, id: string, view: Doc, isOther: (ownerId: string) => boolean, extra?: (key: string) => boolean): CommandError | undefined {
    if (!this.unique) return undefined;
    const perField = this.fieldValues(view);
    if (!perField) return undefined;
    for (const values of Index.combos(perField)) {
      let clash = false;
      for (const owner of this.owners(values)) {
        if (owner !== id && isOther(owner)) {
          clash = true;
          break;
        }
      }
      if (!clash && extra) clash = extra(values.map(fieldKey).join('\u0000'));
      if (clash) return this.duplicateError(ns, values);
    }
    return undefined;
  }

  /** Keys of a document, for comparing uncommitted documents inside a transaction. */
  keySet(view: Doc): Set<string> {
    return new Set(this.keysWithValues(view).keys());
  }

  duplicateError(ns: string, values: unknown[]): CommandError {
    const keyValue: Doc = {};
    this.fields.forEach((f, i) => (keyValue[f] = values[i] === EMPTY_ARRAY ? undefined : (values[i] ?? null)));
    const shown = this.fields.map((f, i) => `${f}: ${formatKeyValue(values[i])}`).join(', ');
    return new CommandError('DuplicateKey', `E11000 duplicate key error collection: ${ns} index: ${this.spec.name} dup key: { ${shown} }`, {
      keyPattern: this.spec.key,
      keyValue,
    });
  }

  /** Every stored key must be unique; used when a unique index is created on existing data. */
  firstDuplicateKey(ns: string, views: Iterable<[string, Doc]>): CommandError | undefined {
    if (!this.unique) return undefined;
    const seen = new Map<string, string>();
    for (const [id, view] of views) {
      for (const [key, values] of this.keysWithValues(view)) {
        const prev = seen.get(key);
        if (prev !== undefined && prev !== id) return this.duplicateError(ns, values);
        seen.set(key, id);
      }
    }
    return undefined;
  }
}
