// Queries: find/getMore/killCursors, count, distinct and aggregate.
import { CommandError } from '../errors.ts';
import { project, runPipeline } from '../engine.ts';
import { EMPTY_ARRAY, pathValues } from '../paths.ts';
import { countEntries, queryEntries, type QueryOptions } from '../query.ts';
import type { Pending, Result } from '../cursors.ts';
import { compareValues, decodeView, isPlainObject, keyOf, promote, toNumber, type Doc } from '../values.ts';
import { ProjectedDoc, rawProjection } from '../raw-read.ts';
import { RawDoc } from '../wire.ts';
import { collectionName, optionalDoc, readable, type CommandContext, type Handler } from './context.ts';

function find(ctx: CommandContext): Doc {
  const coll = collectionName(ctx, 'find');
  const { cmd } = ctx;
  let limit = cmd.limit === undefined ? 0 : toNumber(cmd.limit);
  let singleBatch = cmd.singleBatch === true;
  if (limit < 0) {
    limit = -limit;
    singleBatch = true;
  }
  const entries = queryEntries(readable(ctx, coll), optionalDoc(cmd.filter, 'filter'), {
    sort: optionalDoc(cmd.sort, 'sort'),
    skip: cmd.skip === undefined ? 0 : toNumber(cmd.skip),
    limit,
  });
  const projection = optionalDoc(cmd.projection, 'projection');
  // Without a projection the stored bytes are the answer: no decoding, no encoding. A list of fields to keep is cut
  // out of them as each batch is sent (raw-read.ts); other projections decode the documents.
  let docs: Pending[];
  if (!projection || Object.keys(projection).length === 0) docs = entries.map((e) => new RawDoc(e.raw));
  else {
    const fields = rawProjection(projection);
    docs = fields ? entries.map((e) => new ProjectedDoc(e.raw, fields, () => project([e.doc], projection)[0]!)) : project(entries.map((e) => e.doc), projection);
  }
  return { cursor: ctx.state.cursors.start(`${ctx.db}.${coll}`, docs, cmd.batchSize, singleBatch), ok: 1 };
}

function getMore(ctx: CommandContext): Doc {
  const coll = collectionName(ctx, 'collection');
  return { cursor: ctx.state.cursors.more(ctx.cmd.getMore, `${ctx.db}.${coll}`, ctx.cmd.batchSize), ok: 1 };
}

function killCursors(ctx: CommandContext): Doc {
  const ids = Array.isArray(ctx.cmd.cursors) ? ctx.cmd.cursors : [];
  const { killed, notFound } = ctx.state.cursors.kill(ids);
  return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 };
}

function count(ctx: CommandContext): Doc {
  const coll = collectionName(ctx, 'count');
  const { cmd } = ctx;
  const n = countEntries(readable(ctx, coll), optionalDoc(cmd.query, 'query'), {
    skip: cmd.skip === undefined ? 0 : toNumber(cmd.skip),
    limit: cmd.limit === undefined ? 0 : Math.abs(toNumber(cmd.limit)),
  });
  return { n, ok: 1 };
}

function distinct(ctx: CommandContext): Doc {
  const coll = collectionName(ctx, 'distinct');
  const key = ctx.cmd.key;
  if (typeof key !== 'string') throw new CommandError('TypeMismatch', 'distinct key must be a string');
  const seen = new Map<string, unknown>();
  for (const e of queryEntries(readable(ctx, coll), optionalDoc(ctx.cmd.query, 'query'))) {
    for (const v of pathValues(e.doc, key)) {
      if (v === undefined || v === EMPTY_ARRAY) continue;
      const k = keyOf(promote(v));
      if (!seen.has(k)) seen.set(k, v);
    }
  }
  const values = [...seen.values()].sort((a, b) => compareValues(promote(a), promote(b)));
  return { values, ok: 1 };
}

/** Leading $match/$sort/$skip/$limit run on the index-aware query path instead of in mingo. */
function splitPipeline(stages: Doc[]): { filter: Doc | undefined; opts: QueryOptions; rest: Doc[] } {
  let i = 0;
  let filter: Doc | undefined;
  const opts: QueryOptions = {};
  if (isPlainObject(stages[0]?.$match)) {
    filter = stages[0].$match;
    i = 1;
  }
  if (filter !== undefined) {
    if (isPlainObject(stages[i]?.$sort)) opts.sort = stages[i++]!.$sort as Doc;
    if (stages[i]?.$skip !== undefined) opts.skip = toNumber(stages[i++]!.$skip);
    if (stages[i]?.$limit !== undefined) opts.limit = toNumber(stages[i++]!.$limit);
  }
  return { filter, opts, rest: stages.slice(i) };
}

/** countDocuments' `{$group: {_id: 1, n: {$sum: 1}}}` needs no documents, only their number. */
function countOnlyGroup(rest: Doc[]): Doc | undefined {
  const group = rest.length === 1 ? rest[0]!.$group : undefined;
  if (!isPlainObject(group)) return undefined;
  const id = group._id;
  if (typeof id === 'string' && id.startsWith('$')) return undefined;
  if (isPlainObject(id) || Array.isArray(id)) return undefined;
  for (const [k, v] of Object.entries(group)) {
    if (k === '_id') continue;
    if (!isPlainObject(v) || Object.keys(v).length !== 1 || toNumber(v.$sum, NaN) !== 1) return undefined;
  }
  return group;
}

function aggregate(ctx: CommandContext): Doc {
  const { cmd } = ctx;
  if (typeof cmd.aggregate !== 'string') throw new CommandError('BadValue', 'devdb supports collection aggregations only');
  const coll = cmd.aggregate;
  if (!Array.isArray(cmd.pipeline) || !cmd.pipeline.every(isPlainObject)) throw new CommandError('TypeMismatch', "'pipeline' option must be specified as an array");
  const stages = cmd.pipeline;
  for (const s of stages) if ('$out' in s || '$merge' in s) throw new CommandError('BadValue', '$out and $merge are not supported by devdb');
  const cursorOpts = optionalDoc(cmd.cursor, 'cursor') ?? {};
  const { filter, opts, rest } = splitPipeline(stages);
  let out: Result[];
  const group = countOnlyGroup(rest);
  if (group) {
    out = [];
    const n = countEntries(readable(ctx, coll), filter, opts);
    if (n > 0) {
      const doc: Doc = { _id: group._id ?? null };
      for (const k of Object.keys(group)) if (k !== '_id') doc[k] = n;
      out.push(doc);
    }
    return { cursor: ctx.state.cursors.start(`${ctx.db}.${coll}`, out, cursorOpts.batchSize), ok: 1 };
  }
  const entries = queryEntries(readable(ctx, coll), filter, opts);
  if (rest.length === 0) {
    out = entries.map((e) => new RawDoc(e.raw));
  } else {
    // Fresh decodes: the pipeline may change the documents it is given.
    const resolve = (name: string): Doc[] => queryEntries(readable(ctx, name), undefined).map((e) => decodeView(e.raw));
    out = runPipeline(
      entries.map((e) => decodeView(e.raw)),
      rest,
      resolve,
    );
  }
  return { cursor: ctx.state.cursors.start(`${ctx.db}.${coll}`, out, cursorOpts.batchSize), ok: 1 };
}

export const readCommands: Record<string, Handler> = { find, getMore, killCursors, count, distinct, aggregate };
