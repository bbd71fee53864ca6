import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api } from '../../api.ts';
import type { Page as ApiPage } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { Pager, useCursorList } from '../../components/pager.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';
import { inContext } from '../../paths.ts';
import { useCurrentContext, useSession } from '../../session.ts';
import { ClientStatus } from './client-status.tsx';
import { PartnerNav } from './partner-nav.tsx';
import type { Client, Plan } from './partner.types.ts';

type Pending = { client: Client; suspend: boolean } | null;

/** The partner's client workspaces: create one, suspend or reactivate it, and open it when you are one of its members. */
export default function ClientsScreen() {
  const context = useCurrentContext();
  const { session } = useSession();
  const { route } = useLocation();
  const clients = useCursorList<Client>('/v1/partner/clients', {}, 25);
  const plans = useResource((signal) => api.get<ApiPage<Plan>>('/v1/partner/plans', undefined, signal), context.id);
  const [creating, setCreating] = useState(false);
  const [pending, setPending] = useState<Pending>(null);
  const change = useAction();
  const planName = (id: string | null) => (id ? (plans.data?.data.find((p) => p.id === id)?.name ?? id) : 'Free platform plan');
  const member = (id: string) => session?.memberships.some((m) => m.id === id) ?? false;

  const confirm = async () => {
    if (!pending) return;
    const verb = pending.suspend ? 'suspend' : 'reactivate';
    const answer = await change.run(() => api.post<Client>(`/v1/partner/clients/${pending.client.id}/${verb}`));
    setPending(null);
    if (!answer) return;
    toast(`${answer.name} is ${answer.status === 'suspended' ? 'suspended' : 'active again'}.`);
    clients.reload();
  };
  // The client's own address: Back returns here, to the partner's clients.
  const open = (client: Client) => route(inContext({ kind: 'workspace', id: client.id }, '/'));

  return (
    <Page
      title="Clients"
      actions={
        !creating && (
          <button type="button" onClick={() => setCreating(true)}>
            New client
          </button>
        )
      }
    >
      <PartnerNav />
      {creating && (
        <NewClient
          plans={(plans.data?.data ?? []).filter((p) => p.status === 'active')}
          onCancel={() => setCreating(false)}
          onCreated={(client) => {
            setCreating(false);
            toast(`Client ${client.name} created.`);
            clients.reload();
          }}
        />
      )}
      <ErrorBanner error={clients.error ?? change.error} title={clients.error ? 'The clients could not be loaded' : 'That did not work'} />
      {clients.loading && clients.items.length === 0 && <p aria-busy="true">Loading…</p>}
      {!clients.loading && !clients.error && clients.items.length === 0 && clients.page === 1 && (
        <EmptyState title="No clients yet">A client is a workspace you manage and bill; create the first one.</EmptyState>
      )}
      {clients.items.length > 0 && (
        <DataTable
          caption="Client workspaces"
          hideCaption
          rows={clients.items}
          rowKey={(c) => c.id}
          columns={[
            { label: 'Client', render: (c) => <strong>{c.name}</strong> },
            { label: 'Status', render: (c) => <ClientStatus client={c} /> },
            { label: 'Plan', render: (c) => planName(c.plan) },
            { label: 'Identifier', render: (c) => <code>{c.id}</code> },
            { label: 'Created', render: (c) => new Date(c.created_at).toLocaleDateString() },
            {
              label: 'Actions',
              render: (c) => (
                <div class="row-buttons">
                  {member(c.id) && (
                    <button type="button" class="secondary outline small" onClick={() => open(c)} aria-label={`Open ${c.name}`}>
                      Open
                    </button>
                  )}
                  {c.status === 'suspended' || c.status === 'canceled' ? (
                    <button type="button" class="secondary outline small" onClick={() => setPending({ client: c, suspend: false })} aria-label={`Reactivate ${c.name}`}>
                      Reactivate
                    </button>
                  ) : (
                    <button type="button" class="secondary outline small" onClick={() => setPending({ client: c, suspend: true })} aria-label={`Suspend ${c.name}`}>
                      Suspend
                    </button>
                  )}
                </div>
              ),
            },
          ]}
        />
      )}
      <Pager {...clients.pager} />
      <ConfirmDialog
        open={pending !== null}
        title={pending?.suspend ? `Suspend ${pending.client.name}?` : `Reactivate ${pending?.client.name ?? ''}?`}
        confirmLabel={pending?.suspend ? 'Suspend client' : 'Reactivate client'}
        danger={pending?.suspend}
        busy={change.busy}
        onConfirm={() => void confirm()}
        onCancel={() => setPending(null)}
      >
        <p>
          {pending?.suspend
            ? 'Its keys are refused on writes and its links follow your setting for suspended clients. A payment does not lift a suspension made by hand.'
            : 'Its keys work again and its links redirect as usual.'}
        </p>
      </ConfirmDialog>
    </Page>
  );
}

function NewClient({ plans, onCreated, onCancel }: { plans: Plan[]; onCreated: (c: Client) => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [plan, setPlan] = useState('');
  const [customer, setCustomer] = useState('');
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    const created = await action.run(() =>
      api.post<Client>('/v1/partner/clients', { name: name.trim(), plan: plan || undefined, billing_customer_id: customer.trim() || undefined }),
    );
    if (created) onCreated(created);
  };

  return (
    <article>
      <h2>New client</h2>
      <form onSubmit={(e) => void submit(e)} aria-label="New client">
        {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The client was not created" />}
        <Field label="Client name" error={failure?.fieldError('name')}>
          {(control) => <input {...control} name="name" required maxLength={120} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Plan" error={failure?.fieldError('plan')} hint="Without a plan the client waits on the free platform plan.">
          {(control) => (
            <select {...control} name="plan" value={plan} onChange={(e) => setPlan(e.currentTarget.value)}>
              <option value="">No plan</option>
              {plans.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Billing customer id (optional)" error={failure?.fieldError('billing_customer_id')} hint="The client's customer id at your payment processor (Stripe cus_…).">
          {(control) => <input {...control} name="billing_customer_id" maxLength={255} value={customer} onInput={(e) => setCustomer(e.currentTarget.value)} />}
        </Field>
        <div class="form-actions">
          <button type="submit" disabled={action.busy} aria-busy={action.busy ? 'true' : undefined}>
            Create client
          </button>
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </article>
  );
}
