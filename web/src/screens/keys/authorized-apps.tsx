import { useState } from 'preact/hooks';
import { api, describeError } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { localDateTime } from '../../components/date-time.ts';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { toast } from '../../components/toast.tsx';
import { useFetch } from '../../components/use-fetch.ts';
import type { AuthorizedAppView as AuthorizedApp } from '../../../../src/oauth/oauth.schemas.ts';

/**
 * The apps people authorised by OAuth to act in the workspace (MCP hosts that connected by URL), beside its keys:
 * listed for every member, revoked by owners; a revoked app's tokens stop working at once.
 */
export function AuthorizedApps({ owner }: { owner: boolean }) {
  const [generation, setGeneration] = useState(0);
  const apps = useFetch<{ data: AuthorizedApp[] }>('/v1/authorized-apps', {}, generation);
  const [revoking, setRevoking] = useState<AuthorizedApp | null>(null);
  const [busy, setBusy] = useState(false);
  const label = (app: AuthorizedApp | null) => app?.client_name ?? app?.client_id ?? '';

  const revoke = async () => {
    if (!revoking) return;
    setBusy(true);
    try {
      await api.delete(`/v1/authorized-apps/${encodeURIComponent(revoking.id)}`);
      toast(`“${label(revoking)}” can no longer act in this workspace.`);
      setRevoking(null);
      setGeneration((g) => g + 1);
    } catch (failure) {
      toast(`The app could not be revoked: ${describeError(failure)}`, 'error', 10_000);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="apps-title" aria-busy={apps.loading ? 'true' : undefined}>
      <h2 id="apps-title">Authorised apps</h2>
      <p>Apps such as AI assistants that connected by URL and were approved by someone of this workspace.</p>
      <ErrorBanner error={apps.error} title="The authorised apps could not be loaded" />
      {apps.data && apps.data.data.length === 0 && <EmptyState title="No app authorised yet" />}
      {apps.data && apps.data.data.length > 0 && (
        <DataTable<AuthorizedApp>
          caption="Authorised apps, newest first"
          hideCaption
          rows={apps.data.data}
          rowKey={(a) => a.id}
          columns={[
            { label: 'App', render: (a) => a.client_name ?? <code>{a.client_id}</code> },
            { label: 'Scopes', render: (a) => <span class="scope-list">{a.scopes.join(', ')}</span> },
            { label: 'Authorised', render: (a) => localDateTime(a.created_at) },
            { label: 'Last used', render: (a) => localDateTime(a.last_used_at) },
            {
              label: 'Status',
              render: (a) =>
                a.revoked_at ? <span class="key-state revoked">Revoked {localDateTime(a.revoked_at)}</span> : <span class="key-state active">Active</span>,
            },
            ...(owner
              ? [
                  {
                    label: 'Actions',
                    render: (a: AuthorizedApp) =>
                      a.revoked_at ? null : (
                        <button type="button" class="secondary outline small-button" onClick={() => setRevoking(a)}>
                          Revoke <span class="visually-hidden">{label(a)}</span>
                        </button>
                      ),
                  },
                ]
              : []),
          ]}
        />
      )}
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke “${label(revoking)}”?`}
        confirmLabel="Revoke app"
        danger
        busy={busy}
        onConfirm={() => void revoke()}
        onCancel={() => setRevoking(null)}
      >
        <p>Its tokens stop working at once; to use it again, someone has to approve it anew.</p>
      </ConfirmDialog>
    </section>
  );
}
