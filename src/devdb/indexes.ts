// Secondary indexes: a Map from canonical key string to the owning `_id` key(s). Unique checks
// are one Map lookup; equality queries on the leading field(s) use the same maps to narrow
// candidates. Compound indexes keep a second map on their first field alone for prefix lookups.
import { ObjectId } from 'bson';
import { compileFilter, type Matcher } from './engine.ts';
import { CommandError } from './errors.ts';
import { EMPTY_ARRAY, pathValues } from './paths.ts';
import { describe, isPlainObject, keyOf, toNumber, type Doc } from './values.ts';

export interface IndexSpec {
  name: string;
  key: Doc;
  unique?: boolean;
  sparse?: boolean;
  partialFilterExpression?: Doc;
  expireAfterSeconds?: number;
  [option: string]: unknown;
}

type Owners = string | Set<string>;

function fieldKey(v: unknown): string {
  return v === EMPTY_ARRAY ? 'u' : keyOf(v);
}

function addOwner(map: Map<string, Owners>, key: string, id: string): void {
  const cur = map.get(key);
  if (cur === undefined) map.set(key, id);
  else if (typeof cur === 'string') {
    if (cur !== id) map.set(key, new Set([cur, id]));
  } else cur.add(id);
}

function removeOwner(map: Map<string, Owners>, key: string, id: string): void {
  const cur = map.get(key);
  if (cur === undefined) return;
  if (typeof cur === 'string') {
    if (cur === id) map.delete(key);
    return;
  }
  cur.delete(id);
  if (cur.size === 1) map.set(key, cur.values().next().value!);
  else if (cur.size === 0) map.delete(key);
}

function ownersOf(map: Map<string, Owners>, key: string): Iterable<string> {
  const cur = map.get(key);
  if (cur === undefined) return [];
  return typeof cur === 'string' ? [cur] : cur;
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

export class Index {
  readonly spec: IndexSpec;
  readonly fields: string[];
  readonly unique: boolean;
  readonly sparse: boolean;
  readonly partial: Matcher | undefined;
  /** Usable to narrow arbitrary queries: it contains every document. */
  readonly complete: boolean;
  private readonly full = new Map<string, Owners>();
  private readonly first: Map<string, Owners> | undefined;

  constructor(spec: IndexSpec) {
    this.spec = spec;
    this.fields = Object.keys(spec.key);
    if (this.fields.length === 0) throw new CommandError('BadValue', 'Index keys cannot be empty.');
    this.unique = spec.unique === true;
    this.sparse = spec.sparse === true;
    this.partial = spec.partialFilterExpression ? compileFilter(spec.partialFilterExpression) : undefined;
    this.complete = !this.sparse && !this.partial;
    this.first = this.fields.length > 1 ? new Map() : undefined;
  }

  get ttlSeconds(): number | undefined {
    return this.spec.expireAfterSeconds === undefined ? undefined : toNumber(this.spec.expireAfterSeconds);
  }

  /** Per-field value lists, or null when the document is not part of this index. */
  private fieldValues(view: Doc): unknown[][] | null {
    if (this.partial && !this.partial(view)) return null;
    const perField = this.fields.map((f) => pathValues(view, f));
    if (this.sparse && perField.every((vals) => vals.every((v) => v === undefined))) return null;
    return perField;
  }

  private static combos(perField: unknown[][]): unknown[][] {
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

  private firstKeys(view: Doc): Set<string> {
    const perField = this.fieldValues(view);
    return new Set(perField ? perField[0]!.map(fieldKey) : []);
  }

  add(id: string, view: Doc): void {
    for (const key of this.keysWithValues(view).keys()) addOwner(this.full, key, id);
    if (this.first) for (const key of this.firstKeys(view)) addOwner(this.first, key, id);
  }

  remove(id: string, view: Doc): void {
    for (const key of this.keysWithValues(view).keys()) removeOwner(this.full, key, id);
    if (this.first) for (const key of this.firstKeys(view)) removeOwner(this.first, key, id);
  }

  /**
   * For a unique index: the first key of `view` already owned by a document that `isOther`
   * accepts, as the error MongoDB would raise. `extraOwners` adds uncommitted owners.
   */
  findDuplicate(ns: string, id: string, view: Doc, isOther: (ownerId: string) => boolean, extra?: (key: string) => boolean): CommandError | undefined {
    if (!this.unique) return undefined;
    for (const [key, values] of this.keysWithValues(view)) {
      let clash = false;
      for (const owner of ownersOf(this.full, key)) if (owner !== id && isOther(owner)) clash = true;
      if (!clash && extra) clash = extra(key);
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

  /** Ids whose indexed fields equal `values` (one canonical key per leading field). */
  lookup(valueKeys: string[]): Iterable<string> {
    if (valueKeys.length === this.fields.length) return ownersOf(this.full, valueKeys.join('\u0000'));
    if (valueKeys.length === 1) return ownersOf(this.first ?? this.full, valueKeys[0]!);
    throw new Error('index lookup needs the full key or its first field');
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
