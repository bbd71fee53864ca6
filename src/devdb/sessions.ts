// Logical sessions as the driver sees them: the session id (lsid) plus the transaction number
// it increments per transaction. Only sessions that run transactions need server state.
import { Binary, Long } from 'bson';
import type { Catalog } from './catalog.ts';
import { transient } from './errors.ts';
import { Transaction } from './transactions.ts';
import { toNumber, type Doc } from './values.ts';

export function sessionKey(lsid: unknown): string | undefined {
  const id = (lsid as Doc | undefined)?.id;
  return id instanceof Binary ? Buffer.from(id.buffer).toString('hex') : undefined;
}

export function txnNumberOf(v: unknown): string {
  return v instanceof Long ? v.toString() : String(toNumber(v));
}

export class Sessions {
  private readonly catalog: Catalog;
  private readonly current = new Map<string, Transaction>();
  private readonly locks = new Map<string, Transaction>();
  /**
   * MongoDB's `transactionLifetimeLimitSeconds` (60 by default; `setParameter` changes it): a transaction older than
   * this is aborted when another one needs a document it holds. Without it, a client that died inside a transaction
   * (a SIGKILLed worker) would hold its documents for ever and every later writer of them would conflict.
   */
  readonly limits: { transactionLifetimeMs: number } = { transactionLifetimeMs: 60_000 };

  constructor(catalog: Catalog) {
    this.catalog = catalog;
  }

  /** Whether a transaction holds a document of `ns` (then writes outside transactions check theirs: holder). */
  anyLockIn(ns: string): boolean {
    if (this.locks.size === 0) return false;
    const prefix = `${ns}\u0000`;
    for (const key of this.locks.keys()) if (key.startsWith(prefix)) return true;
    return false;
  }

  /** The active transaction that has written the document `id` (a canonical key) of `ns`, if any. */
  holder(ns: string, id: string): Transaction | undefined {
    const txn = this.locks.get(`${ns}\u0000${id}`);
    return txn?.state === 'active' ? txn : undefined;
  }

  begin(session: string, txnNumber: string): Transaction {
    this.current.get(session)?.abort();
    const txn = new Transaction(this.catalog, this.locks, txnNumber, this.limits);
    this.current.set(session, txn);
    return txn;
  }

  /** The running transaction a statement belongs to; anything else is NoSuchTransaction. */
  active(session: string, txnNumber: string): Transaction {
    const txn = this.current.get(session);
    if (!txn || txn.txnNumber !== txnNumber || txn.state !== 'active') {
      throw transient('NoSuchTransaction', `Transaction with { txnNumber: ${txnNumber} } has been aborted.`);
    }
    return txn;
  }

  commit(session: string, txnNumber: string): void {
    const txn = this.current.get(session);
    // A retried commit of an already committed transaction must succeed again.
    if (txn?.txnNumber === txnNumber && txn.state === 'committed') return;
    this.active(session, txnNumber).commit();
  }

  abort(session: string, txnNumber: string): void {
    const txn = this.current.get(session);
    if (txn?.txnNumber === txnNumber) txn.abort();
  }

  end(session: string): void {
    this.current.get(session)?.abort();
    this.current.delete(session);
  }

  endAll(): void {
    for (const key of [...this.current.keys()]) this.end(key);
  }
}
