// Collection and index management. These act on committed state directly, even inside a
// transaction, as MongoDB only allows them outside transactions anyway.
import type { Collection } from '../collection.ts';
import { compileFilter } from '../engine.ts';
import { CommandError } from '../errors.ts';
import type { IndexSpec } from '../indexes.ts';
import { isPlainObject, type Doc } from '../values.ts';
import { collectionName, optionalDoc, type CommandContext, type Handler } from './context.ts';

const IGNORED_INDEX_OPTIONS = new Set(['background', 'ns', 'v']);

function existing(ctx: CommandContext, field: string): Collection {
  const name = collectionName(ctx, field);
  const coll = ctx.state.catalog.get(ctx.db, name);
  if (!coll) throw new CommandError('NamespaceNotFound', `ns does not exist: ${ctx.db}.${name}`);
  return coll;
}

function normalizeIndexSpec(raw: unknown): IndexSpec {
  if (!isPlainObject(raw) || !isPlainObject(raw.key) || Object.keys(raw.key).length === 0) {
    throw new CommandError('BadValue', 'index specification must contain a non-empty key document');
  }
  const spec: IndexSpec = { key: raw.key, name: typeof raw.name === 'string' ? raw.name : '' };
  for (const [k, v] of Object.entries(raw)) if (!(k in spec) && !IGNORED_INDEX_OPTIONS.has(k) && v !== undefined) spec[k] = v;
  if (spec.unique === false) delete spec.unique;
  if (spec.sparse === false) delete spec.sparse;
  if (spec.partialFilterExpression !== undefined && !isPlainObject(spec.partialFilterExpression)) {
    throw new CommandError('BadValue', 'partialFilterExpression must be an object');
  }
  return spec;
}

function createIndexes(ctx: CommandContext): Doc {
  const name = collectionName(ctx, 'createIndexes');
  if (!Array.isArray(ctx.cmd.indexes) || ctx.cmd.indexes.length === 0) throw new CommandError('BadValue', 'Must specify at least one index to create');
  if (ctx.txn) {
    // As MongoDB: only on a collection the transaction creates, and visible to others only once it commits.
    if (ctx.state.catalog.get(ctx.db, name)) {
      throw new CommandError('OperationNotSupportedInTransaction', `Cannot create new indexes on existing collection ${ctx.db}.${name} in a multi-document transaction.`);
    }
    const created = ctx.txn.createCollection(ctx.db, name);
    const specs = ctx.cmd.indexes.map(normalizeIndexSpec);
    ctx.txn.addIndexes(ctx.db, name, specs);
    return { createdCollectionAutomatically: created, numIndexesBefore: 1, numIndexesAfter: 1 + specs.length, ok: 1 };
  }
  const created = ctx.state.catalog.get(ctx.db, name) === undefined;
  const coll = ctx.state.catalog.getOrCreate(ctx.db, name);
  const before = coll.indexSpecs().length;
  const specs = ctx.cmd.indexes.map(normalizeIndexSpec);
  let added = 0;
  for (const spec of specs) if (coll.createIndex(spec)) added++;
  const reply: Doc = { createdCollectionAutomatically: created, numIndexesBefore: before, numIndexesAfter: coll.indexSpecs().length, ok: 1 };
  if (added === 0) reply.note = 'all indexes already exist';
  return reply;
}

function listIndexes(ctx: CommandContext): Doc {
  const coll = existing(ctx, 'listIndexes');
  const specs = coll.indexSpecs().map((s) => ({ v: 2, ...s }));
  const batchSize = (optionalDoc(ctx.cmd.cursor, 'cursor') ?? {}).batchSize;
  return { cursor: ctx.state.cursors.start(`${ctx.db}.$cmd.listIndexes.${coll.name}`, specs, batchSize), ok: 1 };
}

function dropIndexes(ctx: CommandContext): Doc {
  const coll = existing(ctx, 'dropIndexes');
  const was = coll.indexSpecs().length;
  const target = ctx.cmd.index;
  if (target === '*') {
    for (const spec of coll.indexSpecs().slice(1)) coll.dropIndex(spec.name);
    return { nIndexesWas: was, msg: 'non-_id indexes dropped for collection', ok: 1 };
  }
  if (typeof target === 'string') coll.dropIndex(target);
  else if (Array.isArray(target)) for (const name of target) coll.dropIndex(String(name));
  else if (isPlainObject(target)) {
    const index = coll.findIndexByKey(target);
    if (!index) throw new CommandError('IndexNotFound', `can't find index with key: ${JSON.stringify(target)}`);
    coll.dropIndex(index.spec.name);
  } else throw new CommandError('BadValue', 'dropIndexes needs an index name, key pattern or "*"');
  return { nIndexesWas: was, ok: 1 };
}

function collectionInfo(coll: Collection, nameOnly: boolean): Doc {
  if (nameOnly) return { name: coll.name, type: 'collection' };
  return { name: coll.name, type: 'collection', options: {}, info: { readOnly: false, uuid: coll.uuid }, idIndex: { v: 2, key: { _id: 1 }, name: '_id_' } };
}

function listCollections(ctx: CommandContext): Doc {
  const nameOnly = ctx.cmd.nameOnly === true;
  const match = compileFilter(optionalDoc(ctx.cmd.filter, 'filter'));
  const infos = ctx.state.catalog
    .collections(ctx.db)
    .map((c) => collectionInfo(c, nameOnly))
    .filter((info) => match(info))
    .sort((a, b) => String(a.name).localeCompare(String(b.name)));
  const batchSize = (optionalDoc(ctx.cmd.cursor, 'cursor') ?? {}).batchSize;
  return { cursor: ctx.state.cursors.start(`${ctx.db}.$cmd.listCollections`, infos, batchSize), ok: 1 };
}

function create(ctx: CommandContext): Doc {
  const name = collectionName(ctx, 'create');
  if (ctx.txn) {
    // Created at commit: until then only the transaction sees it (MongoDB refuses an existing name there).
    if (ctx.state.catalog.get(ctx.db, name) || !ctx.txn.createCollection(ctx.db, name)) {
      throw new CommandError('NamespaceExists', `Collection ${ctx.db}.${name} already exists.`);
    }
    return { ok: 1 };
  }
  // MongoDB 7 treats re-creating an existing plain collection as success.
  if (!ctx.state.catalog.get(ctx.db, name)) ctx.state.catalog.create(ctx.db, name);
  return { ok: 1 };
}

function drop(ctx: CommandContext): Doc {
  const name = collectionName(ctx, 'drop');
  const coll = ctx.state.catalog.drop(ctx.db, name);
  return coll ? { ns: coll.ns, nIndexesWas: coll.indexSpecs().length, ok: 1 } : { ok: 1 };
}

function dropDatabase(ctx: CommandContext): Doc {
  ctx.state.catalog.dropDatabase(ctx.db);
  return { dropped: ctx.db, ok: 1 };
}

function splitNs(ns: unknown): [string, string] {
  if (typeof ns !== 'string' || !ns.includes('.')) throw new CommandError('BadValue', `Invalid namespace specified '${String(ns)}'`);
  const i = ns.indexOf('.');
  return [ns.slice(0, i), ns.slice(i + 1)];
}

function renameCollection(ctx: CommandContext): Doc {
  const [fromDb, fromName] = splitNs(ctx.cmd.renameCollection);
  const [toDb, toName] = splitNs(ctx.cmd.to);
  const { catalog } = ctx.state;
  const source = catalog.get(fromDb, fromName);
  if (!source) throw new CommandError('NamespaceNotFound', `Source collection ${fromDb}.${fromName} does not exist`);
  if (catalog.get(toDb, toName)) {
    if (ctx.cmd.dropTarget !== true) throw new CommandError('NamespaceExists', `target namespace exists`);
    catalog.drop(toDb, toName);
  }
  const target = catalog.create(toDb, toName);
  for (const spec of source.indexSpecs().slice(1)) target.createIndex(spec);
  for (const e of source.docs.values()) target.attach(e);
  catalog.drop(fromDb, fromName);
  return { ok: 1 };
}

function dbStats(ctx: CommandContext): Doc {
  const colls = ctx.state.catalog.collections(ctx.db);
  const objects = colls.reduce((n, c) => n + c.size, 0);
  const indexes = colls.reduce((n, c) => n + c.indexSpecs().length, 0);
  return { db: ctx.db, collections: colls.length, views: 0, objects, indexes, dataSize: objects * 256, storageSize: objects * 256, ok: 1 };
}

export const ddlCommands: Record<string, Handler> = {
  createIndexes,
  listIndexes,
  dropIndexes,
  deleteIndexes: dropIndexes,
  listCollections,
  create,
  drop,
  dropDatabase,
  renameCollection,
  dbStats,
};

