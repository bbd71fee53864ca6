import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';
import { to } from '../../paths.ts';
import { useCurrentContext } from '../../session.ts';
import { DeliveryLog } from './delivery-log.tsx';
import { SecretOnce } from './secret-once.tsx';
import { WebhookForm } from './webhook-form.tsx';
import type { WebhookFormValue } from './webhook-form.tsx';
import { WebhookStatus } from './webhook-status.tsx';
import type { Webhook, WebhookWithSecret } from './webhook.types.ts';

/** How long the delivery log polls after an action that sends deliveries. */
const LIVE_AFTER_ACTION_MS = 30_000;

type Dialog = 'rotate' | 'delete' | null;

/** One endpoint: its settings, the actions on it (test, rotate, re-enable, edit, delete) and its delivery log. */
export default function WebhookScreen() {
  const context = useCurrentContext();
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params.id ?? '';
  const webhook = useResource((signal) => api.get<Webhook>(`/v1/webhooks/${encodeURIComponent(id)}`, undefined, signal), `${context.id}/${id}`);
  const [editing, setEditing] = useState(false);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [rotated, setRotated] = useState<WebhookWithSecret | null>(null);
  const [refreshKey, setRefreshKey] = useState(0);
  const [liveUntil, setLiveUntil] = useState(0);
  const [live, setLive] = useState(false);
  const action = useAction();
  // Members read the endpoint and its log; changing it (its secret above all) is for owners.
  const canEdit = context.role === 'owner';

  useEffect(() => {
    const remaining = liveUntil - Date.now();
    if (remaining <= 0) return;
    setLive(true);
    const timer = setTimeout(() => setLive(false), remaining);
    return () => clearTimeout(timer);
  }, [liveUntil]);
  // Retries can turn the endpoint failing meanwhile: its status is read again as long as the log is watched.
  const { reload: reloadWebhook } = webhook;
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(reloadWebhook, 2000);
    return () => clearInterval(timer);
  }, [live, reloadWebhook]);
  const deliveriesCaused = () => {
    setRefreshKey((k) => k + 1);
    setLiveUntil(Date.now() + LIVE_AFTER_ACTION_MS);
  };

  const current = webhook.data;
  const path = `/v1/webhooks/${encodeURIComponent(id)}`;

  const sendTest = async () => {
    const answer = await action.run(() => api.post<{ delivery_id: string }>(`${path}/test`));
    if (!answer) return;
    toast(`Test event queued (${answer.delivery_id}).`);
    deliveriesCaused();
  };
  const reEnable = async () => {
    const answer = await action.run(() => api.patch<Webhook>(path, { status: 'active' }));
    if (!answer) return;
    webhook.set(answer);
    toast('Endpoint re-enabled: it receives new events again.');
    deliveriesCaused();
  };
  const rotate = async () => {
    const answer = await action.run(() => api.post<WebhookWithSecret>(`${path}/rotate-secret`));
    setDialog(null);
    if (!answer) return;
    const { secret: _secret, ...rest } = answer;
    webhook.set(rest);
    setRotated(answer);
  };
  const remove = async () => {
    const done = await action.run(async () => (await api.delete(path), true));
    setDialog(null);
    if (!done) return;
    toast('Endpoint deleted.');
    route(to('/webhooks'));
  };
  const save = async (value: WebhookFormValue) => {
    const answer = await action.run(() => api.patch<Webhook>(path, { url: value.url, events: value.events, name: value.name || null }));
    if (!answer) return;
    webhook.set(answer);
    setEditing(false);
    toast('Endpoint saved.');
  };

  if (!current) {
    return (
      <Page title="Webhook endpoint">
        <p>
          <a href={to('/webhooks')}>All endpoints</a>
        </p>
        <ErrorBanner error={webhook.error} title="The endpoint could not be loaded" />
        {webhook.loading && <p aria-busy="true">Loading…</p>}
      </Page>
    );
  }

  return (
    <Page title={current.name ?? 'Webhook endpoint'}>
      <p>
        <a href={to('/webhooks')}>All endpoints</a>
      </p>
      {rotated && (
        <SecretOnce
          title="New signing secret"
          secret={rotated.secret}
          note={graceNote(rotated.previous_secret_expires_at)}
          onDone={() => setRotated(null)}
        />
      )}
      {current.status === 'failing' && (
        <article class="notice notice-bad" aria-labelledby="failing-title">
          <h2 id="failing-title">This endpoint is failing</h2>
          <p>Every retry of a delivery failed, so it receives no new events. Events missed while it was failing are not replayed.</p>
          {canEdit && (
            <button type="button" onClick={() => void reEnable()} disabled={action.busy}>
              Re-enable endpoint
            </button>
          )}
        </article>
      )}
      {!editing && !rotated && <ErrorBanner error={action.error} title="That did not work" />}
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <WebhookStatus status={current.status} />
        </dd>
        <dt>URL</dt>
        <dd>
          <code class="wrap">{current.url}</code>
        </dd>
        <dt>Events</dt>
        <dd>{current.events.map((e) => <code key={e} class="tag">{e}</code>)}</dd>
        <dt>Secret</dt>
        <dd>
          {current.secret_rotated_at ? `Rotated ${new Date(current.secret_rotated_at).toLocaleString()}` : 'Never rotated'}
          {current.previous_secret_expires_at && ` · the previous secret still signs until ${new Date(current.previous_secret_expires_at).toLocaleString()}`}
        </dd>
        <dt>Identifier</dt>
        <dd>
          <code>{current.id}</code>
        </dd>
      </dl>
      {!canEdit && <p>Only owners send test events and change endpoints.</p>}
      <div class="form-actions" hidden={!canEdit}>
        <button type="button" onClick={() => void sendTest()} disabled={action.busy || current.status === 'failing'} aria-describedby={current.status === 'failing' ? 'failing-title' : undefined}>
          Send test event
        </button>
        <button type="button" class="secondary" onClick={() => (action.setError(null), setEditing(!editing))} aria-expanded={editing ? 'true' : 'false'}>
          Edit
        </button>
        <button type="button" class="secondary" onClick={() => setDialog('rotate')}>
          Rotate secret
        </button>
        <button type="button" class="danger" onClick={() => setDialog('delete')}>
          Delete
        </button>
      </div>
      {editing && (
        <article>
          <h2>Edit endpoint</h2>
          <WebhookForm
            kind={context.kind}
            initial={{ url: current.url, name: current.name ?? '', events: current.events }}
            submitLabel="Save endpoint"
            busy={action.busy}
            error={action.error}
            onSubmit={(v) => void save(v)}
            onCancel={() => (setEditing(false), action.setError(null))}
          />
        </article>
      )}
      <DeliveryLog webhookId={current.id} refreshKey={refreshKey} live={live} />
      <ConfirmDialog open={dialog === 'rotate'} title="Rotate the signing secret?" confirmLabel="Rotate secret" busy={action.busy} onConfirm={() => void rotate()} onCancel={() => setDialog(null)}>
        <p>
          A new secret is generated and shown once. During the grace period deliveries carry a signature for each secret, so receivers keep verifying
          while you update them.
        </p>
      </ConfirmDialog>
      <ConfirmDialog open={dialog === 'delete'} title="Delete this endpoint?" confirmLabel="Delete endpoint" danger busy={action.busy} onConfirm={() => void remove()} onCancel={() => setDialog(null)}>
        <p>It receives no further events, and its delivery log is deleted with it.</p>
      </ConfirmDialog>
    </Page>
  );
}

function graceNote(previousExpires: string | null): string {
  if (!previousExpires) return 'The previous secret stopped signing at once.';
  const hours = Math.round((Date.parse(previousExpires) - Date.now()) / 3_600_000);
  return `Grace period: the previous secret keeps signing deliveries until ${new Date(previousExpires).toLocaleString()} (about ${hours} h), alongside the new one.`;
}

