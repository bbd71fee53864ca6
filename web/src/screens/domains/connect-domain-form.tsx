import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import type { Domain, DomainConnect } from './domain-types.ts';

/**
 * Connecting a hostname, offered only where the list said it can work (`connect`): otherwise the reason is said up
 * front, before anyone types a hostname. A refusal after submitting (the situation changed meanwhile) is explained
 * the same way.
 */
export function ConnectDomainForm({ path, connect, onConnected }: { path: string; connect: DomainConnect | null; onConnected: (domain: Domain) => void }) {
  const [hostname, setHostname] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const failure = error instanceof ApiError ? error : null;
  const fieldError = failure?.fieldError('hostname') ?? (failure?.code === 'conflict' ? failure.message : undefined);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const domain = await api.post<Domain>(path, { hostname: hostname.trim() });
      setHostname('');
      onConnected(domain);
    } catch (failed) {
      setError(failed);
    } finally {
      setBusy(false);
    }
  };

  if (connect && !connect.available) {
    return (
      <section aria-labelledby="connect-title">
        <h2 id="connect-title">Connect a domain</h2>
        <Unavailable reason={connect.reason} message={connect.message} />
      </section>
    );
  }
  return (
    <section aria-labelledby="connect-title">
      <h2 id="connect-title">Connect a domain</h2>
      {connect && (
        <p class="muted">
          {connect.used} of {connect.limit} custom domain{connect.limit === 1 ? '' : 's'} in use. Once connected, set the DNS records shown below the domain; this page follows the
          verification as it happens.
        </p>
      )}
      <form onSubmit={(e) => void submit(e)} class="connect-form">
        <Field label="Hostname" error={fieldError} hint="A subdomain such as links.example.com, or a domain of its own such as example.link.">
          {(control) => (
            <input {...control} type="text" name="hostname" autoComplete="off" spellcheck={false} inputMode="url" required value={hostname} onInput={(e) => setHostname(e.currentTarget.value)} />
          )}
        </Field>
        <button type="submit" disabled={busy} aria-busy={busy ? 'true' : undefined}>
          Connect
        </button>
      </form>
      {failure && ['not_configured', 'plan_restricted', 'quota_exceeded'].includes(failure.code) ? (
        <Unavailable reason={failure.code as DomainConnect['reason']} message={failure.message} alert />
      ) : (
        !fieldError && <ErrorBanner error={error} title="The domain could not be connected" />
      )}
    </section>
  );
}

const TITLES: Record<NonNullable<DomainConnect['reason']>, string> = {
  not_configured: 'Custom domains are not available on this server',
  plan_restricted: 'Your plan does not include custom domains',
  quota_exceeded: 'Every custom domain of your plan is in use',
};

function Unavailable({ reason, message, alert }: { reason: DomainConnect['reason']; message: string | null; alert?: boolean }) {
  return (
    <div class="notice not-configured" role={alert ? 'alert' : undefined}>
      <strong>{reason ? TITLES[reason] : 'Custom domains cannot be connected now'}</strong>
      {message && <p>{message}</p>}
      {reason === 'not_configured' && (
        <p>
          Connecting a domain needs a Kubernetes cluster running the Linkplane operator, or the server set up to obtain certificates itself from an ACME certificate authority such as
          Let's Encrypt (ACME_DIRECTORY_URL). This server runs without either (for example the all-in-one setup as it starts), so links use the default short domain here.
        </p>
      )}
      {reason === 'quota_exceeded' && <p>Delete a domain you no longer use, or move to a plan with more domains.</p>}
    </div>
  );
}
