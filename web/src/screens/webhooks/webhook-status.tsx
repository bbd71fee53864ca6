import type { Webhook } from './webhook.types.ts';

/** The endpoint's state in words (never colour alone). */
export function WebhookStatus({ status }: { status: Webhook['status'] }) {
  return <span class={`state-badge state-${status === 'active' ? 'ok' : 'bad'}`}>{status === 'active' ? 'Active' : 'Failing'}</span>;
}
