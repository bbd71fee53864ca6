// The controller: informers fill caches and enqueue keys (on every replica, so a new leader starts warm); only the
// leader runs the queue's workers. A change to an owned Certificate or Ingress enqueues the Domain that owns it.
import type { Logger } from '../src/platform/logger.ts';
import { API_VERSION, KIND, MANAGED_BY, MANAGED_BY_LABEL, domainKey, type Certificate, type Domain, type Ingress, type ObjectMeta, type Phase } from './domain.ts';
import { RESOURCES, type Watched } from './kube.ts';
import type { OperatorMetrics } from './metrics.ts';
import { WorkQueue, type QueueOptions } from './queue.ts';
import { Reconciler, type ReconcilerOptions } from './reconcile.ts';

export interface ControllerOptions extends Omit<ReconcilerOptions, 'domains' | 'certificates' | 'ingresses'> {
  metrics?: OperatorMetrics;
  queue?: QueueOptions;
  /** Every Domain is reconciled again this often, whatever changed (0: never). */
  resyncMs?: number;
  /** Delay before restarting an informer whose list or watch failed. */
  informerRetryMs?: number;
}

export class DomainController {
  readonly queue: WorkQueue;
  readonly reconciler: Reconciler;
  private readonly domains: Watched<Domain>;
  private readonly certificates: Watched<Certificate>;
  private readonly ingresses: Watched<Ingress>;
  private readonly options: ControllerOptions;
  private readonly logger: Logger;
  private started = false;
  private synced = false;
  private resyncTimer: NodeJS.Timeout | null = null;
  private readonly retryTimers = new Set<NodeJS.Timeout>();

  constructor(options: ControllerOptions) {
    this.options = options;
    this.logger = options.logger;
    const { kube, config } = options;
    this.domains = kube.informer<Domain>(RESOURCES.domains, config.namespace);
    const owned = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
    this.certificates = kube.informer<Certificate>(RESOURCES.certificates, config.namespace, owned);
    this.ingresses = kube.informer<Ingress>(RESOURCES.ingresses, config.namespace, owned);
    this.queue = new WorkQueue({
      ...options.queue,
      onError: (key, error) => this.logger.warn({ err: error, domain: key }, 'reconcile failed; retrying'),
    });
    this.reconciler = new Reconciler({ ...options, domains: this.domains, certificates: this.certificates, ingresses: this.ingresses });
  }

  /** Starts the informers (resolves when their first lists are in the caches). */
  async start(): Promise<void> {
    this.started = true;
    const enqueueDomain = (domain: Domain): void => this.queue.add(domainKey(domain));
    for (const verb of ['add', 'update', 'delete'] as const) this.domains.on(verb, enqueueDomain);
    for (const informer of [this.certificates, this.ingresses] as Watched<{ metadata: ObjectMeta }>[]) {
      for (const verb of ['add', 'update', 'delete'] as const) informer.on(verb, (object) => this.enqueueOwner(object));
    }
    for (const informer of [this.domains, this.certificates, this.ingresses] as Watched<{ metadata: ObjectMeta }>[]) {
      informer.on('error', (error: unknown) => {
        this.logger.warn({ err: error }, 'watch failed; listing again shortly');
        if (!this.started) return;
        const timer = setTimeout(() => {
          this.retryTimers.delete(timer);
          if (this.started) void informer.start();
        }, this.options.informerRetryMs ?? 1000);
        this.retryTimers.add(timer);
      });
    }
    await Promise.all([this.domains.start(), this.certificates.start(), this.ingresses.start()]);
    this.synced = true;
    const resyncMs = this.options.resyncMs ?? 600_000;
    if (resyncMs > 0) {
      this.resyncTimer = setInterval(() => this.resync(), resyncMs);
      this.resyncTimer.unref();
    }
  }

  isSynced(): boolean {
    return this.synced;
  }

  /** This replica leads: reconcile everything known, then whatever changes. */
  startWorkers(): void {
    this.resync();
    this.queue.run(async (key) => {
      const started = process.hrtime.bigint();
      const seconds = (): number => Number(process.hrtime.bigint() - started) / 1e9;
      try {
        const outcome = await this.reconciler.reconcile(key);
        if (outcome.requeueAfterMs !== undefined) this.queue.addAfter(key, outcome.requeueAfterMs);
        this.options.metrics?.observeReconcile(outcome.requeueAfterMs === undefined ? 'success' : 'requeue', seconds());
      } catch (error) {
        this.options.metrics?.observeReconcile('error', seconds());
        throw error;
      }
    });
  }

  /** This replica no longer leads: take no new key; resolves when the reconciles in flight have ended. */
  pauseWorkers(): Promise<void> {
    return this.queue.pause();
  }

  /** Enqueues every Domain in the cache (periodic resync, a new leader). */
  resync(): void {
    for (const domain of this.domains.list()) this.queue.add(domainKey(domain));
  }

  phaseCounts(): Map<Phase, number> {
    const counts = new Map<Phase, number>();
    for (const domain of this.domains.list()) {
      const phase = domain.status?.phase ?? 'PendingVerification';
      counts.set(phase, (counts.get(phase) ?? 0) + 1);
    }
    return counts;
  }

  /** When each issued Certificate of ours expires (cert-manager's status.notAfter), in Unix seconds. */
  certificateExpiries(): number[] {
    const out: number[] = [];
    for (const certificate of this.certificates.list()) {
      const notAfter = Date.parse(certificate.status?.notAfter ?? '');
      if (Number.isFinite(notAfter)) out.push(notAfter / 1000);
    }
    return out;
  }

  async stop(): Promise<void> {
    this.started = false;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    await this.queue.shutDown();
    await Promise.all([this.domains.stop(), this.certificates.stop(), this.ingresses.stop()]);
  }

  private enqueueOwner(object: { metadata: ObjectMeta }): void {
    const owner = object.metadata.ownerReferences?.find((ref) => ref.controller === true && ref.kind === KIND && ref.apiVersion === API_VERSION);
    if (owner) this.queue.add(`${object.metadata.namespace ?? this.options.config.namespace}/${owner.name}`);
  }
}
