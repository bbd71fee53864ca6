// DOMAINS messages: one per phase transition. The message id is domain + generation + phase, so a re-publish after
// a crash between the publish and the status patch (which records that it was sent) is dropped by JetStream.
import type { Nats } from '../src/platform/nats.ts';
import type { Domain, Phase } from './domain.ts';
import { generationOf, type Transition } from './status.ts';

export type DomainEventType = 'domain.pending_ssl' | 'domain.activated' | 'domain.error';

export interface DomainEventMessage {
  domain_id: string;
  hostname: string;
  tenant: string;
  type: DomainEventType;
  phase: Phase;
  generation: number;
  reason: string | null;
  message: string | null;
  at: string;
}

const TYPES: Partial<Record<Phase, DomainEventType>> = {
  PendingSSL: 'domain.pending_ssl',
  Active: 'domain.activated',
  Error: 'domain.error',
};

export function domainEvent(domain: Domain, transition: Transition, at: Date): DomainEventMessage {
  const type = TYPES[transition.phase];
  if (type === undefined) throw new Error(`no domain event for phase ${transition.phase}`);
  const failed = transition.phase === 'Error';
  return {
    domain_id: domain.spec.domainId,
    hostname: domain.spec.hostname,
    tenant: domain.spec.tenant,
    type,
    phase: transition.phase,
    generation: generationOf(domain),
    reason: failed ? transition.reason : null,
    message: failed ? transition.message : null,
    at: at.toISOString(),
  };
}

export function messageId(event: Pick<DomainEventMessage, 'domain_id' | 'generation' | 'phase'>): string {
  return `${event.domain_id}.${event.generation}.${event.phase}`;
}

export interface DomainEventPublisher {
  /** Resolves once JetStream has stored the message (or recognised it as a duplicate). */
  publish(event: DomainEventMessage): Promise<{ duplicate: boolean }>;
}

export class NatsDomainEventPublisher implements DomainEventPublisher {
  private readonly nats: Nats;
  constructor(nats: Nats) {
    this.nats = nats;
  }

  async publish(event: DomainEventMessage): Promise<{ duplicate: boolean }> {
    const ack = await this.nats.js.publish(this.nats.subjects.domain(event.tenant, event.type), JSON.stringify(event), {
      msgID: messageId(event),
      timeout: 5000,
    });
    return { duplicate: ack.duplicate };
  }
}
