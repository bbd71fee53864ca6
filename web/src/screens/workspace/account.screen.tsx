import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { DataTable } from '../../components/data-table.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';
import { useSession } from '../../session.ts';

interface SessionRow {
  id: string;
  created_at: string;
  last_seen_at: string;
  user_agent: string | null;
  ip: string | null;
  current: boolean;
}

/** The person's own account: where they are signed in (each session revocable) and their password. */
export default function AccountScreen() {
  const { session } = useSession();
  const sessions = useResource((signal) => api.get<{ data: SessionRow[] }>('/auth/sessions', undefined, signal), session?.user.id ?? '');
  const revoke = useAction();

  const revokeOne = async (row: SessionRow) => {
    const done = await revoke.run(async () => (await api.delete(`/auth/sessions/${row.id}`), true));
    if (!done) return;
    toast('Session signed out.');
    sessions.reload();
  };

  return (
    <Page title="Your account">
      {session && (
        <dl class="facts">
          <dt>Name</dt>
          <dd>{session.user.name ?? '—'}</dd>
          <dt>E-mail</dt>
          <dd class="wrap">{session.user.email}</dd>
        </dl>
      )}
      <section aria-labelledby="sessions-title">
        <h2 id="sessions-title">Where you are signed in</h2>
        <ErrorBanner error={sessions.error ?? revoke.error} title={sessions.error ? 'The sessions could not be loaded' : 'The session was not signed out'} />
        {sessions.loading && !sessions.data && <p aria-busy="true">Loading…</p>}
        {sessions.data && (
          <DataTable
            caption="Your sessions"
            hideCaption
            rows={sessions.data.data}
            rowKey={(s) => s.id}
            columns={[
              { label: 'Browser', render: (s) => <span class="wrap">{s.user_agent ?? 'Unknown'}</span> },
              { label: 'Address', render: (s) => s.ip ?? '—' },
              { label: 'Signed in', render: (s) => new Date(s.created_at).toLocaleString() },
              { label: 'Last seen', render: (s) => new Date(s.last_seen_at).toLocaleString() },
              {
                label: 'Actions',
                render: (s) =>
                  s.current ? (
                    <strong>This browser</strong>
                  ) : (
                    <button type="button" class="secondary outline small" disabled={revoke.busy} onClick={() => void revokeOne(s)} aria-label={`Sign out the session from ${s.ip ?? 'an unknown address'}, signed in ${new Date(s.created_at).toLocaleString()}`}>
                      Sign out
                    </button>
                  ),
              },
            ]}
          />
        )}
      </section>
      <PasswordForm onChanged={sessions.reload} />
    </Page>
  );
}

function PasswordForm({ onChanged }: { onChanged: () => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (next !== repeat) {
      setMismatch(true);
      return;
    }
    setMismatch(false);
    const done = await action.run(async () => (await api.post('/auth/password', { current_password: current, new_password: next }), true));
    if (!done) return;
    setCurrent('');
    setNext('');
    setRepeat('');
    toast('Password changed. Your other sessions were signed out.');
    onChanged();
  };

  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Change your password</h2>
      <form onSubmit={(e) => void submit(e)} aria-label="Change your password">
        {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The password was not changed" />}
        <Field label="Current password" error={failure?.fieldError('current_password')}>
          {(control) => <input {...control} type="password" name="current_password" required autoComplete="current-password" value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />}
        </Field>
        <Field label="New password" error={failure?.fieldError('new_password')} hint="Every other session is signed out when it changes.">
          {(control) => <input {...control} type="password" name="new_password" required autoComplete="new-password" value={next} onInput={(e) => setNext(e.currentTarget.value)} />}
        </Field>
        <Field label="New password again" error={mismatch ? 'The two new passwords differ.' : null}>
          {(control) => <input {...control} type="password" name="repeat_password" required autoComplete="new-password" value={repeat} onInput={(e) => setRepeat(e.currentTarget.value)} />}
        </Field>
        <button type="submit" disabled={action.busy} aria-busy={action.busy ? 'true' : undefined}>
          Change password
        </button>
      </form>
    </section>
  );
}
