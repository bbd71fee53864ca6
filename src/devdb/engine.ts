// The one place that talks to mingo. A private Context holds every mingo operator plus devdb's
// own $dateTrunc; mingo ignores re-registration, so the default context could not be patched.
import { Context } from 'mingo/core';
import { Query } from 'mingo/query';
import { Aggregator } from 'mingo/aggregator';
import { update as mingoUpdate } from 'mingo/updater';
import type { Options } from 'mingo/types';
import * as accumulator from 'mingo/operators/accumulator';
import * as expression from 'mingo/operators/expression';
import * as pipeline from 'mingo/operators/pipeline';
import * as projection from 'mingo/operators/projection';
import * as query from 'mingo/operators/query';
import * as window from 'mingo/operators/window';
import { $dateTrunc } from './dateTrunc.ts';
import { badValue, CommandError } from './errors.ts';
import { $switch, $sum } from './operators.ts';
import { ObjectId } from 'bson';
import { pathValues } from './paths.ts';
import { isPlainObject, keyOf, promote, type Doc } from './values.ts';

const context = Context.init({
  accumulator: { ...accumulator, $sum },
  expression: { ...expression, $dateTrunc, $switch },
  pipeline,
  projection,
  query,
  window,
});

function options(extra: Partial<Options> = {}): Partial<Options> {
  return { context, ...extra };
}

export type Matcher = (view: Doc) => boolean;

const matchAll: Matcher = () => true;

function scalar(v: unknown): boolean {
  return v === null || typeof v === 'string' || (typeof v === 'number' && !Number.isNaN(v)) || typeof v === 'boolean' || v instanceof Date || v instanceof ObjectId;
}

/**
 * Filters made only of field equalities and `$in` lists of scalars (`{_id: {$in: ids}}`, `{link_id, counted: false}`)
 * match through one Set lookup per value: mingo's `$in` rebuilds a set of the whole list for every document.
 */
function equalityMatcher(filter: Doc): Matcher | undefined {
  const conds: [string, Set<string>][] = [];
  for (const [field, raw] of Object.entries(filter)) {
    if (field.startsWith('$')) return undefined;
    const cond = promote(raw);
    let values: unknown[];
    if (scalar(cond)) values = [cond];
    else if (isPlainObject(cond) && Object.keys(cond).length === 1 && '$eq' in cond && scalar(cond.$eq)) values = [cond.$eq];
    else if (isPlainObject(cond) && Object.keys(cond).length === 1 && Array.isArray(cond.$in) && cond.$in.every(scalar)) values = cond.$in;
    else return undefined;
    conds.push([field, new Set(values.map(keyOf))]);
  }
  return (view) => conds.every(([field, keys]) => pathValues(view, field).some((v) => keys.has(keyOf(v))));
}

/** Compiles a filter against promoted views; filter values are promoted the same way. */
export function compileFilter(filter: Doc | undefined): Matcher {
  if (!filter || Object.keys(filter).length === 0) return matchAll;
  if ('$text' in filter) throw badValue('$text is not supported by devdb (no text indexes)');
  const fast = equalityMatcher(filter);
  if (fast) return fast;
  const q = new Query(promote(filter) as Doc, options());
  return (view) => q.test(view);
}

/**
 * Applies operator-style updates in place (the caller passes a private copy). `condition` lets
 * mingo resolve the positional `$` operator. Returns the changed paths.
 */
export function applyUpdateOperators(doc: Doc, modifier: Doc, condition: Doc | undefined, arrayFilters?: Doc[]): string[] {
  return mingoUpdate(doc, modifier, arrayFilters, condition ? (promote(condition) as Doc) : undefined, {
    cloneMode: 'deep',
    queryOptions: options(),
  });
}

/**
 * MongoDB's refusal of a projection that mixes inclusion and exclusion (other than `_id: 0`): 31254 for an
 * exclusion in an inclusion projection, 31253 for the other way round, naming the field.
 */
export function checkProjection(spec: Doc): void {
  let mode: 'inclusion' | 'exclusion' | undefined;
  const visit = (fields: Doc, prefix: string) => {
    for (const [k, raw] of Object.entries(fields)) {
      const path = prefix + k;
      if (path === '_id') continue;
      const v = promote(raw);
      let kind: 'inclusion' | 'exclusion' | undefined;
      if (typeof v === 'number' || typeof v === 'boolean') kind = v ? 'inclusion' : 'exclusion';
      else if (isPlainObject(v) && Object.keys(v).length > 0 && !Object.keys(v).some((x) => x.startsWith('$'))) {
        visit(v, `${path}.`);
        continue;
      } else if (isPlainObject(v) && ('$slice' in v || '$elemMatch' in v || '$meta' in v)) continue;
      else kind = 'inclusion';
      if (mode === undefined) mode = kind;
      else if (mode !== kind) {
        throw kind === 'exclusion'
          ? new CommandError('Location31254', `Cannot do exclusion on field ${path} in inclusion projection`)
          : new CommandError('Location31253', `Cannot do inclusion on field ${path} in exclusion projection`);
      }
    }
  };
  visit(spec, '');
}

export function runPipeline(docs: Doc[], stages: Doc[], resolveCollection?: (name: string) => Doc[]): Doc[] {
  for (const stage of stages) if (isPlainObject(stage.$project)) checkProjection(stage.$project);
  const agg = new Aggregator(promote(stages) as Doc[], options(resolveCollection ? { collectionResolver: resolveCollection } : {}));
  return agg.run(docs);
}

export function project(docs: Doc[], spec: Doc): Doc[] {
  checkProjection(spec);
  return new Query({}, options()).find<Doc>(docs, spec).all();
}
