import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import type { Domain } from './domain-types.ts';

/**
 * Connecting a hostname. Where custom domains cannot work (no Kubernetes cluster and no ACME, as in the all-in-one) the api
 * answers 503 `not_configured`; that reason gets its own explanation instead of a generic failure.
 */
export function ConnectDomainForm({ path, onConnected }: { path: string; onConnected: (domain: Domain) => void }) {
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

  return (
    <section aria-labelledby="connect-title">
      <h2 id="connect-title">Connect a domain</h2>
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
      {failure?.code === 'not_configured' ? (
        <div class="error-banner not-configured" role="alert">
          <strong>Custom domains are not available on this server</strong>
          <p>{failure.message}</p>
          <p>
            Connecting a domain needs a Kubernetes cluster running the Linkplane operator, or the server set up to obtain certificates itself from an ACME certificate authority such as
            Let's Encrypt (ACME_DIRECTORY_URL). This server has neither (for example the all-in-one development setup as it starts), so links can only use the default short domain
            here.
          </p>
        </div>
      ) : (
        !fieldError && <ErrorBanner error={error} title="The domain could not be connected" />
      )}
    </section>
  );
}
