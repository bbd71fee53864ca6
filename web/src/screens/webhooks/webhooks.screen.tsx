import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Page as ApiPage } from '../../api.ts';
import { DataTable } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';
import { to } from '../../paths.ts';
import { useCurrentContext } from '../../session.ts';
import { SecretOnce } from './secret-once.tsx';
import { WebhookForm } from './webhook-form.tsx';
import type { WebhookFormValue } from './webhook-form.tsx';
import { WebhookStatus } from './webhook-status.tsx';
import type { Webhook, WebhookWithSecret } from './webhook.types.ts';

/** The endpoints of the workspace (or partner) in view, and the form that registers a new one. */
export default function WebhooksScreen() {
  const context = useCurrentContext();
  const list = useResource((signal) => api.get<ApiPage<Webhook>>('/v1/webhooks', undefined, signal), context.id);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<WebhookWithSecret | null>(null);
  const action = useAction();
  // Members read the endpoints; creating and changing them (their secrets) is for owners.
  const canEdit = context.role === 'owner';

  const create = async (value: WebhookFormValue) => {
    const answer = await action.run(() => api.post<WebhookWithSecret>('/v1/webhooks', { url: value.url, events: value.events, name: value.name || undefined }));
    if (!answer) return;
    setCreating(false);
    setCreated(answer);
    toast('Endpoint created.');
    list.reload();
  };

  const endpoints = list.data?.data ?? [];
  return (
    <Page
      title="Webhooks"
      actions={
        !creating &&
        canEdit && (
          <button type="button" onClick={() => (setCreated(null), setCreating(true))}>
            Add endpoint
          </button>
        )
      }
    >
      {created && (
        <SecretOnce
          title={`Endpoint created: ${created.name ?? created.url}`}
          secret={created.secret}
          onDone={() => setCreated(null)}
        />
      )}
      {creating && (
        <article>
          <h2>New endpoint</h2>
          <WebhookForm kind={context.kind} submitLabel="Create endpoint" busy={action.busy} error={action.error} onSubmit={(v) => void create(v)} onCancel={() => (setCreating(false), action.setError(null))} />
        </article>
      )}
      <ErrorBanner error={list.error} title="The endpoints could not be loaded" />
      {list.loading && !list.data && <p aria-busy="true">Loading endpoints…</p>}
      {!canEdit && <p>Only owners add and change endpoints.</p>}
      {list.data && endpoints.length === 0 && !creating && (
        <EmptyState title="No endpoints yet" action={canEdit && <button type="button" onClick={() => setCreating(true)}>Add endpoint</button>}>
          An endpoint receives a signed POST for each event it subscribes to, instead of polling the API.
        </EmptyState>
      )}
      {endpoints.length > 0 && (
        <DataTable
          caption="Webhook endpoints"
          hideCaption
          rows={endpoints}
          rowKey={(w) => w.id}
          columns={[
            {
              // The URL once: as the link when the endpoint has no name, under the name when it has one.
              label: 'Endpoint',
              render: (w) =>
                w.name ? (
                  <>
                    <a href={to(`/webhooks/${w.id}`)}>{w.name}</a>
                    <div>
                      <code class="wrap">{w.url}</code>
                    </div>
                  </>
                ) : (
                  <a href={to(`/webhooks/${w.id}`)}>
                    <code class="wrap">{w.url}</code>
                  </a>
                ),
            },
            { label: 'Status', render: (w) => <WebhookStatus status={w.status} /> },
            { label: 'Events', render: (w) => w.events.join(', ') },
            { label: 'Created', render: (w) => new Date(w.created_at).toLocaleString() },
          ]}
        />
      )}
    </Page>
  );
}
