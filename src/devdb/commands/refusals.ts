// What devdb refuses before running a command, rather than accepting and ignoring it: a write concern one node
// cannot satisfy (as MongoDB refuses it), a hint naming no index (as MongoDB), and the features devdb does not
// implement (collation, document validation, capped collections and the other collection options, snapshot reads),
// which would otherwise be silently ignored and let code pass here that behaves differently on MongoDB.
import { CommandError } from '../errors.ts';
import { isPlainObject, keyOf, promote, type Doc } from '../values.ts';
import type { ServerState } from './context.ts';

/** devdb is a one-member replica set: a write concern may ask for at most this many acknowledgements. */
const NODES = 1;

function notImplemented(feature: string, why: string): CommandError {
  return new CommandError('NotImplemented', `devdb does not support ${feature}: ${why}. It refuses it rather than ignore it; use a MongoDB server for this.`);
}

/** `w: n` with n greater than the members of the set: MongoDB refuses it before running the write. */
function checkWriteConcern(wc: unknown): void {
  if (!isPlainObject(wc) || wc.w === undefined) return;
  const w = promote(wc.w);
  if (typeof w === 'number') {
    if (!Number.isInteger(w) || w < 0) throw new CommandError('FailedToParse', 'w has to be a non-negative number and not greater than 50; found: ' + String(w));
    if (w > NODES) throw new CommandError('UnsatisfiableWriteConcern', 'Not enough data-bearing nodes');
  }
}

/** A collation other than `simple` (byte order, what devdb compares by) is refused. */
function checkCollation(collation: unknown): void {
  if (collation === undefined || collation === null) return;
  if (isPlainObject(collation) && collation.locale === 'simple') return;
  throw notImplemented('collation', 'strings are compared by their bytes (the simple collation) only');
}

/** MongoDB's BadValue for a hint that names no index of the collection (a missing collection has nothing to hint). */
function checkHint(state: ServerState, db: string, coll: unknown, hint: unknown): void {
  if (hint === undefined || hint === null || typeof coll !== 'string') return;
  if (typeof hint === 'string' && hint === '') return;
  if (isPlainObject(hint) && Object.keys(hint).length === 0) return;
  if (isPlainObject(hint) && '$natural' in hint) return;
  const target = state.catalog.get(db, coll);
  if (!target) return;
  const specs = target.indexSpecs();
  const found = typeof hint === 'string' ? specs.some((s) => s.name === hint) : isPlainObject(hint) && specs.some((s) => keyOf(promote(s.key)) === keyOf(promote(hint)));
  if (!found) throw new CommandError('BadValue', 'hint provided does not correspond to an existing index');
}

function checkReadConcern(rc: unknown): void {
  if (!isPlainObject(rc)) return;
  if (rc.level === 'snapshot' || rc.atClusterTime !== undefined) {
    throw notImplemented('snapshot read concern', 'its reads see the latest committed data (read committed), not a snapshot');
  }
}

/** Collection options devdb would otherwise accept and ignore. */
const COLLECTION_OPTIONS: Record<string, string> = {
  validator: 'document validation (validator, $jsonSchema)',
  validationLevel: 'document validation (validationLevel)',
  validationAction: 'document validation (validationAction)',
  capped: 'capped collections',
  size: 'capped collections (size)',
  max: 'capped collections (max)',
  timeseries: 'time series collections',
  expireAfterSeconds: 'collection-level expiry (expireAfterSeconds; a TTL index is supported)',
  clusteredIndex: 'clustered collections',
  viewOn: 'views',
  pipeline: 'views (pipeline)',
  changeStreamPreAndPostImages: 'change stream pre- and post-images',
  encryptedFields: 'queryable encryption',
  storageEngine: 'storage engine options',
  indexOptionDefaults: 'index option defaults',
};

/** The commands whose `hint` and `collation` sit at the top level, and the field naming their collection. */
const TOP_LEVEL: Record<string, string> = { find: 'find', aggregate: 'aggregate', count: 'count', distinct: 'distinct', findAndModify: 'findAndModify', findandmodify: 'findandmodify' };
const STATEMENTS: Record<string, [field: string, statements: string]> = { update: ['update', 'updates'], delete: ['delete', 'deletes'] };

export function refuseUnsupported(state: ServerState, db: string, name: string, cmd: Doc): void {
  checkWriteConcern(cmd.writeConcern);
  checkReadConcern(cmd.readConcern);
  const top = TOP_LEVEL[name];
  if (top) {
    checkCollation(cmd.collation);
    checkHint(state, db, cmd[top], cmd.hint);
  }
  const stmts = STATEMENTS[name];
  if (stmts && Array.isArray(cmd[stmts[1]])) {
    for (const stmt of cmd[stmts[1]] as unknown[]) {
      if (!isPlainObject(stmt)) continue;
      checkCollation(stmt.collation);
      checkHint(state, db, cmd[stmts[0]], stmt.hint);
    }
  }
  if (name === 'create') {
    checkCollation(cmd.collation);
    for (const [option, feature] of Object.entries(COLLECTION_OPTIONS)) {
      if (cmd[option] === undefined || (option === 'capped' && cmd.capped === false)) continue;
      throw notImplemented(feature, 'the option would be ignored');
    }
  }
  if (name === 'createIndexes' && Array.isArray(cmd.indexes)) {
    for (const spec of cmd.indexes as unknown[]) if (isPlainObject(spec)) checkCollation(spec.collation);
  }
}
