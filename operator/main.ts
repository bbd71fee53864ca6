// The operator process: `node operator/main.ts` (the image runs dist/operator/main.js). Config → logger → NATS →
// Kubernetes clients → leader election → controller. On SIGTERM it stops acting, releases its Lease (so the other
// replica takes over at once), stops watching and drains NATS.
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigError } from '../src/config/config.ts';
import { loadOperatorConfig } from '../src/config/operator.ts';
import { createLogger } from '../src/platform/logger.ts';
import { connectNats, NatsUnreachableError, provisionStreams } from '../src/platform/nats.ts';
import { buildOperator } from './operator.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadOperatorConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`linkplane operator: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const { logger, flush } = createLogger({ level: config.logLevel, name: 'operator' });

  let nats;
  try {
    nats = await connectNats({ url: config.nats.url, prefix: config.nats.prefix, name: `linkplane-operator-${config.identity}`, logger });
  } catch (error) {
    if (error instanceof NatsUnreachableError) {
      console.error(`linkplane operator: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  await provisionStreams(nats, config.nats.duplicateWindowMs, { logger });

  const kubeConfig = new KubeConfig();
  if (config.kubeconfig !== null) kubeConfig.loadFromFile(config.kubeconfig);
  else kubeConfig.loadFromCluster();

  const operator = buildOperator({ config, logger, kubeConfig, nats });
  await operator.start();

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    await operator.stop().catch((error: unknown) => logger.error({ err: error }, 'stop failed'));
    await nats.drain().catch((error: unknown) => logger.error({ err: error }, 'nats drain failed'));
    await flush(5000);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

await main();
