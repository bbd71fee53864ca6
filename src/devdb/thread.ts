// devdb on its own thread: the all-in-one runs the database in a worker thread so that its CPU work (queries,
// journal commits, compaction, TTL sweeps) never holds up the event loop that answers redirects and API calls.
// The driver talks to it over loopback TCP exactly as it would to the in-thread server.
import { Worker } from 'node:worker_threads';
import type { DevDb, DevDbOptions } from './index.ts';

type FromThread =
  | { type: 'ready'; uri: string; port: number }
  | { type: 'log'; msg: string; fields?: Record<string, unknown> }
  | { type: 'failed'; error: string }
  | { type: 'stopped' };

export interface DevDbThreadOptions extends Omit<DevDbOptions, 'log'> {
  log?: DevDbOptions['log'];
  /**
   * The thread's young generation (V8's default is a few tens of MB). Under click ingestion devdb allocates hundreds
   * of MB/s of short-lived objects (each batch's commands, transaction overlays, document versions); with a small
   * young generation they outlive two scavenges, reach the old generation and make V8 mark a heap of gigabytes again
   * and again (the `DEVDB_YOUNG_GENERATION_MB` row of docs/configuration.md gives what it measured).
   */
  youngGenerationMb?: number;
  /**
   * The thread's heap limit (V8's old generation). Without one, V8 stops a heap near 4 GB on any machine. devdb
   * keeps about 650 bytes of heap per stored document (its index keys and place in the journal): an all-in-one on
   * 8 M stored clicks could not start (ERR_WORKER_OUT_OF_MEMORY).
   */
  heapMb?: number;
}

export function startDevDbThread(options: DevDbThreadOptions = {}): Promise<DevDb> {
  const { log, youngGenerationMb, heapMb, ...data } = options;
  // Sources run as .ts; the image runs the compiled .js beside this file (a .ts name there is a missing file).
  const entry = new URL(`./thread-main${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
  const resourceLimits = { ...(youngGenerationMb ? { maxYoungGenerationSizeMb: youngGenerationMb } : {}), ...(heapMb ? { maxOldGenerationSizeMb: heapMb } : {}) };
  const worker = new Worker(entry, { workerData: data, name: 'devdb', resourceLimits });
  let stopped: Promise<void> | undefined;
  return new Promise<DevDb>((resolve, reject) => {
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`devdb thread exited with code ${code} before it was ready`)));
    worker.on('message', (m: FromThread) => {
      if (m.type === 'log') log?.(m.msg, m.fields);
      else if (m.type === 'failed') reject(new Error(m.error));
      else if (m.type === 'ready') {
        worker.removeAllListeners('exit');
        resolve({
          uri: m.uri,
          port: m.port,
          stop() {
            stopped ??= new Promise<void>((done) => {
              worker.once('exit', () => done());
              worker.postMessage({ type: 'stop' });
            });
            return stopped;
          },
        });
      }
    });
  });
}
