// Handshake, diagnostics and session commands. The hello answer announces a one-member replica
// set primary: the driver only uses sessions and transactions against a replica set.
import { getHeapStatistics } from 'node:v8';
import { CommandError } from '../errors.ts';
import { sessionKey, txnNumberOf } from '../sessions.ts';
import { toNumber, type Doc } from '../values.ts';
import type { CommandContext, Handler } from './context.ts';

const VERSION = '7.0.0';

function hello(ctx: CommandContext, legacy: boolean): Doc {
  const { state } = ctx;
  return {
    ...(legacy ? { ismaster: true } : { isWritablePrimary: true }),
    helloOk: true,
    setName: state.setName,
    setVersion: 1,
    hosts: [state.me],
    primary: state.me,
    me: state.me,
    secondary: false,
    maxBsonObjectSize: 16 * 1024 * 1024,
    maxMessageSizeBytes: 48_000_000,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId: ctx.connectionId,
    minWireVersion: 0,
    maxWireVersion: 21,
    readOnly: false,
    ok: 1,
  };
}

function heapSection(): Doc {
  const heap = getHeapStatistics();
  const mb = (bytes: number) => Math.round(bytes / 1_048_576);
  return { usedMB: mb(heap.used_heap_size), totalMB: mb(heap.total_heap_size), limitMB: mb(heap.heap_size_limit) };
}

function serverStatus(ctx: CommandContext): Doc {
  const { state } = ctx;
  const uptimeMillis = Date.now() - state.startedAt;
  return {
    host: state.me,
    version: VERSION,
    process: 'devdb',
    pid: process.pid,
    uptime: Math.floor(uptimeMillis / 1000),
    uptimeMillis,
    localTime: new Date(),
    connections: { current: state.connections.current, available: 1000, totalCreated: state.connections.total },
    metrics: { cursor: { open: { total: state.cursors.size } } },
    // devdb's own section (as a storage engine adds its own): its heap, where the documents' index keys live, beside
    // the limit that stops it.
    devdb: { heap: heapSection() },
    ok: 1,
  };
}

function listDatabases(ctx: CommandContext): Doc {
  const names = ctx.state.catalog.databaseNames().sort();
  if (ctx.cmd.nameOnly === true) return { databases: names.map((name) => ({ name })), ok: 1 };
  const databases = names.map((name) => {
    const docs = ctx.state.catalog.collections(name).reduce((n, c) => n + c.size, 0);
    return { name, sizeOnDisk: docs * 256, empty: docs === 0 };
  });
  return { databases, totalSize: databases.reduce((n, d) => n + d.sizeOnDisk, 0), totalSizeMb: 0, ok: 1 };
}

function getParameter(ctx: CommandContext): Doc {
  const known: Doc = {
    featureCompatibilityVersion: { version: '7.0' },
    transactionLifetimeLimitSeconds: ctx.state.sessions.limits.transactionLifetimeMs / 1000,
    maxBSONDepth: 100,
  };
  if (ctx.cmd.getParameter === '*') return { ...known, ok: 1 };
  const reply: Doc = {};
  for (const key of Object.keys(ctx.cmd)) if (key in known) reply[key] = known[key];
  if (Object.keys(reply).length === 0) throw new CommandError('InvalidOptions', 'no option found to get');
  return { ...reply, ok: 1 };
}

/** `setParameter`: only transactionLifetimeLimitSeconds, as MongoDB names and bounds it. */
function setParameter(ctx: CommandContext): Doc {
  const value = ctx.cmd.transactionLifetimeLimitSeconds;
  if (value === undefined) throw new CommandError('InvalidOptions', 'no option found to set');
  const seconds = toNumber(value);
  if (!Number.isInteger(seconds) || seconds < 1) throw new CommandError('BadValue', 'transactionLifetimeLimitSeconds must be greater than or equal to 1s');
  const was = ctx.state.sessions.limits.transactionLifetimeMs / 1000;
  ctx.state.sessions.limits.transactionLifetimeMs = seconds * 1000;
  return { was, ok: 1 };
}

function endSessions(ctx: CommandContext): Doc {
  const ids = Array.isArray(ctx.cmd.endSessions) ? ctx.cmd.endSessions : [];
  for (const lsid of ids) {
    const key = sessionKey(lsid);
    if (key) ctx.state.sessions.end(key);
  }
  return { ok: 1 };
}

function txnTarget(ctx: CommandContext): [string, string] {
  const key = sessionKey(ctx.cmd.lsid);
  if (!key || ctx.cmd.txnNumber === undefined) throw new CommandError('BadValue', 'transaction commands need lsid and txnNumber');
  return [key, txnNumberOf(ctx.cmd.txnNumber)];
}

export const adminCommands: Record<string, Handler> = {
  hello: (ctx) => hello(ctx, false),
  isMaster: (ctx) => hello(ctx, true),
  ismaster: (ctx) => hello(ctx, true),
  ping: () => ({ ok: 1 }),
  buildInfo: () => ({ version: VERSION, versionArray: [7, 0, 0, 0], gitVersion: 'devdb', bits: 64, maxBsonObjectSize: 16 * 1024 * 1024, storageEngines: ['devdb'], modules: [], ok: 1 }),
  getParameter,
  setParameter,
  serverStatus,
  listDatabases,
  endSessions,
  connectionStatus: () => ({ authInfo: { authenticatedUsers: [], authenticatedUserRoles: [] }, ok: 1 }),
  getCmdLineOpts: () => ({ argv: ['devdb'], parsed: {}, ok: 1 }),
  hostInfo: (ctx) => ({ system: { hostname: ctx.state.me }, os: { type: process.platform }, extra: {}, ok: 1 }),
  getLog: () => ({ log: [], totalLinesWritten: 0, ok: 1 }),
  commitTransaction: (ctx) => {
    ctx.state.sessions.commit(...txnTarget(ctx));
    return { ok: 1 };
  },
  abortTransaction: (ctx) => {
    ctx.state.sessions.abort(...txnTarget(ctx));
    return { ok: 1 };
  },
};
