import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { useAction } from '../../components/use-resource.ts';
import { to } from '../../paths.ts';
import { setSession, useSession } from '../../session.ts';
import type { Session } from '../../session.ts';
import { AuthFrame } from './auth-frame.tsx';

/**
 * Where an invitation link leads (opening the link uses nothing: mail scanners open links too). Signed in as the
 * invited address: a button joins. Otherwise: create the account (name and password) and join, or sign in first.
 * The token leaves the address bar as soon as it is read.
 */
export default function AcceptInviteScreen() {
  const { query, route } = useLocation();
  const { session } = useSession();
  const [{ token, email }] = useState(() => {
    const read = { token: query.token ?? '', email: query.email ?? '' };
    if (location.search) history.replaceState(history.state, '', location.pathname);
    return read;
  });
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  const failure = error instanceof ApiError ? error : null;

  const submit = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      setSession(await api.post<Session>('/auth/invites/accept', { token, name: name || undefined, password: password || undefined }));
      route(to('/'), true);
    });
  };

  if (!token) {
    return (
      <AuthFrame title="Accept an invitation">
        <p role="alert">This page needs the link from your invitation e-mail. Open that link again.</p>
      </AuthFrame>
    );
  }
  if (email && session?.user.email === email) {
    return (
      <AuthFrame title="Accept an invitation">
        <form onSubmit={submit} aria-label="Accept the invitation">
          {error !== null && <ErrorBanner error={error} title="Could not accept the invitation" />}
          <p>You are signed in as the invited address.</p>
          <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
            Join as {email}
          </button>
        </form>
      </AuthFrame>
    );
  }
  const signInFirst = `${to('/sign-in')}?next=${encodeURIComponent(`${to('/accept-invite')}?${new URLSearchParams({ token, email }).toString()}`)}`;
  return (
    <AuthFrame title="Accept an invitation">
      <p>
        Joining signs you in. If the invited address has no account yet, the name and password below create it. If it has one, type
        its password (the name is then left as it is), or <a href={signInFirst}>sign in first</a>.
      </p>
      <form onSubmit={submit} aria-label="Accept the invitation">
        {error !== null && !failure?.details.length && <ErrorBanner error={error} title="Could not accept the invitation" />}
        <Field label="Your name" error={failure?.fieldError('name')}>
          {(control) => <input {...control} name="name" autoComplete="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Password" error={failure?.fieldError('password')} hint="A long passphrase is both strong and easy to remember.">
          {(control) => (
            <input {...control} type="password" name="password" autoComplete="new-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
          )}
        </Field>
        <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
          Join
        </button>
      </form>
    </AuthFrame>
  );
}
