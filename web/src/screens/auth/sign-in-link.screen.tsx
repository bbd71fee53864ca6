import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { to } from '../../paths.ts';
import { setSession } from '../../session.ts';
import type { Session } from '../../session.ts';
import { AuthFrame } from './auth-frame.tsx';
import { LinkForm } from './sign-in.screen.tsx';

/**
 * Where an e-mailed sign-in link leads. Opening the link uses nothing (mail scanners open links before the
 * person does); the button here uses it, once. The token leaves the address bar as soon as it is read, so it
 * stays out of the history and of anything copied from there.
 */
export default function SignInLinkScreen() {
  const { query, route } = useLocation();
  const [{ token, email }] = useState(() => {
    const read = { token: query.token ?? '', email: query.email ?? '' };
    if (location.search) history.replaceState(history.state, '', location.pathname);
    return read;
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const expired = !token || (error instanceof ApiError && error.status === 401);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await api.post<Session>('/auth/sign-in/link/consume', { token });
      setSession(session);
      route(to('/'), true);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  if (expired) {
    return (
      <AuthFrame title="Sign-in link">
        <p class="error-banner" role="alert">
          {token ? 'This sign-in link has expired or was already used.' : 'This page needs the link from your sign-in e-mail.'} Ask for a new one below, or{' '}
          <a href={to('/sign-in')}>sign in with your password</a>.
        </p>
        <LinkForm open initialEmail={email} />
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title="Sign-in link">
      <form onSubmit={(e) => void submit(e)} aria-label="Sign in with the e-mailed link">
        {error !== null && <ErrorBanner error={error} title="Could not sign in" />}
        <p>The link works once: the button below uses it.</p>
        <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
          {email ? `Sign in as ${email}` : 'Sign in'}
        </button>
      </form>
    </AuthFrame>
  );
}
