// Entry point of the all-in-one's worker thread (see worker-thread.ts): the worker service with clients of its
// own, stopped gracefully when the main thread says so (in-flight batches finished, NATS drained).
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { Logger } from '../platform/logger.ts';
import { loadConfig } from '../config/config.ts';
import { NatsUnreachableError } from '../platform/nats.ts';
import { openInfra } from './infra.ts';
import { buildWorker } from './worker.ts';

const port = parentPort!;
const { mongoUri } = workerData as { mongoUri: string };
try {
  const config = loadConfig('all-in-one');
  const infra = await openInfra(config, mongoUri);
  lowerPriority(infra.logger);
  const worker = buildWorker(infra);
  await worker.start();
  port.on('message', (m: { type: string }) => {
    if (m.type !== 'stop') return;
    void (async () => {
      const deadline = Date.now() + config.shutdownTimeoutMs;
      await worker.stop().catch((error: unknown) => infra.logger.error({ err: error, service: 'worker' }, 'stop failed'));
      await infra.close(Math.max(100, deadline - Date.now()));
      // Ends this thread only, whatever timer a job may still hold.
      process.exit(0);
    })();
  });
  port.postMessage({ type: 'ready' });
} catch (error) {
  port.postMessage({ type: 'failed', error: error instanceof Error ? error.message : String(error), nats: error instanceof NatsUnreachableError });
}

/**
 * Below the redirect and the api when the CPU is short: on Linux a thread's nice value is its own, so this lowers
 * this thread alone. A click burst then waits (on the CLICKS stream, nothing is lost) instead of slowing redirects;
 * idle CPU still goes to it, so ingestion catches up as soon as the load eases.
 */
function lowerPriority(logger: Logger): void {
  try {
    os.setPriority(os.constants.priority.PRIORITY_BELOW_NORMAL);
  } catch (error) {
    logger.debug({ err: error }, 'worker thread priority left unchanged');
  }
}
