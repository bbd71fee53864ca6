import type { WebhookDelivery } from './webhook.types.ts';

/**
 * Whether more attempts are on their way for the deliveries shown: one is pending, or a retry is scheduled ahead of
 * `now`. An older failed attempt keeps the retry time it had, which has passed; counting it kept the log polling
 * for as long as the page stayed open.
 */
export function moreAttemptsComing(deliveries: Pick<WebhookDelivery, 'outcome' | 'next_retry_at'>[], now: number): boolean {
  return deliveries.some((d) => d.outcome === 'pending' || (d.next_retry_at !== null && Date.parse(d.next_retry_at) > now));
}
