// Entry point of the devdb worker thread (see thread.ts): starts the server with the options it was given, reports
// its address and its log lines to the parent, and stops when told to (committing the journal first).
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { startDevDb } from './index.ts';
import type { ThreadData } from './thread.ts';

const port = parentPort!;
const { lowerPriority, ...options } = workerData as ThreadData;
const log = (msg: string, fields?: Record<string, unknown>) => port.postMessage({ type: 'log', msg, fields });
if (lowerPriority) {
  try {
    // No pid: on Linux a thread's nice value is its own, so this lowers this thread alone.
    os.setPriority(os.constants.priority.PRIORITY_BELOW_NORMAL);
  } catch (error) {
    log('devdb thread priority left unchanged', { error: error instanceof Error ? error.message : String(error) });
  }
}
try {
  const db = await startDevDb({ ...options, log });
  port.on('message', (m: { type: string }) => {
    if (m.type !== 'stop') return;
    void db.stop().finally(() => port.close());
  });
  port.postMessage({ type: 'ready', uri: db.uri, port: db.port });
} catch (err) {
  port.postMessage({ type: 'failed', error: err instanceof Error ? err.message : String(err) });
}
