// The operator's graph, built from its parts: Kubernetes client → informers and controller → leader election →
// metrics. main.ts builds it for a pod; tests build several in one process against the in-process API server.
import type { KubeConfig } from '@kubernetes/client-node';
import type { OperatorConfig } from '../src/config/operator.ts';
import type { Logger } from '../src/platform/logger.ts';
import type { Nats } from '../src/platform/nats.ts';
import { DomainController } from './controller.ts';
import { DnsChecker } from './dns-check.ts';
import { KubeClient } from './kube.ts';
import { LeaderElector } from './leader.ts';
import { OperatorMetrics, startOpsServer, type OpsServer } from './metrics.ts';
import { NatsDomainEventPublisher, type DomainEventPublisher } from './publisher.ts';
import type { QueueOptions } from './queue.ts';
import type { DnsVerifier, ReconcilerHooks } from './reconcile.ts';

export interface OperatorDeps {
  config: OperatorConfig;
  logger: Logger;
  kubeConfig: KubeConfig;
  nats: Nats;
  /** Replaces the NATS publisher (tests). */
  publisher?: DomainEventPublisher;
  dns?: DnsVerifier;
  hooks?: ReconcilerHooks;
  queue?: QueueOptions;
  resyncMs?: number;
  /** Serve /metrics, /healthz and /readyz on config.metricsPort (default true). */
  serveOps?: boolean;
}

export interface Operator {
  readonly controller: DomainController;
  readonly elector: LeaderElector;
  readonly metrics: OperatorMetrics;
  isLeader(): boolean;
  opsPort(): number | null;
  start(): Promise<void>;
  /** Graceful: stop acting, release the Lease (unless `release: false`, as a crash would leave it), stop watching. */
  stop(options?: { release?: boolean }): Promise<void>;
}

export function buildOperator(deps: OperatorDeps): Operator {
  const { config, logger } = deps;
  let elector: LeaderElector | null = null;
  const isLeader = (): boolean => elector?.isLeader() ?? false;
  const unguarded = new KubeClient(deps.kubeConfig, { identity: config.identity });
  const kube = unguarded.withWriteGuard(isLeader);
  let controller: DomainController | null = null;
  const metrics = new OperatorMetrics({
    phases: () => controller?.phaseCounts() ?? new Map(),
    isLeader,
    certificateExpiries: () => controller?.certificateExpiries() ?? [],
  }, { defaultMetrics: deps.serveOps !== false });
  controller = new DomainController({
    kube,
    dns: deps.dns ?? new DnsChecker({ servers: config.dns.resolvers, targets: config.dns }),
    publisher: deps.publisher ?? new NatsDomainEventPublisher(deps.nats),
    config,
    logger,
    hooks: deps.hooks,
    metrics,
    queue: deps.queue,
    resyncMs: deps.resyncMs,
  });
  const ctl = controller;
  elector = new LeaderElector({
    kube: unguarded,
    namespace: config.namespace,
    name: config.lease.name,
    identity: config.identity,
    durationMs: config.lease.durationMs,
    renewMs: config.lease.renewMs,
    logger,
    onStartedLeading: () => ctl.startWorkers(),
    onStoppedLeading: () => void ctl.pauseWorkers(),
  });
  const lead = elector;
  let ops: OpsServer | null = null;
  let stopped = false;

  return {
    controller: ctl,
    elector: lead,
    metrics,
    isLeader,
    opsPort: () => ops?.port ?? null,
    async start() {
      if (deps.serveOps !== false) {
        ops = await startOpsServer({
          host: config.host,
          port: config.metricsPort,
          registry: metrics.registry,
          ready: () => ({ kubernetes: ctl.isSynced(), nats: deps.nats.isConnected() }),
        });
      }
      await ctl.start();
      lead.start();
      logger.info({ identity: config.identity, namespace: config.namespace }, 'operator started');
    },
    async stop(options = {}) {
      if (stopped) return;
      stopped = true;
      // Graceful: let the reconciles in flight finish while still leading (their writes are allowed), then release.
      // A simulated crash (release: false) stops acting at once instead.
      if (options.release !== false) await ctl.pauseWorkers();
      await lead.stop(options);
      await ctl.stop();
      await ops?.close();
      logger.info({ identity: config.identity }, 'operator stopped');
    },
  };
}
