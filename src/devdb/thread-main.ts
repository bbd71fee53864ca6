// Entry point of the devdb worker thread (see thread.ts): starts the server with the options it was given, reports
// its address and its log lines to the parent, and stops when told to (committing the journal first).
import { parentPort, workerData } from 'node:worker_threads';
import { startDevDb, type DevDbOptions } from './index.ts';

const port = parentPort!;
const options = workerData as Omit<DevDbOptions, 'log'>;
try {
  const db = await startDevDb({ ...options, log: (msg, fields) => port.postMessage({ type: 'log', msg, fields }) });
  port.on('message', (m: { type: string }) => {
    if (m.type !== 'stop') return;
    void db.stop().finally(() => port.close());
  });
  port.postMessage({ type: 'ready', uri: db.uri, port: db.port });
} catch (err) {
  port.postMessage({ type: 'failed', error: err instanceof Error ? err.message : String(err) });
}
