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
import { badValue } from './errors.ts';
import { promote, type Doc } from './values.ts';

const context = Context.init({
  accumulator,
  expression: { ...expression, $dateTrunc },
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

/** Compiles a filter against promoted views; filter values are promoted the same way. */
export function compileFilter(filter: Doc | undefined): Matcher {
  if (!filter || Object.keys(filter).length === 0) return matchAll;
  if ('$text' in filter) throw badValue('$text is not supported by devdb (no text indexes)');
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

export function runPipeline(docs: Doc[], stages: Doc[], resolveCollection?: (name: string) => Doc[]): Doc[] {
  const agg = new Aggregator(promote(stages) as Doc[], options(resolveCollection ? { collectionResolver: resolveCollection } : {}));
  return agg.run(docs);
}

export function project(docs: Doc[], spec: Doc): Doc[] {
  return new Query({}, options()).find<Doc>(docs, spec).all();
}
