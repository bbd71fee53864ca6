// The workspace's name and the address notices go to (PATCH /v1/workspace `name`, `owner_email`).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction } from '../../components/use-resource.ts';
import type { WorkspaceProfile } from './workspace.types.ts';

export function WorkspaceIdentity({ profile, canEdit, onSaved }: { profile: WorkspaceProfile; canEdit: boolean; onSaved: (p: WorkspaceProfile) => void }) {
  const [name, setName] = useState(profile.name);
  const [email, setEmail] = useState(profile.owner_email ?? '');
  useEffect(() => {
    setName(profile.name);
    setEmail(profile.owner_email ?? '');
  }, [profile]);
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;

  const save = async (event: Event) => {
    event.preventDefault();
    const answer = await action.run(() => api.patch<WorkspaceProfile>('/v1/workspace', { name: name.trim(), owner_email: email.trim() || null }));
    if (!answer) return;
    onSaved(answer);
    toast('Workspace name and notice address saved.');
  };

  return (
    <section aria-labelledby="ws-identity">
      <h2 id="ws-identity">Name and notices</h2>
      {!canEdit && <p>Only owners change these settings.</p>}
      <form onSubmit={(e) => void save(e)} aria-label="Name and notices" noValidate>
        {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The settings were not saved" />}
        <div class="grid">
          <Field label="Workspace name" error={failure?.fieldError('name')}>
            {(control) => <input {...control} name="name" required maxLength={120} disabled={!canEdit} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
          </Field>
          <Field label="Notice e-mail" error={failure?.fieldError('owner_email')} hint="Where notices go, such as a webhook endpoint failing. Leave empty for none.">
            {(control) => <input {...control} type="email" name="owner_email" maxLength={254} disabled={!canEdit} value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
          </Field>
        </div>
        <button type="submit" disabled={!canEdit || action.busy} aria-busy={action.busy ? 'true' : undefined}>
          Save name and notices
        </button>
      </form>
    </section>
  );
}

/** The saved UTM templates, each removable; they are made in the link editor. */
export function UtmTemplates({ profile, canEdit, onSaved }: { profile: WorkspaceProfile; canEdit: boolean; onSaved: (p: WorkspaceProfile) => void }) {
  const action = useAction();
  const remove = async (name: string) => {
    const answer = await action.run(() => api.patch<WorkspaceProfile>('/v1/workspace', { utm_templates: profile.utm_templates.filter((t) => t.name !== name) }));
    if (!answer) return;
    onSaved(answer);
    toast(`Template ${name} deleted.`);
  };
  return (
    <section aria-labelledby="ws-utm">
      <h2 id="ws-utm">UTM templates</h2>
      <ErrorBanner error={action.error} title="The template was not deleted" />
      {profile.utm_templates.length === 0 ? (
        <p>No saved templates. Save one from the UTM parameters of a link.</p>
      ) : (
        <ul>
          {profile.utm_templates.map((t) => (
            <li key={t.name}>
              <strong>{t.name}</strong>{' '}
              <span class="muted">
                {Object.entries(t.utm)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(' · ')}
              </span>{' '}
              {canEdit && (
                <button type="button" class="secondary outline small" disabled={action.busy} onClick={() => void remove(t.name)} aria-label={`Delete the template ${t.name}`}>
                  Delete
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
