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
import { writeCommands } from './write.ts';

const handlers = new Map<string, Handler>(Object.entries({ ...adminCommands, ...ddlCommands, ...readCommands, ...writeCommands }));
const byLowerCase = new Map<string, Handler>([...handlers].map(([name, h]) => [name.toLowerCase(), h]));
const TXN_CONTROL = new Set(['commitTransaction', 'abortTransaction']);

export type { ServerState } from './context.ts';

function transactionFor(state: ServerState, name: string, cmd: Doc): Transaction | undefined {
  if (cmd.autocommit !== false || TXN_CONTROL.has(name)) return undefined;
  const session = sessionKey(cmd.lsid);
  if (!session || cmd.txnNumber === undefined) throw new CommandError('BadValue', 'autocommit:false requires lsid and txnNumber');
  const txnNumber = txnNumberOf(cmd.txnNumber);
  return cmd.startTransaction === true ? state.sessions.begin(session, txnNumber) : state.sessions.active(session, txnNumber);
}

export function runCommand(state: ServerState, cmd: Doc, connectionId: number, defaultDb = 'admin'): Doc {
  const name = Object.keys(cmd)[0];
  const db = typeof cmd.$db === 'string' ? cmd.$db : defaultDb;
  let txn: Transaction | undefined;
  try {
    const handler = name === undefined ? undefined : (handlers.get(name) ?? byLowerCase.get(name.toLowerCase()));
    if (!handler) throw new CommandError('CommandNotFound', `no such command: '${name ?? ''}'`);
    txn = transactionFor(state, name!, cmd);
    refuseUnsupported(state, db, name!, cmd);
    const reply = handler({ state, db, cmd, connectionId, txn });
    // MongoDB aborts a transaction whose statement failed; later statements see NoSuchTransaction.
    if (txn && Array.isArray(reply.writeErrors) && reply.writeErrors.length > 0) txn.abort();
    return reply;
  } catch (err) {
    txn?.abort();
    return toCommandError(err).toReply();
  }
}
