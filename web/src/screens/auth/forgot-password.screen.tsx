import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { to } from '../../paths.ts';
import { AuthFrame } from './auth-frame.tsx';
import { rateLimitSentence } from './rate-limit.ts';

/** Asks for a password reset link by e-mail; the answer is the same whether or not the address has an account. */
export default function ForgotPasswordScreen() {
  const { query } = useLocation();
  const [email, setEmail] = useState(query.email ?? '');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const failure = error instanceof ApiError ? error : null;
  const limited = failure ? rateLimitSentence(failure) : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.post('/auth/password/reset', { email });
      setSent(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <AuthFrame title="Reset your password">
      {sent ? (
        <p role="status">
          If an account uses {email}, an e-mail with a link to choose a new password is on its way. The link works once, for a limited time.
        </p>
      ) : (
        <form onSubmit={(e) => void submit(e)} aria-label="Ask for a password reset link">
          {limited ? (
            <p class="error-banner" role="alert">
              {limited}
            </p>
          ) : (
            error !== null && !failure?.details.length && <ErrorBanner error={error} title="Could not send the link" />
          )}
          <p>We will e-mail you a link to choose a new password.</p>
          <Field label="E-mail" error={failure?.fieldError('email')}>
            {(control) => <input {...control} type="email" name="email" autoComplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
          </Field>
          <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
            Send the reset link
          </button>
        </form>
      )}
      <p>
        <a href={to('/sign-in')}>Back to sign-in</a>
      </p>
    </AuthFrame>
  );
}
