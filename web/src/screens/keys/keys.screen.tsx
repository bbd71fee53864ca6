import { useState } from 'preact/hooks';
import { api, describeError } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { localDateTime } from '../../components/date-time.ts';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { useCurrentContext } from '../../session.ts';
import { useFetch } from '../../components/use-fetch.ts';
import { CreateKeyForm } from './create-key-form.tsx';
import { keyState, type CreatedKey, type KeyRecord, type ScopeInfo } from './key-types.ts';
import { NewKeyPanel } from './new-key-panel.tsx';
import { AuthorizedApps } from './authorized-apps.tsx';
import './keys.css';

/** API keys of the workspace or partner in view: create (owners), list with last use, revoke (owners). */
export default function KeysScreen() {
  const context = useCurrentContext();
  const owner = context.role === 'owner';
  const [generation, setGeneration] = useState(0);
  const keys = useFetch<{ data: KeyRecord[] }>('/auth/keys', { context: context.id }, generation);
  const scopes = useFetch<{ data: ScopeInfo[] }>(owner ? '/auth/scopes' : null, { context: context.id });
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [revoking, setRevoking] = useState<KeyRecord | null>(null);
  const [busy, setBusy] = useState(false);

  const revoke = async () => {
    if (!revoking) return;
    setBusy(true);
    try {
      await api.delete(`/auth/keys/${encodeURIComponent(revoking.id)}`, { context: context.id });
      toast(`The key “${revoking.name ?? revoking.prefix}” was revoked.`);
      setRevoking(null);
      setGeneration((g) => g + 1);
    } catch (failure) {
      toast(`The key could not be revoked: ${describeError(failure)}`, 'error', 10_000);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page title="API keys">
      <p>
        Keys let programs call the API for {context.kind === 'partner' ? 'the partner' : 'the workspace'} {context.name}. Each holds only the scopes it is given.
      </p>
      {created && <NewKeyPanel created={created} onDone={() => setCreated(null)} />}
      {owner ? (
        <>
          <ErrorBanner error={scopes.error} title="The scopes could not be loaded" />
          {scopes.data && (
            <CreateKeyForm
              context={context.id}
              scopes={scopes.data.data}
              onCreated={(next) => {
                setCreated(next);
                setGeneration((g) => g + 1);
              }}
            />
          )}
        </>
      ) : (
        <p class="note">Only owners of {context.name} can create or revoke keys.</p>
      )}
      <section aria-labelledby="keys-title" aria-busy={keys.loading ? 'true' : undefined}>
        <h2 id="keys-title">Keys</h2>
        <ErrorBanner error={keys.error} title="The keys could not be loaded" />
        {keys.data && keys.data.data.length === 0 && <EmptyState title="No keys yet" />}
        {keys.data && keys.data.data.length > 0 && (
          <DataTable<KeyRecord>
            caption="Keys, newest first"
            hideCaption
            rows={keys.data.data}
            rowKey={(k) => k.id}
            columns={[
              { label: 'Name', render: (k) => k.name ?? <em>unnamed</em> },
              { label: 'Key', render: (k) => <code>{k.prefix}…</code> },
              { label: 'Scopes', render: (k) => <span class="scope-list">{k.scopes.join(', ')}</span> },
              { label: 'Created', render: (k) => localDateTime(k.created_at) },
              { label: 'Expires', render: (k) => localDateTime(k.expires_at) },
              { label: 'Last used', render: (k) => localDateTime(k.last_used_at) },
              { label: 'Status', render: (k) => <KeyStatus keyRecord={k} /> },
              ...(owner
                ? [
                    {
                      label: 'Actions',
                      render: (k: KeyRecord) =>
                        keyState(k) === 'revoked' ? null : (
                          <button type="button" class="secondary outline small-button" onClick={() => setRevoking(k)}>
                            Revoke <span class="visually-hidden">{k.name ?? k.prefix}</span>
                          </button>
                        ),
                    },
                  ]
                : []),
            ]}
          />
        )}
      </section>
      {context.kind === 'workspace' && <AuthorizedApps owner={owner} />}
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke “${revoking?.name ?? revoking?.prefix ?? ''}”?`}
        confirmLabel="Revoke key"
        danger
        busy={busy}
        onConfirm={() => void revoke()}
        onCancel={() => setRevoking(null)}
      >
        <p>Programs using it are refused at once. This cannot be undone.</p>
      </ConfirmDialog>
    </Page>
  );
}

function KeyStatus({ keyRecord }: { keyRecord: KeyRecord }) {
  const state = keyState(keyRecord);
  if (state === 'revoked') return <span class="key-state revoked">Revoked {localDateTime(keyRecord.revoked_at)}</span>;
  if (state === 'expired') return <span class="key-state expired">Expired</span>;
  return <span class="key-state active">Active</span>;
}
