// What a command handler gets: the server state, the target database, the command document,
// and the transaction the statement belongs to (if any).
import type { Catalog } from '../catalog.ts';
import type { DocSet } from '../collection.ts';
import type { Cursors } from '../cursors.ts';
import { CommandError } from '../errors.ts';
import type { Sessions } from '../sessions.ts';
import type { Transaction } from '../transactions.ts';
import { SnapshotView } from '../snapshots.ts';
import type { Doc } from '../values.ts';

export interface ServerState {
  readonly catalog: Catalog;
  readonly cursors: Cursors;
  readonly sessions: Sessions;
  readonly setName: string;
  me: string;
  readonly startedAt: number;
  readonly connections: { current: number; total: number };
}

export interface CommandContext {
  readonly state: ServerState;
  readonly db: string;
  readonly cmd: Doc;
  readonly connectionId: number;
  readonly txn: Transaction | undefined;
  /** The snapshot a read outside transactions reads at (snapshots.ts). */
  readonly snapshot?: number | undefined;
}

export type Handler = (ctx: CommandContext) => Doc;

/** The collection named by the command's first field. */
export function collectionName(ctx: CommandContext, field: string): string {
  const name = ctx.cmd[field];
  if (typeof name !== 'string' || name.length === 0) {
    throw new CommandError('BadValue', `collection name has invalid type ${typeof name}`);
  }
  return name;
}

export function readable(ctx: CommandContext, coll: string): DocSet | undefined {
  if (ctx.txn) return ctx.txn.view(ctx.db, coll);
  const committed = ctx.state.catalog.get(ctx.db, coll);
  return committed && ctx.snapshot !== undefined ? new SnapshotView(committed, ctx.snapshot) : committed;
}

/** Writes create the collection implicitly (inside a transaction: at commit). */
export function writable(ctx: CommandContext, coll: string): DocSet {
  return ctx.txn ? ctx.txn.view(ctx.db, coll) : ctx.state.catalog.getOrCreate(ctx.db, coll);
}

export function optionalDoc(v: unknown, what: string): Doc | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw new CommandError('TypeMismatch', `${what} must be an object`);
  return v as Doc;
}
