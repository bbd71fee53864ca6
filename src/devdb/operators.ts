// Operators devdb registers in place of mingo's, where mingo's answer differs from MongoDB's.
import { Long } from 'bson';
import { evalExpr } from 'mingo/core';
import { $push } from 'mingo/operators/accumulator';
import type { Options } from 'mingo/types';
import { CommandError } from './errors.ts';
import { isPlainObject, truthy } from './values.ts';

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

/** $switch: with no branch matching and no default, MongoDB fails (40066) where mingo answers nothing. */
export function $switch(obj: unknown, expr: unknown, options: Options): unknown {
  if (!isPlainObject(expr) || !Array.isArray(expr.branches)) throw new CommandError('Location40066', '$switch requires at least one branch.');
  for (const branch of expr.branches as unknown[]) {
    if (!isPlainObject(branch)) continue;
    if (truthy(evalExpr(obj, branch.case, options))) return evalExpr(obj, branch.then, options);
  }
  if (!('default' in expr)) throw new CommandError('Location40066', '$switch could not find a matching branch for an input, and no default was specified.');
  return evalExpr(obj, expr.default, options);
}

/**
 * $sum (accumulator, and the expression over an array): integers whose sum leaves the 32-bit range give a 64-bit
 * integer (a Long), as MongoDB does, rather than a double. Non-numbers are skipped.
 */
export function $sum(coll: unknown[], expr: unknown, options: Options): unknown {
  const values = typeof expr === 'number' ? coll.map(() => expr) : ($push(coll, expr, options));
  let sum = 0;
  let integral = true;
  for (const v of values) {
    if (typeof v !== 'number') continue;
    sum += v;
    if (!Number.isInteger(v)) integral = false;
  }
  if (integral && (sum < INT32_MIN || sum > INT32_MAX) && Number.isSafeInteger(sum)) return Long.fromNumber(sum);
  return sum;
}
