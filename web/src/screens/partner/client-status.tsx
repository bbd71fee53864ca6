import type { Client } from './partner.types.ts';

const LABELS: Record<Client['status'], string> = {
  pending: 'Pending (no invoice paid yet)',
  subscribed: 'Subscribed',
  past_due: 'Past due',
  suspended: 'Suspended',
  canceled: 'Canceled',
};

/** A client's subscription state in words, with why it is suspended. */
export function ClientStatus({ client }: { client: Client }) {
  const tone = client.status === 'subscribed' ? 'ok' : client.status === 'pending' ? 'wait' : 'bad';
  const reason = client.status === 'suspended' && client.subscription.suspended_reason ? ` (${client.subscription.suspended_reason})` : '';
  return <span class={`state-badge state-${tone}`}>{LABELS[client.status] + reason}</span>;
}
