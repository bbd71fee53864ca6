import { useEffect, useRef, useState } from 'preact/hooks';
import { api, describeError } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { useCurrentContext } from '../../session.ts';
import { ConnectDomainForm } from './connect-domain-form.tsx';
import { DomainCard } from './domain-card.tsx';
import { domainsPath, statusLabel, type Domain, type DomainConnect } from './domain-types.ts';
import './domains.css';

/** How often a domain on its way to active is read again. */
const POLL_MS = 5000;

/** The domains of the context in view; any not yet active is polled until it is, and its changes announced. */
export default function DomainsScreen() {
  const context = useCurrentContext();
  const path = domainsPath(context.kind);
  const [domains, setDomains] = useState<Domain[] | null>(null);
  const [connect, setConnect] = useState<DomainConnect | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [deleting, setDeleting] = useState<Domain | null>(null);
  const [busy, setBusy] = useState(false);
  const [generation, setGeneration] = useState(0);
  const previous = useRef<Domain[] | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    api.get<{ data: Domain[]; connect?: DomainConnect }>(path, undefined, controller.signal).then(
      (answer) => {
        setConnect(answer.connect ?? null);
        announceChanges(previous.current, answer.data);
        previous.current = answer.data;
        setDomains(answer.data);
        setError(null);
      },
      (failure: unknown) => {
        if (!controller.signal.aborted) setError(failure);
      },
    );
    return () => controller.abort();
  }, [path, generation]);

  // Poll while a domain is on its way (an error can clear itself once the cause is fixed, so it is polled too).
  const settling = domains?.some((d) => d.status !== 'active') ?? false;
  useEffect(() => {
    if (!settling) return;
    const timer = setTimeout(() => setGeneration((g) => g + 1), POLL_MS);
    return () => clearTimeout(timer);
  }, [settling, generation]);

  const remove = async () => {
    if (!deleting) return;
    setBusy(true);
    try {
      await api.delete(`${path}/${encodeURIComponent(deleting.id)}`);
      toast(`${deleting.hostname} was disconnected.`);
      setDeleting(null);
      setGeneration((g) => g + 1);
    } catch (failure) {
      toast(`${deleting.hostname} could not be deleted: ${describeError(failure)}`, 'error', 10_000);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page title="Domains">
      {/* Once the list said whether domains can be connected here: the form is never offered in vain. */}
      {(domains !== null || error !== null) && <ConnectDomainForm
        path={path}
        connect={connect}
        onConnected={(domain) => {
          toast(`${domain.hostname} was connected: set its DNS records.`);
          setGeneration((g) => g + 1);
        }}
      />}
      <section aria-labelledby="domains-title" aria-busy={domains === null && !error ? 'true' : undefined}>
        <h2 id="domains-title">Your domains</h2>
        <ErrorBanner error={error} title="The domains could not be loaded" />
        {domains?.length === 0 && <EmptyState title="No domains yet" />}
        {domains?.map((domain) => (
          <DomainCard key={domain.id} domain={domain} onDelete={domain.default || domain.partner_domain ? undefined : setDeleting} />
        ))}
      </section>
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete ${deleting?.hostname ?? ''}?`}
        confirmLabel="Delete domain"
        danger
        busy={busy}
        onConfirm={() => void remove()}
        onCancel={() => setDeleting(null)}
      >
        <p>Its links are kept but stop resolving at once; move them to another domain to bring them back.</p>
      </ConfirmDialog>
    </Page>
  );
}

function announceChanges(before: Domain[] | null, after: Domain[]): void {
  if (!before) return;
  for (const domain of after) {
    const previous = before.find((d) => d.id === domain.id);
    if (previous && previous.status !== domain.status) toast(`${domain.hostname}: ${statusLabel(domain.status)}.`);
  }
}
