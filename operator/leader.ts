// Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: the holder renews; the others watch the
// record and take it only when it has not changed for a lease duration (by their own clock, so clock skew between
// nodes does not matter) or when it was released. Every write carries the resourceVersion it read, so two
// candidates racing for an expired lease cannot both win.
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '../src/platform/logger.ts';
import { isConflict, RESOURCES, type KubeClient } from './kube.ts';

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

export interface LeaderElectorOptions {
  /** A client whose writes are not guarded by leadership (the Lease is written to become the leader). */
  kube: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  durationMs: number;
  renewMs: number;
  logger: Logger;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  private readonly options: LeaderElectorOptions;
  private leading = false;
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private tickInFlight: Promise<void> | null = null;
  private observed: LeaseSpec | undefined;
  private observedAt = 0;

  constructor(options: LeaderElectorOptions) {
    this.options = options;
  }

  isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops campaigning; the leader releases the Lease (unless told not to, as a crash would not), so a peer takes over at once. */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.tickInFlight;
    const wasLeading = this.leading;
    this.lose('stopping');
    if (wasLeading && options.release !== false) await this.release();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.tickInFlight = this.tick().finally(() => {
        this.tickInFlight = null;
      });
    }, delayMs);
  }

  private async tick(): Promise<void> {
    try {
      const held = await this.tryAcquireOrRenew();
      if (this.stopped) return;
      if (held) this.renewed();
      else this.lose('the lease is held by another replica');
    } catch (error) {
      // A failed renewal is not yet a lost lease: the watchdog ends leadership if renewals keep failing.
      this.options.logger.warn({ err: error, lease: this.options.name }, 'lease renewal failed');
    }
    this.schedule(this.options.renewMs);
  }

  private renewed(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    // Give up before the lease can expire for the others: renewals failing for this long mean someone may take over.
    const deadline = Math.max(this.options.renewMs, this.options.durationMs - this.options.renewMs);
    this.watchdog = setTimeout(() => this.lose('the lease could not be renewed in time'), deadline);
    this.watchdog.unref();
    if (!this.leading) {
      this.leading = true;
      this.options.logger.info({ identity: this.options.identity, lease: this.options.name }, 'became the leader');
      this.options.onStartedLeading();
    }
  }

  private lose(why: string): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
    if (!this.leading) return;
    this.leading = false;
    this.options.logger.info({ identity: this.options.identity, lease: this.options.name, why }, 'stopped leading');
    this.options.onStoppedLeading();
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { kube, namespace, name, identity } = this.options;
    const now = Date.now();
    const durationSeconds = Math.max(1, Math.ceil(this.options.durationMs / 1000));
    const lease = await kube.get<Lease>(RESOURCES.leases, namespace, name);
    if (lease === null) {
      const spec: LeaseSpec = { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 };
      try {
        await kube.create(RESOURCES.leases, namespace, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec });
      } catch (error) {
        if (isConflict(error)) return false;
        throw error;
      }
      this.observe(spec, now);
      return true;
    }
    const spec = lease.spec ?? {};
    if (!isDeepStrictEqual(spec, this.observed)) this.observe(spec, now);
    const holder = spec.holderIdentity ?? '';
    if (holder !== identity && holder !== '') {
      const expiresAt = this.observedAt + (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
      if (now < expiresAt) return false;
    }
    const next: LeaseSpec = { ...spec, holderIdentity: identity, leaseDurationSeconds: durationSeconds, renewTime: microTime(now) };
    if (holder !== identity) {
      next.acquireTime = microTime(now);
      next.leaseTransitions = (spec.leaseTransitions ?? 0) + 1;
    }
    try {
      await kube.replace(RESOURCES.leases, namespace, name, { ...lease, spec: next });
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
    this.observe(next, now);
    return true;
  }

  private observe(spec: LeaseSpec, at: number): void {
    this.observed = structuredClone(spec);
    this.observedAt = at;
  }

  private async release(): Promise<void> {
    const { kube, namespace, name, identity } = this.options;
    try {
      const lease = await kube.get<Lease>(RESOURCES.leases, namespace, name);
      if (lease === null || lease.spec?.holderIdentity !== identity) return;
      const spec: LeaseSpec = { ...lease.spec, leaseDurationSeconds: 1, renewTime: microTime(Date.now()) };
      delete spec.holderIdentity;
      await kube.replace(RESOURCES.leases, namespace, name, { ...lease, spec });
    } catch (error) {
      this.options.logger.warn({ err: error, lease: name }, 'could not release the lease; a peer takes over when it expires');
    }
  }
}
