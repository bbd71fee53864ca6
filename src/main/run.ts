// Entry point of every process: `node src/main/run.ts <api|redirect|worker|all-in-one>` (the image runs the
// compiled dist/src/main/run.js). Reads config, opens the clients, starts the services, and on SIGTERM stops
// accepting, finishes in-flight work, drains NATS and closes MongoDB.
import { ConfigError, loadConfig, type ProcessName } from '../config/config.ts';
import { NatsUnreachableError } from '../platform/nats.ts';
import { openInfra, type Infra } from './infra.ts';
import type { Service } from './service.ts';
import { buildApi } from './api.ts';
import { buildRedirect } from './redirect.ts';
import { buildWorker } from './worker.ts';
import { seedDemo, type DemoTenants } from './demo.ts';
import type { DevDb } from '../devdb/index.ts';
import { startDevDbThread } from '../devdb/thread.ts';
import { startWorkerThread, WorkerThreadError, type WorkerThread } from './worker-thread.ts';
import { migrateAtStart } from './migrations.ts';
import { SchemaTooNewError } from '../platform/migrations.ts';

const PROCESSES: readonly ProcessName[] = ['api', 'redirect', 'worker', 'all-in-one'];

async function main(): Promise<void> {
  const name = process.argv[2] as ProcessName;
  if (!PROCESSES.includes(name)) {
    console.error(`usage: run.ts <${PROCESSES.join('|')}>`);
    process.exit(2);
  }
  let config;
  try {
    config = loadConfig(name);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`linkplane ${name}: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }

  let devdb: DevDb | null = null;
  let mongoUri = config.mongo.uri;
  if (mongoUri === null) {
    // On a thread of its own: database work never holds up the redirect and API event loops.
    devdb = await startDevDbThread({
      port: config.devdb.port,
      youngGenerationMb: config.devdb.youngGenerationMb,
      heapMb: config.devdb.heapMb,
      cacheMb: config.devdb.cacheMb,
      ...(config.devdb.dataDir ? { dataDir: config.devdb.dataDir } : {}),
      log: (msg, fields) => console.error(`linkplane: ${msg}`, fields ? JSON.stringify(fields) : ''),
    });
    mongoUri = devdb.uri;
    console.error(`linkplane: development database (devdb) on ${devdb.uri}${config.devdb.dataDir ? `, kept in ${config.devdb.dataDir}` : ''}`);
  }

  let infra: Infra;
  try {
    infra = await openInfra(config, mongoUri);
  } catch (error) {
    await devdb?.stop();
    if (error instanceof NatsUnreachableError) {
      console.error(`linkplane ${name}: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }

  // Data written by an earlier release is taken forward before any service reads it (docs/chart-operations.md).
  try {
    await migrateAtStart(infra.mongo.db, infra.logger);
  } catch (error) {
    if (error instanceof SchemaTooNewError) {
      console.error(`linkplane ${name}: ${error.message}`);
      await infra.close();
      await devdb?.stop();
      process.exit(1);
    }
    throw error;
  }

  const services: Service[] = [];
  const api = name === 'api' || name === 'all-in-one' ? buildApi(infra) : null;
  if (api) services.push(api);
  if (name === 'redirect' || name === 'all-in-one') services.push(buildRedirect(infra));
  if (name === 'worker') services.push(buildWorker(infra));
  // The all-in-one's worker runs on its own thread, so click ingestion never holds up the redirect.
  let workerThread: WorkerThread | null = null;
  if (name === 'all-in-one') {
    try {
      workerThread = await startWorkerThread(mongoUri, (error) => {
        // As when the worker ran on the main thread: an uncaught error ends the process, and its supervisor restarts it.
        infra.logger.fatal({ err: error }, 'worker thread failed');
        process.exit(1);
      });
    } catch (error) {
      await infra.close();
      await devdb?.stop();
      if (error instanceof WorkerThreadError && error.natsUnreachable) {
        console.error(`linkplane ${name}: ${error.message}`);
        process.exit(1);
      }
      throw error;
    }
  }
  for (const service of services) await service.start();

  if (name === 'all-in-one' && api) {
    const demo = await seedDemo(infra.stores, api.keys, config.rateLimit.workspacePerMinute);
    if (demo) printDemo(demo, config.publicApiUrl);
    else console.log(`\nLinkplane is running. Dashboard: ${config.publicApiUrl}/dashboard/ (the demo sign-in was printed at the first start; more users: npx linkplane user create)\n`);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    infra.logger.info({ signal }, 'shutting down');
    const deadline = Date.now() + config.shutdownTimeoutMs;
    const force = setTimeout(() => process.exit(1), config.shutdownTimeoutMs + 5000);
    force.unref();
    await workerThread?.stop();
    for (const service of [...services].reverse()) {
      await service.stop().catch((error: unknown) => infra.logger.error({ err: error, service: service.name }, 'stop failed'));
    }
    // The logs get what is left of SHUTDOWN_TIMEOUT_MS: a stdout nobody reads must not hold the exit.
    await infra.close(Math.max(100, deadline - Date.now()));
    await devdb?.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

function printDemo(demo: DemoTenants, apiUrl: string): void {
  console.log(`
Linkplane is running. A demo workspace and partner were created; their keys and the password are shown only this once:

  Dashboard: ${apiUrl}/dashboard/
  Sign in as ${demo.email}  password: ${demo.password}

  workspace ${demo.workspaceId}  key: ${demo.workspaceKey}
  partner   ${demo.partnerId}  key: ${demo.partnerKey}

  curl -H 'Authorization: Bearer ${demo.workspaceKey}' ${apiUrl}/v1/workspace

More keys: npx linkplane key create --workspace ${demo.workspaceId} --scopes all
More users: npx linkplane user create --email you@example.com --workspace ${demo.workspaceId} --role owner
`);
}

main().catch((error: unknown) => {
  console.error('linkplane: failed to start:', error);
  process.exit(1);
});
