import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import type { Page as ApiPage } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';
import { useCurrentContext } from '../../session.ts';
import { parseEntries } from './ip-entries.ts';
import { IpListCard } from './ip-list-card.tsx';
import { WorkspaceNav } from './workspace-nav.tsx';
import type { IpList } from './workspace.types.ts';

/** IP lists: named sets of addresses and ranges that workspace and link rules match with `ip_list_ids`. */
export default function IpListsScreen() {
  const context = useCurrentContext();
  const lists = useResource((signal) => api.get<ApiPage<IpList>>('/v1/ip-lists', undefined, signal), context.id);
  const [deleting, setDeleting] = useState<IpList | null>(null);
  const remove = useAction();

  const confirmDelete = async () => {
    if (!deleting) return;
    const done = await remove.run(async () => (await api.delete(`/v1/ip-lists/${deleting.id}`), true));
    setDeleting(null);
    if (!done) return;
    toast(`IP list ${deleting.name} deleted.`);
    lists.reload();
  };

  const items = lists.data?.data ?? [];
  return (
    <Page title="IP lists">
      <WorkspaceNav />
      <p>Rules match a visitor against these lists by their identifier (condition “IP list”). A list holds addresses and CIDR ranges.</p>
      <ErrorBanner error={lists.error ?? remove.error} title={lists.error ? 'The IP lists could not be loaded' : 'The list was not deleted'} />
      <NewIpList onCreated={lists.reload} />
      {lists.loading && !lists.data && <p aria-busy="true">Loading…</p>}
      {lists.data && items.length === 0 && <EmptyState title="No IP lists yet">Create one above, then name it in a rule.</EmptyState>}
      {items.map((list) => (
        <IpListCard key={list.id} list={list} onChanged={lists.reload} onDelete={() => setDeleting(list)} />
      ))}
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete the IP list ${deleting?.name ?? ''}?`}
        confirmLabel="Delete list"
        danger
        busy={remove.busy}
        onConfirm={() => void confirmDelete()}
        onCancel={() => setDeleting(null)}
      >
        <p>Rules naming it no longer match its addresses.</p>
      </ConfirmDialog>
    </Page>
  );
}

function NewIpList({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [entries, setEntries] = useState('');
  const [note, setNote] = useState('');
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    const created = await action.run(() => api.post<IpList>('/v1/ip-lists', { name: name.trim(), entries: parseEntries(entries), note: note.trim() || undefined }));
    if (!created) return;
    setName('');
    setEntries('');
    setNote('');
    toast(`IP list ${created.name} created.`);
    onCreated();
  };

  return (
    <details class="new-ip-list">
      <summary role="button" class="secondary outline">
        New IP list
      </summary>
      <form onSubmit={(e) => void submit(e)} aria-label="New IP list">
        {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The list was not created" />}
        <Field label="Name" error={failure?.fieldError('name')}>
          {(control) => <input {...control} name="name" required maxLength={80} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Addresses and ranges" error={failure?.fieldError('entries', true)} hint="One per line (or separated by commas): 203.0.113.7, 198.51.100.0/24, 2001:db8::/32">
          {(control) => <textarea {...control} name="entries" rows={4} value={entries} onInput={(e) => setEntries(e.currentTarget.value)} />}
        </Field>
        <Field label="Note (optional)" error={failure?.fieldError('note')}>
          {(control) => <input {...control} name="note" maxLength={2000} value={note} onInput={(e) => setNote(e.currentTarget.value)} />}
        </Field>
        <button type="submit" disabled={action.busy} aria-busy={action.busy ? 'true' : undefined}>
          Create IP list
        </button>
      </form>
    </details>
  );
}
