import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { useAction } from '../../components/use-resource.ts';
import { to } from '../../paths.ts';
import { setSession } from '../../session.ts';
import type { Session } from '../../session.ts';
import { AuthFrame, safeNext } from './auth-frame.tsx';
import { rateLimitSentence } from './rate-limit.ts';

interface AuthConfig {
  password: boolean;
  link: boolean;
  password_reset?: boolean;
  oidc: boolean;
  oidc_name?: string | null;
  signed_in?: boolean;
}

/** The `?error=` codes the api's redirects carry, as sentences. */
const REDIRECT_ERRORS: Record<string, string> = {
  link_expired: 'That sign-in link has expired or was already used. Ask for a new one below.',
  reset_expired: 'That password reset link has expired or was already used. Ask for a new one with “Forgot your password?”.',
  invite_expired: 'That invitation has expired or was already used. Ask an owner to invite you again.',
  oidc_failed: 'Signing in with your identity provider did not succeed. Try again, or use your password.',
  oidc_no_access: 'Your identity provider vouched for you, but no Linkplane account or open invitation has that e-mail. Ask an owner to invite you.',
};

export default function SignInScreen() {
  const { query, route } = useLocation();
  const [config, setConfig] = useState<AuthConfig>({ password: true, link: false, oidc: false });
  const redirectError = query.error ? (REDIRECT_ERRORS[query.error] ?? 'Signing in did not succeed. Try again.') : null;
  const leave = () => {
    const next = safeNext(query.next, to('/'));
    if (next.startsWith('/auth/')) location.assign(next);
    else route(next, true);
  };
  const done = (session: Session) => {
    setSession(session);
    leave();
  };
  useEffect(() => {
    api.get<AuthConfig>('/auth/config').then((answer) => {
      // Signed in already (a bookmark of this page): nothing to do here; the page asked for loads the session.
      if (answer.signed_in) leave();
      else setConfig(answer);
    }, () => undefined);
  }, []);

  return (
    <AuthFrame title="Sign in">
      {redirectError && (
        <p class="error-banner" role="alert">
          {redirectError}
        </p>
      )}
      {config.password && <PasswordForm onSignedIn={done} canReset={config.password_reset === true} />}
      {config.link && <LinkForm />}
      {config.oidc && (
        <p>
          <a href="/auth/oidc/start" role="button" class="secondary wide">
            Sign in with {config.oidc_name ?? 'single sign-on'}
          </a>
        </p>
      )}
    </AuthFrame>
  );
}

function PasswordForm({ onSignedIn, canReset }: { onSignedIn: (session: Session) => void; canReset: boolean }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  const failure = error instanceof ApiError ? error : null;
  const limited = failure ? rateLimitSentence(failure) : null;

  const submit = (event: Event) => {
    event.preventDefault();
    void run(async () => onSignedIn(await api.post<Session>('/auth/sign-in', { email, password })));
  };

  return (
    <form onSubmit={submit} aria-label="Sign in with a password" data-ready="true">
      {failure?.code === 'unauthorized' ? (
        <p class="error-banner" role="alert">
          That e-mail and password do not match an account.
        </p>
      ) : limited ? (
        <p class="error-banner" role="alert">
          {limited}
        </p>
      ) : (
        error !== null && !failure?.details.length && <ErrorBanner error={error} title="Could not sign in" />
      )}
      <Field label="E-mail" error={failure?.fieldError('email')}>
        {(control) => <input {...control} type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
      </Field>
      <Field label="Password" error={failure?.fieldError('password')}>
        {(control) => (
          <input {...control} type="password" name="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        )}
      </Field>
      <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
        Sign in
      </button>
      {canReset && (
        <p>
          <a href={`${to('/forgot-password')}${email ? `?${new URLSearchParams({ email }).toString()}` : ''}`}>Forgot your password?</a>
        </p>
      )}
    </form>
  );
}

/** Asks for a sign-in link by e-mail; also offered where an expired link leads. */
export function LinkForm({ open = false, initialEmail = '' }: { open?: boolean; initialEmail?: string }) {
  const [email, setEmail] = useState(initialEmail);
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const failure = error instanceof ApiError ? error : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.post('/auth/sign-in/link', { email });
      setSent(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <details open={open}>
      <summary>E-mail me a sign-in link instead</summary>
      <form onSubmit={(e) => void submit(e)} aria-label="Sign in with an e-mailed link">
        {sent ? (
          <p role="status">If an account uses {email}, a sign-in link is on its way. It works once, for 15 minutes.</p>
        ) : (
          <>
            {error !== null && !failure?.details.length && <ErrorBanner error={error} title="Could not send the link" />}
            <Field label="E-mail for the link" error={failure?.fieldError('email')}>
              {(control) => <input {...control} type="email" name="link-email" autoComplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
            </Field>
            <button type="submit" class="secondary" aria-busy={busy ? 'true' : undefined} disabled={busy}>
              Send the link
            </button>
          </>
        )}
      </form>
    </details>
  );
}
