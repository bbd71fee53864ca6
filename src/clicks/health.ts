// Rotator destinations of links with `auto_disable_unhealthy` are probed periodically by the worker; the verdicts
// land in `rotator_health`, which the redirect's RotatorCounters snapshot reads. One replica probes at a time
// (lease), so three failures mean three probes, not three replicas probing once.
import type { Collection } from 'mongodb';
import type { Lease } from '../platform/lease.ts';
import { Periodic } from '../platform/periodic.ts';
import type { LinkDoc } from '../links/link.store.ts';
import type { Logger } from '../platform/logger.ts';
import type { ResolvedAddress, TargetOptions } from '../platform/outbound/ssrf.ts';
import { OutboundError, outboundAgents, send, type OutboundAgents } from '../platform/outbound/outbound.ts';
import type { RotatorHealthStore } from './rotator-health.store.ts';

export interface DestinationHealthCheckerOptions {
  links: Collection<LinkDoc>;
  health: RotatorHealthStore;
  /** config.clicks.healthCheckIntervalMs */
  intervalMs: number;
  /** Per probe request. */
  timeoutMs?: number;
  /** Destinations on private addresses are probed only when allowed (development; SSRF otherwise). */
  allowPrivate: boolean;
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
  /** When given, only the replica holding it probes. */
  lease?: Lease;
  logger: Logger;
  concurrency?: number;
}

interface Target {
  linkId: string;
  destinationId: string;
  url: string;
}

export class DestinationHealthChecker {
  private readonly o: DestinationHealthCheckerOptions;
  private readonly rounds: Periodic;

  private readonly targets: TargetOptions;
  /** Probes connect through these: each connection to a checked address (outbound.ts), as webhook deliveries do. */
  private readonly agents: OutboundAgents;

  constructor(options: DestinationHealthCheckerOptions) {
    this.o = options;
    this.targets = { allowPrivate: options.allowPrivate, ...(options.lookup ? { lookup: options.lookup } : {}) };
    this.agents = outboundAgents(this.targets);
    this.rounds = new Periodic({ intervalMs: options.intervalMs, lease: options.lease, logger: options.logger, failure: 'rotator health round failed', round: (now) => this.round(now) });
  }

  start(): void {
    this.rounds.start();
  }

  async stop(): Promise<void> {
    await this.rounds.stop();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** Probes every destination once (a round in progress is joined rather than doubled). */
  runOnce(now = new Date()): Promise<void> {
    return this.rounds.runOnce(now);
  }

  private async round(now: Date): Promise<void> {
    const links = await this.o.links
      .find({ 'rotator.enabled': true, 'rotator.auto_disable_unhealthy': true, archived: { $ne: true } }, { projection: { _id: 1, rotator: 1 } })
      .toArray();
    const targets: Target[] = [];
    for (const link of links) {
      for (const d of link.rotator?.destinations ?? []) {
        if (d.active !== false) targets.push({ linkId: link._id, destinationId: d.id, url: d.url });
      }
    }
    let next = 0;
    const worker = async () => {
      while (next < targets.length) {
        const target = targets[next++]!;
        const ok = await this.probe(target.url);
        if (ok === null) continue;
        const healthy = await this.o.health.record(target.linkId, target.destinationId, target.url, ok, now);
        if (!ok) this.o.logger.debug({ link_id: target.linkId, destination_id: target.destinationId, healthy }, 'rotator destination probe failed');
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency ?? 8, targets.length) }, worker));
  }

  /** True: answered below 500. False: 5xx, network error or timeout. Null: not probed (refused target). */
  private async probe(url: string): Promise<boolean | null> {
    const head = await this.request(url, 'HEAD');
    if (head === 'refused') return null;
    if (head === 'ok') return true;
    if (head === 'timeout') return false;
    // Some servers mishandle HEAD (405, 501, even 500): the GET answer is the verdict.
    return (await this.request(url, 'GET')) === 'ok';
  }

  private async request(url: string, method: 'HEAD' | 'GET'): Promise<'ok' | 'failed' | 'timeout' | 'refused'> {
    try {
      const answer = await send(this.agents, this.targets, { method, url, headers: { 'user-agent': 'Linkplane-HealthCheck/1' }, timeoutMs: this.o.timeoutMs ?? 5000 });
      return answer.status < 500 ? 'ok' : 'failed';
    } catch (error) {
      if (!(error instanceof OutboundError) || error.kind === 'network') return 'failed';
      return error.kind === 'refused' ? 'refused' : 'timeout';
    }
  }
}
