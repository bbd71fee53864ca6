import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { to } from '../../paths.ts';
import { setSession } from '../../session.ts';
import type { Session } from '../../session.ts';
import { AuthFrame } from './auth-frame.tsx';

/**
 * Where an e-mailed password reset link leads. Opening the link uses nothing (mail scanners open links before the
 * person does); setting the password here uses it, once, signs out every session of the account and signs in
 * here. The token leaves the address bar as soon as it is read.
 */
export default function ResetPasswordScreen() {
  const { query, route } = useLocation();
  const [{ token, email }] = useState(() => {
    const read = { token: query.token ?? '', email: query.email ?? '' };
    if (location.search) history.replaceState(history.state, '', location.pathname);
    return read;
  });
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const failure = error instanceof ApiError ? error : null;
  const expired = !token || failure?.status === 401;

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await api.post<Session>('/auth/password/reset/consume', { token, new_password: password });
      setSession(session);
      route(to('/'), true);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  if (expired) {
    return (
      <AuthFrame title="Reset your password">
        <p class="error-banner" role="alert">
          {token ? 'This password reset link has expired or was already used.' : 'This page needs the link from your password reset e-mail.'}{' '}
          <a href={`${to('/forgot-password')}${email ? `?${new URLSearchParams({ email }).toString()}` : ''}`}>Ask for a new link</a>.
        </p>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title="Reset your password">
      <form onSubmit={(e) => void submit(e)} aria-label="Choose a new password">
        {error !== null && !failure?.details.length && <ErrorBanner error={error} title="Could not set the password" />}
        {email && <p>A new password for {email}. Setting it signs you out everywhere else.</p>}
        <input type="email" name="username" autoComplete="username" value={email} hidden readOnly />
        <Field label="New password" hint="At least 10 characters." error={failure?.fieldError('new_password')}>
          {(control) => (
            <input {...control} type="password" name="new-password" autoComplete="new-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
          )}
        </Field>
        <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
          Set the new password
        </button>
      </form>
    </AuthFrame>
  );
}
