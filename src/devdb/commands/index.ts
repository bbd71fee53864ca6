// Command dispatch: finds the handler, attaches the statement to its transaction, and turns
// every failure into an `{ok: 0}` reply so a bad command never takes the server down.
import { CommandError, toCommandError } from '../errors.ts';
import { sessionKey, txnNumberOf } from '../sessions.ts';
import type { Transaction } from '../transactions.ts';
import type { Doc } from '../values.ts';
import { adminCommands } from './admin.ts';
import type { Handler, ServerState } from './context.ts';
import { ddlCommands } from './ddl.ts';
import { readCommands } from './read.ts';
import { refuseUnsupported } from './refusals.ts';
import { Blocked, blockingTransaction } from './wait.ts';
import { writeCommands } from './write.ts';

const handlers = new Map<string, Handler>(Object.entries({ ...adminCommands, ...ddlCommands, ...readCommands, ...writeCommands }));
const byLowerCase = new Map<string, Handler>([...handlers].map(([name, h]) => [name.toLowerCase(), h]));
const TXN_CONTROL = new Set(['commitTransaction', 'abortTransaction']);
/** What MongoDB runs inside a multi-document transaction; anything else is OperationNotSupportedInTransaction (263). */
const IN_TRANSACTION = new Set(['find', 'getMore', 'killCursors', 'insert', 'update', 'delete', 'findAndModify', 'findandmodify', 'aggregate', 'distinct', 'create', 'createIndexes']);

export type { ServerState } from './context.ts';
export { Blocked } from './wait.ts';

function transactionFor(state: ServerState, name: string, cmd: Doc): Transaction | undefined {
  if (cmd.autocommit !== false || TXN_CONTROL.has(name)) return undefined;
  const session = sessionKey(cmd.lsid);
  if (!session || cmd.txnNumber === undefined) throw new CommandError('BadValue', 'autocommit:false requires lsid and txnNumber');
  const txnNumber = txnNumberOf(cmd.txnNumber);
  return cmd.startTransaction === true ? state.sessions.begin(session, txnNumber) : state.sessions.active(session, txnNumber);
}

/**
 * The command's reply, or Blocked when it is a write outside a transaction to a document a running transaction has
 * written: it has not run, and is to be run again once that transaction has ended (see wait.ts).
 */
export function runCommand(state: ServerState, cmd: Doc, connectionId: number, defaultDb = 'admin'): Doc | Blocked {
  const name = Object.keys(cmd)[0];
  const db = typeof cmd.$db === 'string' ? cmd.$db : defaultDb;
  let txn: Transaction | undefined;
  try {
    const handler = name === undefined ? undefined : (handlers.get(name) ?? byLowerCase.get(name.toLowerCase()));
    if (!handler) throw new CommandError('CommandNotFound', `no such command: '${name ?? ''}'`);
    txn = transactionFor(state, name!, cmd);
    if (txn && !IN_TRANSACTION.has(name!)) throw new CommandError('OperationNotSupportedInTransaction', `Cannot run '${name!}' in a multi-document transaction.`);
    refuseUnsupported(state, db, name!, cmd);
    if (!txn) {
      const holder = blockingTransaction(state, db, name!, cmd);
      if (holder) return new Blocked(holder);
    }
    const reply = handler({ state, db, cmd, connectionId, txn });
    // MongoDB aborts a transaction whose statement failed; later statements see NoSuchTransaction.
    if (txn && Array.isArray(reply.writeErrors) && reply.writeErrors.length > 0) txn.abort();
    return reply;
  } catch (err) {
    txn?.abort();
    return toCommandError(err).toReply();
  }
}
