// The worker's side of the operator contract: DOMAINS messages (one per phase transition of a `Domain` object)
// become the domain's new state in MongoDB and an `events` row, written together, so webhooks deliver each
// transition once; then every pod's cache drops the host, so an active domain starts resolving at once.
import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { MongoClient } from 'mongodb';
import { Counter, type Registry } from 'prom-client';
import { inTransaction } from '../platform/mongo.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import type { EventStore } from '../events/event.store.ts';
import type { DomainEventData } from './domain.schemas.ts';
import type { EventType } from '../events/event-types.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import { PullRunner } from '../platform/pull-runner.ts';
import { infraRetryDelayMs } from '../webhooks/fanout.ts';
import type { DomainDoc, DomainStore, DomainTransition } from './domain.store.ts';
import type { DomainStatus } from './domain.schemas.ts';

export const DOMAIN_EVENTS_DURABLE = 'domain-events';
const DOMAIN_EVENTS_ACK_WAIT_MS = 10_000;

export type DomainPhase = 'PendingSSL' | 'Active' | 'Error';
export type DomainEventType = Extract<EventType, 'domain.pending_ssl' | 'domain.activated' | 'domain.error'>;

/** A DOMAINS message, as the operator publishes it (JetStream msgID `${domain_id}.${generation}.${phase}`). */
export interface DomainMessage {
  domain_id: string;
  hostname: string;
  /** The workspace id. */
  tenant: string;
  type: DomainEventType;
  phase: DomainPhase;
  generation: number;
  reason: string | null;
  message: string | null;
  /** ISO 8601: when the operator saw the transition. */
  at: string;
}

const PHASES: Readonly<Record<DomainPhase, { status: DomainStatus; type: DomainEventType }>> = {
  PendingSSL: { status: 'pending_ssl', type: 'domain.pending_ssl' },
  Active: { status: 'active', type: 'domain.activated' },
  Error: { status: 'error', type: 'domain.error' },
};

/** The message's JetStream id: JetStream drops a second publish of the same transition. */
export function domainMessageId(message: Pick<DomainMessage, 'domain_id' | 'generation' | 'phase'>): string {
  return `${message.domain_id}.${message.generation}.${message.phase}`;
}

/** The parsed message, or null when it is not one (it is then dropped: redelivering it cannot fix it). */
export function parseDomainMessage(data: unknown): DomainMessage | null {
  if (typeof data !== 'object' || data === null) return null;
  const m = data as Record<string, unknown>;
  const text = (v: unknown) => typeof v === 'string' && v !== '';
  const nullableText = (v: unknown) => v === null || v === undefined || typeof v === 'string';
  if (!text(m.domain_id) || !text(m.hostname) || !text(m.tenant) || !text(m.at)) return null;
  if (typeof m.phase !== 'string' || !Object.hasOwn(PHASES, m.phase)) return null;
  if (m.type !== PHASES[m.phase as DomainPhase].type) return null;
  if (typeof m.generation !== 'number' || !Number.isInteger(m.generation) || m.generation < 0) return null;
  if (!nullableText(m.reason) || !nullableText(m.message) || Number.isNaN(Date.parse(m.at as string))) return null;
  return { ...(m as unknown as DomainMessage), reason: m.reason ?? null, message: m.message ?? null };
}

export interface DomainEventsOptions {
  nats: Nats;
  client: MongoClient;
  domains: DomainStore;
  events: EventStore;
  workspaces: WorkspaceStore;
  bus: CacheBus;
  logger: Logger;
  registry?: Registry;
  /** Wakes the outbox relay (it runs in the same process). */
  onEvent?: () => void;
}

export class DomainEvents {
  private readonly o: DomainEventsOptions;
  private readonly runner: PullRunner;
  private readonly handled: Counter<'result'>;

  constructor(options: DomainEventsOptions) {
    this.o = options;
    this.handled = new Counter({
      name: 'linkplane_domain_events_total',
      help: 'DOMAINS messages handled by the worker, by result',
      labelNames: ['result'],
      registers: options.registry ? [options.registry] : [],
    });
    for (const result of ['applied', 'ignored', 'unknown_domain', 'malformed']) this.handled.inc({ result }, 0);
    // One message at a time, across replicas too (max_ack_pending 1): transitions are applied in their order.
    this.runner = new PullRunner({
      nats: options.nats,
      stream: this.stream,
      durable: DOMAIN_EVENTS_DURABLE,
      concurrency: 1,
      ackWaitMs: DOMAIN_EVENTS_ACK_WAIT_MS,
      logger: options.logger,
      handle: (msg) => this.handle(msg),
      retryDelayMs: infraRetryDelayMs,
    });
  }

  get stream(): string {
    return this.o.nats.subjects.stream('DOMAINS');
  }

  async start(): Promise<void> {
    await this.ensureConsumer();
    this.runner.start();
  }

  stop(): Promise<void> {
    return this.runner.stop();
  }

  /**
   * Applies one transition. A redelivered or republished message finds it applied and changes nothing; a message
   * about a deleted domain, or older than the last applied generation, is acknowledged and dropped. The cache
   * invalidation goes out again for an ignored one: a crash may have come between the commit and the broadcast.
   */
  async apply(message: DomainMessage): Promise<'applied' | 'ignored' | 'unknown_domain'> {
    const { status, type } = PHASES[message.phase];
    const at = new Date(message.at);
    const error = status === 'error' ? { reason: message.reason ?? 'Unknown', message: message.message ?? 'Provisioning failed.' } : null;
    const change: DomainTransition = {
      status,
      error,
      generation_seen: message.generation,
      last_transition: `${message.generation}.${message.phase}`,
      updated_at: new Date(),
      ...(status === 'active' ? { activated_at: at } : {}),
    };
    // A partner domain's tenant is the partner: its events go to the partner's endpoints only.
    const workspace = await this.o.workspaces.findById(message.tenant);
    const doc = await inTransaction(this.o.client, async (session): Promise<DomainDoc | null> => {
      const updated = await this.o.domains.applyTransition(message.tenant, message.domain_id, change, session);
      if (!updated) return null;
      await this.o.events.append(
        {
          type,
          workspaceId: updated.owner_kind === 'partner' ? null : message.tenant,
          partnerId: updated.owner_kind === 'partner' ? message.tenant : (workspace?.partner_id ?? null),
          data: { id: updated._id, hostname: updated.hostname, status, ...(error ?? {}) } satisfies DomainEventData,
        },
        session,
      );
      return updated;
    });
    if (!doc && !(await this.o.domains.exists(message.domain_id))) return 'unknown_domain';
    if (doc) this.o.onEvent?.();
    await this.o.bus.publish({ kind: 'domain', id: message.domain_id, keys: [doc?.hostname ?? message.hostname] });
    return doc ? 'applied' : 'ignored';
  }

  private async handle(msg: JsMsg): Promise<void> {
    let data: unknown;
    try {
      data = msg.json();
    } catch {
      data = null;
    }
    const message = parseDomainMessage(data);
    if (!message) {
      this.o.logger.error({ subject: msg.subject, seq: msg.seq }, 'dropped a malformed DOMAINS message');
      this.handled.inc({ result: 'malformed' });
      msg.term();
      return;
    }
    const result = await this.apply(message);
    this.handled.inc({ result });
    if (result === 'applied') {
      this.o.logger.info({ domain_id: message.domain_id, hostname: message.hostname, phase: message.phase }, `domain ${message.hostname} is now ${PHASES[message.phase].status}`);
    }
    msg.ack();
  }

  /** Created at the first start and delivering from the start of the stream: no transition is skipped. */
  private async ensureConsumer(): Promise<void> {
    const jsm = this.o.nats.jsm;
    try {
      await jsm.consumers.info(this.stream, DOMAIN_EVENTS_DURABLE);
      return;
    } catch (error) {
      if (!/consumer not found/i.test(String((error as Error).message))) throw error;
    }
    try {
      await jsm.consumers.add(this.stream, {
        durable_name: DOMAIN_EVENTS_DURABLE,
        ack_policy: AckPolicy.Explicit,
        filter_subject: `${this.o.nats.subjects.prefix}domains.>`,
        deliver_policy: DeliverPolicy.All,
        // Handling takes one transaction; a message lost to a stopped fetch holds the (single) ack slot this long.
        ack_wait: nanos(DOMAIN_EVENTS_ACK_WAIT_MS),
        max_ack_pending: 1,
        max_waiting: 512,
      });
    } catch (error) {
      // Another replica created it between our info and add: that is the state we wanted.
      if (!/already (in use|exists)|exists/i.test(String((error as Error).message))) throw error;
    }
  }
}
