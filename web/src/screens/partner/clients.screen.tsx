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
import { loadSession, useCurrentContext, useSession } from '../../session.ts';
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
  // Without a partner plan the client is on its workspace's platform plan, whichever that is.
  const planName = (c: Client) => (c.plan ? (plans.data?.data.find((p) => p.id === c.plan)?.name ?? c.plan) : `${c.platform_plan.name} platform plan`);
  const member = (id: string) => session?.memberships.some((m) => m.id === id) ?? false;
  // A partner owner may open any client (joining it as owner first) and invite its owner.
  const owner = context.role === 'owner';
  const [inviting, setInviting] = useState<Client | null>(null);

  const confirm = async () => {
    if (!pending) return;
    const verb = pending.suspend ? 'suspend' : 'reactivate';
    const answer = await change.run(() => api.post<Client>(`/v1/partner/clients/${pending.client.id}/${verb}`));
    setPending(null);
    if (!answer) return;
    toast(`${answer.name} is ${answer.status === 'suspended' ? 'suspended' : 'active again'}.`);
    clients.reload();
  };
  // The client's own address: Back returns here, to the partner's clients. A partner owner who is not a member of
  // the client yet joins it first (as its owner).
  const open = async (client: Client) => {
    if (!member(client.id)) {
      const joined = await change.run(async () => {
        await api.post('/auth/memberships', { context: client.id });
        return loadSession();
      });
      if (!joined) return;
    }
    route(inContext({ kind: 'workspace', id: client.id }, '/'));
  };

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
            toast(`Client ${client.name} created. Open it, or invite its owner, from its row.`);
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
            { label: 'Plan', render: (c) => planName(c) },
            { label: 'Identifier', render: (c) => <code>{c.id}</code> },
            { label: 'Created', render: (c) => new Date(c.created_at).toLocaleDateString() },
            {
              label: 'Actions',
              render: (c) => (
                <div class="row-buttons">
                  {(owner || member(c.id)) && (
                    <button type="button" class="secondary outline small" onClick={() => void open(c)} aria-label={`Open ${c.name}`}>
                      Open
                    </button>
                  )}
                  {owner && (
                    <button type="button" class="secondary outline small" onClick={() => setInviting(c)} aria-label={`Invite owner of ${c.name}`}>
                      Invite owner
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
      {inviting && <InviteOwner client={inviting} onClose={() => setInviting(null)} />}
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

interface CreatedInvite {
  email: string;
  sent: boolean;
  url?: string;
}

/** E-mails an invitation to own the client workspace (POST /auth/invites); without SMTP, hands over the link. */
function InviteOwner({ client, onClose }: { client: Client; onClose: () => void }) {
  const [email, setEmail] = useState('');
  const [created, setCreated] = useState<CreatedInvite | null>(null);
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;
  const open = (element: HTMLDialogElement | null) => {
    if (element && !element.open) element.showModal();
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    const answer = await action.run(() => api.post<CreatedInvite>('/auth/invites', { context: client.id, email: email.trim(), role: 'owner' }));
    if (!answer) return;
    setCreated(answer);
    if (answer.sent) toast(`Invitation sent to ${answer.email}.`);
  };
  return (
    <dialog ref={open} aria-labelledby="invite-owner-title" onCancel={(e) => (e.preventDefault(), onClose())}>
      <article>
        <h2 id="invite-owner-title">Invite the owner of {client.name}</h2>
        {created ? (
          <>
            {created.sent ? (
              <p>An invitation was e-mailed to {created.email}. It works once.</p>
            ) : (
              <>
                <p>E-mail is not configured here: send this link to {created.email} yourself. It works once.</p>
                <p>
                  <code class="wrap">{created.url}</code>
                </p>
              </>
            )}
            <footer>
              <button type="button" onClick={onClose}>
                Done
              </button>
            </footer>
          </>
        ) : (
          <form onSubmit={(e) => void submit(e)} aria-label={`Invite the owner of ${client.name}`}>
            {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The invitation was not sent" />}
            <Field label="Owner's e-mail address" error={failure?.fieldError('email')} hint="They become an owner of this client workspace (not of your partner account).">
              {(control) => <input {...control} type="email" required maxLength={254} value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
            </Field>
            <footer>
              <button type="button" class="secondary" onClick={onClose}>
                Cancel
              </button>
              <button type="submit" disabled={action.busy || !email.trim()} aria-busy={action.busy ? 'true' : undefined}>
                Send the invitation
              </button>
            </footer>
          </form>
        )}
      </article>
    </dialog>
  );
}
