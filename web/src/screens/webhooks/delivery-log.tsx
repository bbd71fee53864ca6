import { useEffect } from 'preact/hooks';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Pager, useCursorList } from '../../components/pager.tsx';
import { moreAttemptsComing } from './delivery-polling.ts';
import type { WebhookDelivery } from './webhook.types.ts';

interface DeliveryLogProps {
  webhookId: string;
  /** Bumped by the screen after an action that causes deliveries (a test event, re-enabling). */
  refreshKey: number;
  /** Keeps polling while true (deliveries of a recent action may still be on their way or retrying). */
  live: boolean;
}

/** Every attempt to reach the endpoint, newest first, with the request sent and the answer received. */
export function DeliveryLog({ webhookId, refreshKey, live }: DeliveryLogProps) {
  const log = useCursorList<WebhookDelivery>(`/v1/webhooks/${webhookId}/deliveries`, {}, 20);
  const { reload, page } = log;
  useEffect(() => {
    if (refreshKey > 0) reload();
  }, [refreshKey, reload]);
  // Only the first page changes as deliveries arrive; a person reading older pages is not disturbed.
  const pending = moreAttemptsComing(log.items, Date.now());
  useEffect(() => {
    if (page !== 1 || (!live && !pending)) return;
    const timer = setInterval(reload, 2000);
    return () => clearInterval(timer);
  }, [live, pending, page, reload]);

  return (
    <section aria-labelledby="delivery-log-title">
      <div class="section-header">
        <h2 id="delivery-log-title">Delivery log</h2>
        <button type="button" class="secondary outline" onClick={reload} aria-busy={log.loading ? 'true' : undefined}>
          Refresh
        </button>
      </div>
      <ErrorBanner error={log.error} title="The delivery log could not be loaded" />
      {!log.loading && log.items.length === 0 && !log.error && <p>No deliveries yet. Send a test event to see one here.</p>}
      <ul class="delivery-log" aria-label="Deliveries">
        {log.items.map((delivery) => (
          <li key={`${delivery.id}-${delivery.attempt}`}>
            <DeliveryEntry delivery={delivery} />
          </li>
        ))}
      </ul>
      <Pager {...log.pager} />
    </section>
  );
}

function outcomeText(delivery: WebhookDelivery): string {
  if (delivery.outcome === 'pending') return 'Pending';
  const status = delivery.response?.status;
  if (delivery.outcome === 'succeeded') return `Succeeded (${status ?? '?'})`;
  return status === null || status === undefined ? 'Failed (no answer)' : `Failed (${status})`;
}

function DeliveryEntry({ delivery }: { delivery: WebhookDelivery }) {
  const tone = delivery.outcome === 'succeeded' ? 'ok' : delivery.outcome === 'failed' ? 'bad' : 'wait';
  return (
    <details class="delivery">
      <summary>
        <span class={`state-badge state-${tone}`}>{outcomeText(delivery)}</span> <code>{delivery.event_type}</code> · attempt {delivery.attempt} · {delivery.duration_ms} ms ·{' '}
        <time dateTime={delivery.created_at}>{new Date(delivery.created_at).toLocaleString()}</time>
      </summary>
      <dl class="delivery-facts">
        <dt>Delivery</dt>
        <dd>
          <code>{delivery.id}</code>
        </dd>
        <dt>Event</dt>
        <dd>
          <code>{delivery.event_id}</code>
        </dd>
        {delivery.next_retry_at && (
          <>
            <dt>Next retry</dt>
            <dd>
              <time dateTime={delivery.next_retry_at}>{new Date(delivery.next_retry_at).toLocaleString()}</time>
            </dd>
          </>
        )}
      </dl>
      <div class="delivery-parts">
        <section aria-label="Request">
          <h3>Request</h3>
          <Headers headers={delivery.request.headers} />
          <pre class="payload" tabIndex={0} aria-label="Request body">
            {pretty(delivery.request.body)}
          </pre>
        </section>
        <section aria-label="Response">
          <h3>Response</h3>
          {delivery.response ? (
            <>
              <p>Status: {delivery.response.status ?? 'no HTTP answer (timeout or refused connection)'}</p>
              <Headers headers={delivery.response.headers} />
              <pre class="payload" tabIndex={0} aria-label="Response body">
                {delivery.response.body || '(empty body)'}
              </pre>
            </>
          ) : (
            <p>No response yet.</p>
          )}
        </section>
      </div>
    </details>
  );
}

function Headers({ headers }: { headers: Record<string, string> }) {
  const entries = Object.entries(headers);
  if (entries.length === 0) return <p>No headers.</p>;
  return (
    <dl class="headers">
      {entries.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>
            <code>{value}</code>
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** The body as sent, indented when it is JSON (the raw bytes are what was signed; this is only for reading). */
function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}
