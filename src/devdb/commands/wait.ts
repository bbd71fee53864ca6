// A write outside a transaction to a document a running transaction has written waits for that transaction to
// commit or abort, as on MongoDB (where it is retried on its WriteConflict until the lock is released), instead of
// going through and making the transaction fail at its commit. Before such a write runs, the documents it would
// touch are found (only while a transaction holds documents of that collection); if one is held, the command is
// not run and its connection waits for the holder's end (server.ts), then runs it again from the start. Nothing of
// it has been written meanwhile, so running it again is safe.
import { queryEntries } from '../query.ts';
import type { Transaction } from '../transactions.ts';
import { isPlainObject, keyOf, promote, toNumber, type Doc } from '../values.ts';
import type { ServerState } from './context.ts';

/** The answer of a command that must wait for `txn` before it runs. */
export class Blocked {
  readonly txn: Transaction;
  constructor(txn: Transaction) {
    this.txn = txn;
  }
}

const TARGET: Record<string, string> = { insert: 'insert', update: 'update', delete: 'delete', findAndModify: 'findAndModify', findandmodify: 'findandmodify' };

function idKey(filter: unknown): string | undefined {
  if (!isPlainObject(filter) || filter._id === undefined) return undefined;
  const id = promote(filter._id);
  return isPlainObject(id) || Array.isArray(id) ? undefined : keyOf(id);
}

/** The ids (canonical keys) of the documents a write command would write first, statement by statement. */
function* targets(state: ServerState, db: string, name: string, coll: string, cmd: Doc): Iterable<string> {
  const docs = state.catalog.get(db, coll);
  const matches = (q: unknown, sort: unknown, one: boolean): string[] =>
    docs ? queryEntries(docs, isPlainObject(q) ? q : {}, one ? { limit: 1, sort: isPlainObject(sort) ? sort : undefined } : {}).map((e) => e.id) : [];
  if (name === 'insert') {
    for (const doc of Array.isArray(cmd.documents) ? cmd.documents : []) {
      const id = idKey(doc);
      if (id !== undefined) yield id;
    }
    return;
  }
  if (name === 'update' || name === 'delete') {
    for (const stmt of Array.isArray(cmd[name === 'update' ? 'updates' : 'deletes']) ? (cmd[name === 'update' ? 'updates' : 'deletes'] as unknown[]) : []) {
      if (!isPlainObject(stmt)) continue;
      const one = name === 'update' ? stmt.multi !== true : toNumber(stmt.limit) === 1;
      const ids = matches(stmt.q, stmt.sort, one);
      yield* ids;
      if (ids.length === 0 && stmt.upsert === true) {
        const id = idKey(stmt.q);
        if (id !== undefined) yield id;
      }
    }
    return;
  }
  const ids = matches(cmd.query, cmd.sort, true);
  yield* ids;
  if (ids.length === 0 && cmd.upsert === true) {
    const id = idKey(cmd.query);
    if (id !== undefined) yield id;
  }
}

/** The running transaction a write outside transactions must wait for, if any (expired holders are aborted). */
export function blockingTransaction(state: ServerState, db: string, name: string, cmd: Doc): Transaction | undefined {
  const field = TARGET[name];
  const coll = field === undefined ? undefined : cmd[field];
  if (typeof coll !== 'string') return undefined;
  const ns = `${db}.${coll}`;
  if (!state.sessions.anyLockIn(ns)) return undefined;
  try {
    for (const id of targets(state, db, name, coll, cmd)) {
      const holder = state.sessions.holder(ns, id);
      if (!holder) continue;
      if (holder.expired()) {
        holder.abort();
        continue;
      }
      return holder;
    }
  } catch {
    // A command that cannot be planned is run as it is: it reports its own error.
  }
  return undefined;
}
