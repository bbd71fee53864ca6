// devdb: a MongoDB wire-protocol server over mingo for development and tests, driven by the
// official driver unchanged. Never the production store: it only binds loopback addresses.
import { Catalog } from './catalog.ts';
import { setBytesCacheSize } from './collection.ts';
import type { ServerState } from './commands/index.ts';
import { Cursors } from './cursors.ts';
import { Persistence, type JournalOptions } from './persistence.ts';
import { WireServer, type Logger } from './server.ts';
import { Sessions } from './sessions.ts';
import { sweepExpired } from './ttl.ts';

export interface DevDbOptions {
  host?: string;
  port?: number;
  dataDir?: string;
  /** The journal's fsync policy and compaction threshold (see persistence.ts). */
  journal?: JournalOptions;
  ttlIntervalMs?: number;
  /**
   * With a data folder, stored documents are read back from the journal file; this many MiB of the ones read or
   * written lately are kept in memory (storage.ts). Default 64.
   */
  cacheMb?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export interface DevDb {
  uri: string;
  port: number;
  stop(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const SET_NAME = 'devdb';
const CURSOR_IDLE_MS = 10 * 60 * 1000;

export async function startDevDb(options: DevDbOptions = {}): Promise<DevDb> {
  const requestedHost = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(requestedHost)) {
    throw new Error(`devdb only binds loopback addresses (127.0.0.1, ::1, localhost), not '${requestedHost}'`);
  }
  const host = requestedHost === 'localhost' ? '127.0.0.1' : requestedHost;
  const log: Logger = options.log ?? (() => {});
  setBytesCacheSize((options.cacheMb ?? 64) * 1024 * 1024);
  const persistence = options.dataDir ? new Persistence(options.dataDir, log, options.journal) : undefined;
  const catalog = new Catalog((change) => persistence?.record(change));
  persistence?.load(catalog);

  const cursors = new Cursors();
  const sessions = new Sessions(catalog);
  const state: ServerState = {
    catalog,
    cursors,
    sessions,
    setName: SET_NAME,
    me: '',
    startedAt: Date.now(),
    connections: { current: 0, total: 0 },
  };
  const server = new WireServer(state, log, persistence && (() => persistence.commit()));
  const port = await server.listen(host, options.port ?? 27017);
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  state.me = hostPort;
  const uri = `mongodb://${hostPort}/?replicaSet=${SET_NAME}&directConnection=true`;

  const ttlTimer = setInterval(() => {
    try {
      sweepExpired(catalog);
      persistence?.commit();
      cursors.reap(CURSOR_IDLE_MS);
    } catch (err) {
      log('devdb: TTL sweep failed', { error: err instanceof Error ? err.message : String(err) });
    }
  }, options.ttlIntervalMs ?? 1000);
  ttlTimer.unref();
  log('devdb listening', { uri, dataDir: options.dataDir });

  let stopped: Promise<void> | undefined;
  return {
    uri,
    port,
    stop() {
      stopped ??= (async () => {
        clearInterval(ttlTimer);
        await server.close();
        sessions.endAll();
        cursors.clear();
        persistence?.close();
      })();
      return stopped;
    },
  };
}
