import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';
import { useCurrentContext, useSession } from '../../session.ts';

interface Member {
  user_id: string;
  email: string;
  name: string | null;
  role: 'owner' | 'member';
  joined_at: string;
}

interface Invite {
  id: string;
  email: string;
  role: 'owner' | 'member';
  expires_at: string;
}

interface Members {
  data: Member[];
  invites: Invite[];
}

type Pending = { kind: 'member'; member: Member } | { kind: 'invite'; invite: Invite } | null;

/** The people of the workspace or partner in view, the open invitations, and (for owners) inviting by e-mail. */
export default function MembersScreen() {
  const context = useCurrentContext();
  const { session } = useSession();
  const members = useResource((signal) => api.get<Members>('/auth/members', { context: context.id }, signal), context.id);
  const [pending, setPending] = useState<Pending>(null);
  const remove = useAction();
  const isOwner = context.role === 'owner';

  const confirm = async () => {
    if (!pending) return;
    const done = await remove.run(async () => {
      if (pending.kind === 'member') await api.delete('/auth/members', { context: context.id, user_id: pending.member.user_id });
      else await api.delete(`/auth/invites/${pending.invite.id}`);
      return true;
    });
    setPending(null);
    if (!done) return;
    toast(pending.kind === 'member' ? `${pending.member.email} removed.` : `Invitation to ${pending.invite.email} withdrawn.`);
    members.reload();
  };

  const data = members.data;
  return (
    <Page title="Members">
      <p>
        People who can sign in to <strong>{context.name}</strong>. Owners manage settings, keys, webhooks and members; members work with links, domains
        and analytics.
      </p>
      <ErrorBanner error={members.error ?? remove.error} title={members.error ? 'The members could not be loaded' : 'That did not work'} />
      {members.loading && !data && <p aria-busy="true">Loading…</p>}
      {data && (
        <DataTable
          caption="Current members"
          rows={data.data}
          rowKey={(m) => m.user_id}
          columns={[
            { label: 'Name', render: (m) => m.name ?? '—' },
            { label: 'E-mail', render: (m) => <span class="wrap">{m.email}</span> },
            { label: 'Role', render: (m) => (m.role === 'owner' ? 'Owner' : 'Member') },
            { label: 'Joined', render: (m) => new Date(m.joined_at).toLocaleDateString() },
            {
              label: 'Actions',
              render: (m) =>
                isOwner && m.user_id !== session?.user.id ? (
                  <button type="button" class="secondary outline small" aria-label={`Remove ${m.email}`} onClick={() => setPending({ kind: 'member', member: m })}>
                    Remove
                  </button>
                ) : null,
            },
          ]}
        />
      )}
      {data && data.invites.length > 0 && (
        <DataTable
          caption="Open invitations"
          rows={data.invites}
          rowKey={(i) => i.id}
          columns={[
            { label: 'E-mail', render: (i) => <span class="wrap">{i.email}</span> },
            { label: 'Role', render: (i) => (i.role === 'owner' ? 'Owner' : 'Member') },
            { label: 'Expires', render: (i) => new Date(i.expires_at).toLocaleString() },
            {
              label: 'Actions',
              render: (i) =>
                isOwner ? (
                  <button type="button" class="secondary outline small" aria-label={`Withdraw the invitation to ${i.email}`} onClick={() => setPending({ kind: 'invite', invite: i })}>
                    Withdraw
                  </button>
                ) : null,
            },
          ]}
        />
      )}
      {isOwner ? <InviteForm contextId={context.id} onInvited={members.reload} /> : <p>Only owners invite people.</p>}
      <ConfirmDialog
        open={pending !== null}
        title={pending?.kind === 'member' ? `Remove ${pending.member.email}?` : `Withdraw the invitation to ${pending?.kind === 'invite' ? pending.invite.email : ''}?`}
        confirmLabel={pending?.kind === 'member' ? 'Remove member' : 'Withdraw invitation'}
        danger
        busy={remove.busy}
        onConfirm={() => void confirm()}
        onCancel={() => setPending(null)}
      >
        <p>{pending?.kind === 'member' ? 'They lose access at once; their sessions no longer reach it.' : 'The link in the e-mail stops working.'}</p>
      </ConfirmDialog>
    </Page>
  );
}

function InviteForm({ contextId, onInvited }: { contextId: string; onInvited: () => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'member' | 'owner'>('member');
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    const invited = await action.run(async () => (await api.post('/auth/invites', { context: contextId, email: email.trim(), role }), true));
    if (!invited) return;
    toast(`Invitation sent to ${email.trim()}.`);
    setEmail('');
    onInvited();
  };

  return (
    <section aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <form onSubmit={(e) => void submit(e)} aria-label="Invite someone">
        {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The invitation was not sent" />}
        <Field label="E-mail address" error={failure?.fieldError('email')} hint="They receive a link to join; it works once.">
          {(control) => <input {...control} type="email" name="email" required autoComplete="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
        </Field>
        <Field label="Role" error={failure?.fieldError('role')}>
          {(control) => (
            <select {...control} name="role" value={role} onChange={(e) => setRole(e.currentTarget.value as 'member' | 'owner')}>
              <option value="member">Member</option>
              <option value="owner">Owner</option>
            </select>
          )}
        </Field>
        <button type="submit" disabled={action.busy} aria-busy={action.busy ? 'true' : undefined}>
          Send invitation
        </button>
      </form>
    </section>
  );
}
