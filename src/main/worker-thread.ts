// The all-in-one's worker (click ingestion and rollups, the outbox relay, webhook delivery, scheduled jobs) on a
// thread of its own: its CPU work comes in bursts (a batch of clicks is decoded, rolled up and written at once) and
// on the main thread it held up the redirect and API event loops, so clicks fell further behind the more were
// answered. The thread opens its own NATS and MongoDB clients and talks to the api as a separate worker process
// would (outbox wake-ups and cache invalidations over NATS).
import { Worker } from 'node:worker_threads';

type FromThread = { type: 'ready' } | { type: 'failed'; error: string; nats: boolean };

export interface WorkerThread {
  stop(): Promise<void>;
}

/** Thrown when the thread could not start; `natsUnreachable` when NATS was the reason. */
export class WorkerThreadError extends Error {
  readonly natsUnreachable: boolean;
  constructor(message: string, natsUnreachable: boolean) {
    super(message);
    this.name = 'WorkerThreadError';
    this.natsUnreachable = natsUnreachable;
  }
}

/**
 * Starts the worker service on a thread (configured from the same environment) against `mongoUri`. `onExit` is
 * called if the thread ends when it was not asked to (an uncaught error): the process must not run on without it.
 */
export function startWorkerThread(mongoUri: string, onExit: (error: unknown) => void): Promise<WorkerThread> {
  // Sources run as .ts, the image runs the compiled .js beside this file.
  const entry = new URL(`./worker-thread-main${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
  const worker = new Worker(entry, { workerData: { mongoUri }, name: 'worker' });
  let stopped: Promise<void> | undefined;
  return new Promise<WorkerThread>((resolve, reject) => {
    worker.on('error', reject);
    worker.once('exit', (code) => reject(new Error(`worker thread exited with code ${code} before it was ready`)));
    worker.on('message', (m: FromThread) => {
      if (m.type === 'failed') reject(new WorkerThreadError(m.error, m.nats));
      else if (m.type === 'ready') {
        worker.removeAllListeners('exit');
        worker.removeAllListeners('error');
        let failure: unknown;
        worker.on('error', (error) => {
          failure = error;
        });
        worker.once('exit', (code) => {
          if (!stopped) onExit(failure ?? new Error(`worker thread exited with code ${code}`));
        });
        resolve({
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
