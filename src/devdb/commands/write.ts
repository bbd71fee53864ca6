// insert/update/delete (which the driver also uses for bulkWrite) and findAndModify.
import { ObjectId } from 'bson';
import { DocumentTooLarge, MAX_DOCUMENT_BYTES, type DocSet, type Entry } from '../collection.ts';
import { project } from '../engine.ts';
import { CommandError, toCommandError } from '../errors.ts';
import { queryEntries } from '../query.ts';
import { computeUpdate, isOperatorUpdate, validateUpdate } from '../update.ts';
import { rawUpdate } from '../raw-update.ts';
import { checkArrayFilters } from '../update-checks.ts';
import { isPlainObject, toNumber, type Doc } from '../values.ts';
import { collectionName, optionalDoc, readable, writable, type CommandContext, type Handler } from './context.ts';

function prepareInsert(doc: unknown): Doc {
  if (!isPlainObject(doc)) throw new CommandError('BadValue', 'document to insert must be an object');
  if (Array.isArray(doc._id)) throw new CommandError('BadValue', "can't use an array for _id");
  if (doc._id === undefined) return { _id: new ObjectId(), ...doc };
  // MongoDB stores _id as the first field; the driver appends it when it generates one.
  if (Object.keys(doc)[0] !== '_id') {
    const { _id, ...rest } = doc;
    return { _id, ...rest };
  }
  return doc;
}

/**
 * Runs a write, turning a document over 16 MiB into the error MongoDB answers for that kind of write: an insert's
 * BadValue, an update's BSONObjectTooLarge (update, replacement, pipeline update, findAndModify), an upsert's 17420.
 */
function sized<T>(kind: 'insert' | 'update' | 'upsert', write: () => T): T {
  try {
    return write();
  } catch (err) {
    if (!(err instanceof DocumentTooLarge)) throw err;
    if (kind === 'insert') throw new CommandError('BadValue', `object to insert too large. size in bytes: ${err.size ?? 'over 17825792'}, max size: ${MAX_DOCUMENT_BYTES}`);
    if (kind === 'upsert') throw new CommandError('Location17420', `Document to upsert is larger than ${MAX_DOCUMENT_BYTES}`);
    throw new CommandError('BSONObjectTooLarge', `Resulting document after update is larger than ${MAX_DOCUMENT_BYTES}`);
  }
}

/** Runs each statement; ordered batches stop at the first error, like MongoDB. */
function eachStatement(ctx: CommandContext, items: unknown[], run: (item: Doc, index: number) => void): Doc[] {
  const ordered = ctx.cmd.ordered !== false;
  const writeErrors: Doc[] = [];
  items.forEach((item, index) => {
    if (ordered && writeErrors.length > 0) return;
    try {
      if (!isPlainObject(item)) throw new CommandError('BadValue', 'each statement must be an object');
      run(item, index);
    } catch (err) {
      const error = toCommandError(err);
      // Transaction errors (WriteConflict, ...) fail the whole command so their labels reach the driver.
      if (error.labels.length > 0) throw error;
      writeErrors.push(error.toWriteError(index));
    }
  });
  return writeErrors;
}

function withErrors(reply: Doc, writeErrors: Doc[]): Doc {
  if (writeErrors.length > 0) reply.writeErrors = writeErrors;
  reply.ok = 1;
  return reply;
}

function statements(ctx: CommandContext, field: string): unknown[] {
  const items = ctx.cmd[field];
  if (!Array.isArray(items)) throw new CommandError('FailedToParse', `BSON field '${field}' is missing or not an array`);
  return items;
}

function insert(ctx: CommandContext): Doc {
  const coll = collectionName(ctx, 'insert');
  const docs = statements(ctx, 'documents');
  const target = writable(ctx, coll);
  let n = 0;
  const writeErrors = eachStatement(ctx, docs, (doc) => {
    sized('insert', () => target.insert(prepareInsert(doc)));
    n++;
  });
  return withErrors({ n }, writeErrors);
}

function update(ctx: CommandContext): Doc {
  const coll = collectionName(ctx, 'update');
  const updates = statements(ctx, 'updates');
  let n = 0;
  let nModified = 0;
  const upserted: Doc[] = [];
  const writeErrors = eachStatement(ctx, updates, (stmt, index) => {
    const u = validateUpdate(stmt.u);
    const multi = stmt.multi === true;
    if (multi && !Array.isArray(u) && !isOperatorUpdate(u)) throw new CommandError('FailedToParse', 'multi update is not supported for replacement-style update');
    const q = optionalDoc(stmt.q, 'q') ?? {};
    const arrayFilters = Array.isArray(stmt.arrayFilters) ? (stmt.arrayFilters as Doc[]) : undefined;
    checkArrayFilters(u, arrayFilters);
    const existing = readable(ctx, coll);
    const matched = queryEntries(existing, q, multi ? {} : { limit: 1, sort: optionalDoc(stmt.sort, 'sort') });
    if (matched.length === 0) {
      if (stmt.upsert !== true) return;
      const outcome = computeUpdate(undefined, undefined, u, q, arrayFilters);
      const entry = sized('upsert', () => writable(ctx, coll).insert(outcome.doc));
      upserted.push({ index, _id: entry.doc._id });
      n++;
      return;
    }
    const target = existing!;
    for (const e of matched) {
      target.claim(e);
      // Counters and flags are changed in the stored bytes, without decoding the document (raw-update.ts).
      const raw = arrayFilters ? undefined : rawUpdate(e.raw, u);
      if (raw) {
        n++;
        if (raw.modified) {
          sized('update', () => target.replaceRaw(e, raw.raw, raw.fields));
          nModified++;
        }
        continue;
      }
      const outcome = computeUpdate(e.doc, e.view, u, q, arrayFilters);
      n++;
      if (outcome.modified) {
        sized('update', () => target.replace(e, outcome.doc));
        nModified++;
      }
    }
  });
  const reply: Doc = { n, nModified };
  if (upserted.length > 0) reply.upserted = upserted;
  return withErrors(reply, writeErrors);
}

function remove(ctx: CommandContext): Doc {
  const coll = collectionName(ctx, 'delete');
  const deletes = statements(ctx, 'deletes');
  let n = 0;
  const writeErrors = eachStatement(ctx, deletes, (stmt) => {
    const docs = readable(ctx, coll);
    if (!docs) return;
    const limit = toNumber(stmt.limit);
    for (const e of queryEntries(docs, optionalDoc(stmt.q, 'q') ?? {}, limit === 1 ? { limit: 1 } : {})) {
      docs.remove(e);
      n++;
    }
  });
  return withErrors({ n }, writeErrors);
}

function findAndModify(ctx: CommandContext): Doc {
  const { cmd } = ctx;
  const coll = collectionName(ctx, 'findAndModify' in cmd ? 'findAndModify' : 'findandmodify');
  const query = optionalDoc(cmd.query, 'query') ?? {};
  const existing = readable(ctx, coll);
  const [matched] = queryEntries(existing, query, { sort: optionalDoc(cmd.sort, 'sort'), limit: 1 });
  const returnNew = cmd.new === true;
  let value: Doc | null = null;
  let lastErrorObject: Doc;
  if (cmd.remove === true) {
    if (cmd.update !== undefined) throw new CommandError('FailedToParse', 'Cannot specify both an update and remove=true');
    if (matched) {
      existing!.remove(matched);
      value = matched.doc;
    }
    lastErrorObject = { n: matched ? 1 : 0 };
  } else {
    if (cmd.update === undefined) throw new CommandError('FailedToParse', 'Either an update or remove=true must be specified');
    const u = validateUpdate(cmd.update);
    const arrayFilters = Array.isArray(cmd.arrayFilters) ? (cmd.arrayFilters as Doc[]) : undefined;
    checkArrayFilters(u, arrayFilters);
    if (matched) {
      existing!.claim(matched);
      const outcome = computeUpdate(matched.doc, matched.view, u, query, arrayFilters);
      const next: Entry = outcome.modified ? sized('update', () => (existing as DocSet).replace(matched, outcome.doc)) : matched;
      value = returnNew ? next.doc : matched.doc;
      lastErrorObject = { n: 1, updatedExisting: true };
    } else if (cmd.upsert === true) {
      const outcome = computeUpdate(undefined, undefined, u, query, arrayFilters);
      const entry = sized('upsert', () => writable(ctx, coll).insert(outcome.doc));
      value = returnNew ? entry.doc : null;
      lastErrorObject = { n: 1, updatedExisting: false, upserted: entry.doc._id };
    } else {
      lastErrorObject = { n: 0, updatedExisting: false };
    }
  }
  const fields = optionalDoc(cmd.fields, 'fields');
  if (value && fields && Object.keys(fields).length > 0) value = project([value], fields)[0] ?? null;
  return { lastErrorObject, value, ok: 1 };
}

export const writeCommands: Record<string, Handler> = {
  insert,
  update,
  delete: remove,
  findAndModify,
  findandmodify: findAndModify,
};
