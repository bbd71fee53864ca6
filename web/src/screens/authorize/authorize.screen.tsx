import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, describeError } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Page } from '../../components/page.tsx';
import { useFetch } from '../../components/use-fetch.ts';
import { useSession } from '../../session.ts';

import type { ConsentRequestView as ConsentRequest } from '../../../../src/oauth/oauth.schemas.ts';

/** Where the app will be sent back to: its host is what a person can check. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * The consent page: an app asks to act in a workspace. It shows the app's name and where it sends the person back,
 * the scopes it asks for (each can be unticked) and the workspace it will act in; approving sends the browser back
 * through the authorization server, which hands the app a code.
 */
export default function AuthorizeScreen() {
  const { params } = useRoute();
  const uid = params.uid ?? '';
  const { session, context } = useSession();
  const request = useFetch<ConsentRequest>(`/auth/oauth/requests/${encodeURIComponent(uid)}`);
  const workspaces = (session?.memberships ?? []).filter((m) => m.kind === 'workspace');
  const [workspace, setWorkspace] = useState<string>(context?.kind === 'workspace' ? context.id : (workspaces[0]?.id ?? ''));
  const [unticked, setUnticked] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);

  const answer = async (decision: 'approve' | 'deny') => {
    if (!request.data) return;
    setBusy(true);
    setFailure(null);
    try {
      const scopes = request.data.scopes.map((s) => s.scope).filter((s) => !unticked.has(s));
      const body = decision === 'approve' ? { context: workspace, scopes } : undefined;
      const next = await api.post<{ redirect_to: string }>(`/auth/oauth/requests/${encodeURIComponent(uid)}/${decision}`, body);
      window.location.assign(next.redirect_to);
    } catch (error) {
      setFailure(error);
      setBusy(false);
    }
  };

  const name = request.data?.client.name ?? 'An unnamed app';
  const chosen = request.data ? request.data.scopes.length - [...unticked].filter((s) => request.data!.scopes.some((r) => r.scope === s)).length : 0;
  return (
    <Page title="Authorise an app">
      <ErrorBanner error={request.error} title="This authorisation request cannot be shown (it may have expired: start again from the app)" />
      {request.data && (
        <form
          class="consent"
          onSubmit={(event) => {
            event.preventDefault();
            void answer('approve');
          }}
        >
          <p>
            <strong data-testid="consent-client">{name}</strong> asks to use Linkplane as you. It will send you back to{' '}
            <code>{hostOf(request.data.client.redirect_uri)}</code>.
          </p>
          <label>
            Workspace it will act in
            <select value={workspace} onChange={(e) => setWorkspace((e.target as HTMLSelectElement).value)} required>
              {workspaces.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.name}
                </option>
              ))}
            </select>
          </label>
          <fieldset>
            <legend>What it may do ({chosen} of {request.data.scopes.length})</legend>
            {request.data.scopes.map((s) => (
              <label key={s.scope}>
                <input
                  type="checkbox"
                  name="scope"
                  value={s.scope}
                  checked={!unticked.has(s.scope)}
                  onChange={(e) => {
                    const next = new Set(unticked);
                    if ((e.target as HTMLInputElement).checked) next.delete(s.scope);
                    else next.add(s.scope);
                    setUnticked(next);
                  }}
                />
                {s.description} <code>{s.scope}</code>
              </label>
            ))}
          </fieldset>
          <p class="note">Only what your role in the workspace allows is granted. You can revoke the app at any time on the Keys page.</p>
          {failure !== null && <p role="alert">{describeError(failure)}</p>}
          <div class="grid">
            <button type="button" class="secondary" disabled={busy} onClick={() => void answer('deny')}>
              Deny
            </button>
            <button type="submit" disabled={busy || workspace === '' || chosen === 0} aria-busy={busy ? 'true' : undefined}>
              Approve
            </button>
          </div>
        </form>
      )}
    </Page>
  );
}
