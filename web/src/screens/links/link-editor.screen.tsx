import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { ApiError, api } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { CopyButton } from '../../components/copy-button.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { to } from '../../paths.ts';
import { AbTestEditor, MobileEditor, RotatorEditor, TargetingEditor } from './link-blocks.tsx';
import { createBody, draftOf, emptyDraft, updateBody, type LinkDraft } from './link-draft.ts';
import { useLinkOptions } from './link-options.ts';
import { REDIRECT_TYPES, type Folder, type Link, type TagRef } from './link-types.ts';
import { importedClicksText } from '../../components/imported-clicks.ts';
import { QrPreview } from './qr-preview.tsx';
import { PreviewEditor } from './link-preview.tsx';
import { RuleBuilder } from './rule-builder.tsx';
import { UtmFields } from './utm-section.tsx';
import { describeDetail } from '../../components/field-path.ts';

/** Create (`/links/new`) or edit (`/links/:id`) a link, every block of it. */
export default function LinkEditorScreen() {
  const { params } = useRoute();
  const id = params.id;
  const [link, setLink] = useState<Link | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  useEffect(() => {
    if (!id) return;
    api.get<Link>(`/v1/links/${id}`).then(setLink, setLoadError);
  }, [id]);

  if (!id) return <LinkForm link={null} onSaved={setLink} />;
  if (loadError) {
    return (
      <Page title="Link">
        <ErrorBanner error={loadError} title="The link could not be loaded" />
        <a href={to('/links')}>Back to the links</a>
      </Page>
    );
  }
  if (!link) {
    return (
      <Page title="Link">
        <p aria-busy="true">Loading the link…</p>
      </Page>
    );
  }
  return <LinkForm key={link.updated_at} link={link} onSaved={setLink} />;
}

function Section({ title, open, children, badge }: { title: string; open?: boolean; badge?: string | null; children: ComponentChildren }) {
  return (
    <details class="link-section" open={open}>
      <summary>
        {title}
        {badge && <span class="badge"> · {badge}</span>}
      </summary>
      {children}
    </details>
  );
}

function LinkForm({ link, onSaved }: { link: Link | null; onSaved: (link: Link) => void }) {
  const { route } = useLocation();
  const options = useLinkOptions();
  const [original] = useState<LinkDraft>(() => (link ? draftOf(link) : emptyDraft()));
  const [draft, setDraft] = useState<LinkDraft>(original);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const failure = error instanceof ApiError ? error : null;
  const set = <K extends keyof LinkDraft>(key: K, value: LinkDraft[K]) => setDraft((d) => ({ ...d, [key]: value }));
  const editing = link !== null;

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (link) {
        const body = updateBody(draft, original);
        if (Object.keys(body).length === 0) {
          toast('Nothing changed.');
          setBusy(false);
          return;
        }
        const saved = await api.patch<Link>(`/v1/links/${link.id}`, body);
        toast('Link saved.');
        onSaved(saved);
      } else {
        const saved = await api.post<Link>('/v1/links', createBody(draft));
        toast(`Link ${saved.short_url} created.`);
        route(to(`/links/${saved.id}`), true);
      }
    } catch (caught) {
      setError(caught);
      setBusy(false);
      // The banner lists every problem; move focus there so it is read out.
      requestAnimationFrame(() => document.getElementById('link-form-errors')?.focus());
    }
  };

  const setArchived = async (archived: boolean) => {
    if (!link) return;
    try {
      onSaved(await api.patch<Link>(`/v1/links/${link.id}`, { archived }));
      toast(archived ? 'Link archived.' : 'Link restored.');
    } catch (caught) {
      setError(caught);
    }
  };

  const remove = async () => {
    if (!link) return;
    setBusy(true);
    try {
      await api.delete(`/v1/links/${link.id}`);
      toast(`Link ${link.short_url} deleted.`);
      route(to('/links'));
    } catch (caught) {
      setError(caught);
      setBusy(false);
      setConfirmDelete(false);
    }
  };

  const title = link ? (link.title ?? link.short_url.replace(/^https?:\/\//, '')) : 'New link';
  return (
    <Page
      title={title}
      actions={
        link && (
          <>
            <button type="button" class="secondary outline" onClick={() => void setArchived(!link.archived)}>
              {link.archived ? 'Restore' : 'Archive'}
            </button>
            <button type="button" class="secondary outline" onClick={() => setConfirmDelete(true)}>
              Delete
            </button>
          </>
        )
      }
    >
      <p>
        <a href={to('/links')}>← All links</a>
      </p>
      {link && (
        <div class="link-summary grid">
          <div>
            <p>
              Short link: <a href={link.short_url}>{link.short_url}</a> <CopyButton value={link.short_url} what="short link" />
            </p>
            {link.archived && <p class="badge">Archived</p>}
            {link.imported && (
              <p class="imported-note" data-testid="link-imported">
                {importedClicksText(link.imported.source, link.imported.clicks_total, link.imported.imported_at)}
                {link.imported.clicks_total !== null && <span class="muted"> (counted there before the import; not part of this link's analytics)</span>}
              </p>
            )}
            <p>
              <a href={`${to('/analytics')}?link_id=${link.id}`}>Analytics of this link</a>
            </p>
          </div>
          <QrPreview linkId={link.id} slug={link.slug} version={link.updated_at} />
        </div>
      )}
      <form onSubmit={(e) => void submit(e)} aria-label={editing ? 'Edit the link' : 'Create a link'} noValidate>
        {error !== null && (
          <div id="link-form-errors" tabIndex={-1}>
            <ErrorBanner error={error} title={editing ? 'The link was not saved' : 'The link was not created'} />
            {failure && failure.details.length > 0 && (
              <ul class="error-list">
                {failure.details.map((d) => (
                  <li key={`${d.path}:${d.message}`}>{describeDetail(d)}</li>
                ))}
              </ul>
            )}
          </div>
        )}
        <Field label="Destination URL" error={failure?.fieldError('url')}>
          {(control) => <input {...control} type="url" name="url" required placeholder="https://" value={draft.url} onInput={(e) => set('url', e.currentTarget.value)} />}
        </Field>
        <div class="grid">
          <Field label="Domain" error={failure?.fieldError('domain_id')}>
            {(control) => (
              <select {...control} name="domain_id" value={draft.domain_id} onChange={(e) => set('domain_id', e.currentTarget.value)}>
                {!editing && <option value="">{options.domains.find((d) => d.default)?.hostname ?? 'Default short domain'}</option>}
                {options.domains.filter((d) => editing || !d.default).map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.hostname}
                    {d.status !== 'active' && !d.default ? ` (${d.status})` : ''}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Slug" error={failure?.fieldError('slug')} hint={editing ? undefined : 'Leave empty for a generated one'}>
            {(control) => <input {...control} name="slug" value={draft.slug} maxLength={100} onInput={(e) => set('slug', e.currentTarget.value)} />}
          </Field>
        </div>
        <Field label="Title" error={failure?.fieldError('title')}>
          {(control) => <input {...control} name="title" maxLength={200} value={draft.title} onInput={(e) => set('title', e.currentTarget.value)} />}
        </Field>

        <Section title="Tags, folder and note" badge={draft.tag_ids.length ? `${draft.tag_ids.length} ${draft.tag_ids.length === 1 ? 'tag' : 'tags'}` : null}>
          <Field label="Folder" error={failure?.fieldError('folder_id')}>
            {(control) => (
              <select {...control} value={draft.folder_id} onChange={(e) => set('folder_id', e.currentTarget.value)}>
                <option value="">No folder</option>
                {options.folders.map((f) => (
                  <option key={f.id} value={f.id}>
                    {f.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <NewLabel
            what="folder"
            path="/v1/folders"
            onCreated={(folder: Folder) => {
              options.addFolder(folder);
              set('folder_id', folder.id);
            }}
          />
          <fieldset>
            <legend>Tags</legend>
            {options.tags.length === 0 && <p class="muted">No tags in this workspace yet.</p>}
            {options.tags.map((tag) => (
              <label key={tag.id}>
                <input
                  type="checkbox"
                  checked={draft.tag_ids.includes(tag.id)}
                  onChange={(e) => set('tag_ids', e.currentTarget.checked ? [...draft.tag_ids, tag.id] : draft.tag_ids.filter((t) => t !== tag.id))}
                />
                {tag.name}
              </label>
            ))}
            {failure?.fieldError('tag_ids', true) && (
              <small class="field-error" role="alert">
                {failure.fieldError('tag_ids', true)}
              </small>
            )}
          </fieldset>
          <NewLabel
            what="tag"
            path="/v1/tags"
            onCreated={(tag: TagRef) => {
              options.addTag(tag);
              setDraft((d) => ({ ...d, tag_ids: [...d.tag_ids, tag.id] }));
            }}
          />
          <Field label="Note" error={failure?.fieldError('note')}>
            {(control) => <textarea {...control} maxLength={2000} value={draft.note} onInput={(e) => set('note', e.currentTarget.value)} />}
          </Field>
        </Section>

        <Section title="UTM parameters" badge={Object.values(draft.utm).filter(Boolean).length ? 'set' : null} open={failure?.fieldError('utm', true) !== undefined}>
          <UtmFields value={draft.utm} onChange={(utm) => set('utm', utm)} error={failure} />
        </Section>

        <Section
          title="Social preview"
          badge={draft.preview.title.trim() ? 'custom' : link?.destination_preview ? "destination's" : null}
          open={failure?.fieldError('preview', true) !== undefined}
        >
          <PreviewEditor value={draft.preview} onChange={(preview) => set('preview', preview)} destination={link?.destination_preview ?? null} url={draft.url} error={failure} />
        </Section>

        <Section title="Rules" badge={draft.rules.length ? `${draft.rules.length}` : null} open={failure?.fieldError('rules', true) !== undefined}>
          <RuleBuilder rules={draft.rules} onChange={(rules) => set('rules', rules)} error={failure} />
          <label>
            <input type="checkbox" checked={draft.workspace_rules_off} onChange={(e) => set('workspace_rules_off', e.currentTarget.checked)} />
            Skip the workspace's rules for this link
          </label>
        </Section>

        <Section title="Targeting (country, device, OS, language)" badge={draft.targeting.length ? `${draft.targeting.length}` : null} open={failure?.fieldError('targeting', true) !== undefined}>
          <TargetingEditor value={draft.targeting} onChange={(targeting) => set('targeting', targeting)} error={failure} />
        </Section>

        <Section title="A/B test" badge={draft.ab_test ? (draft.ab_test.enabled ? 'on' : 'off') : null} open={failure?.fieldError('ab_test', true) !== undefined}>
          <AbTestEditor value={draft.ab_test} onChange={(ab) => set('ab_test', ab)} error={failure} />
        </Section>

        <Section title="Mobile deep links" badge={draft.mobile ? (draft.mobile.enabled ? 'on' : 'off') : null} open={failure?.fieldError('mobile', true) !== undefined}>
          <MobileEditor value={draft.mobile} onChange={(mobile) => set('mobile', mobile)} error={failure} />
        </Section>

        <Section title="Rotator" badge={draft.rotator ? (draft.rotator.enabled ? 'on' : 'off') : null} open={failure?.fieldError('rotator', true) !== undefined}>
          <RotatorEditor value={draft.rotator} onChange={(rotator) => set('rotator', rotator)} error={failure} />
        </Section>

        <Section
          title="Password, expiry and redirect type"
          badge={[draft.has_password && !draft.remove_password ? 'password' : null, draft.expires_at ? 'expires' : null].filter(Boolean).join(', ') || null}
          open={['password', 'expires_at', 'expired_url', 'redirect_type'].some((p) => failure?.fieldError(p))}
        >
          <Field
            label={draft.has_password ? 'New password' : 'Password'}
            error={failure?.fieldError('password')}
            hint={draft.has_password ? 'The link has a password; type a new one to change it.' : 'Visitors must type it before being redirected.'}
          >
            {(control) => <input {...control} type="password" autoComplete="new-password" maxLength={128} value={draft.password} onInput={(e) => set('password', e.currentTarget.value)} />}
          </Field>
          {draft.has_password && (
            <label>
              <input type="checkbox" checked={draft.remove_password} onChange={(e) => set('remove_password', e.currentTarget.checked)} />
              Remove the password
            </label>
          )}
          <div class="grid">
            <Field label="Expires at" error={failure?.fieldError('expires_at')} hint="Your local time">
              {(control) => <input {...control} type="datetime-local" value={draft.expires_at} onInput={(e) => set('expires_at', e.currentTarget.value)} />}
            </Field>
            <Field label="After expiry, send visitors to" error={failure?.fieldError('expired_url')}>
              {(control) => <input {...control} type="url" value={draft.expired_url} onInput={(e) => set('expired_url', e.currentTarget.value)} />}
            </Field>
          </div>
          <Field label="Redirect type" error={failure?.fieldError('redirect_type')}>
            {(control) => (
              <select {...control} value={String(draft.redirect_type)} onChange={(e) => set('redirect_type', Number(e.currentTarget.value))}>
                {REDIRECT_TYPES.map((t) => (
                  <option key={t} value={String(t)}>
                    {t} {t === 301 || t === 308 ? '(permanent: browsers may cache it)' : '(temporary)'}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </Section>

        <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
          {editing ? 'Save the link' : 'Create the link'}
        </button>
      </form>
      <ConfirmDialog open={confirmDelete} title="Delete this link?" confirmLabel="Delete the link" danger busy={busy} onCancel={() => setConfirmDelete(false)} onConfirm={() => void remove()}>
        <p>Its short URL stops working at once. Archiving keeps it working and hides it from the list instead.</p>
      </ConfirmDialog>
    </Page>
  );
}

/**
 * Makes a tag or folder without leaving the link (POST /v1/tags or /v1/folders) and selects it. Not a nested form
 * (HTML forbids one): Enter in its field is kept from submitting the link.
 */
function NewLabel<T>({ what, path, onCreated }: { what: 'tag' | 'folder'; path: string; onCreated: (label: T) => void }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const create = async () => {
    if (!name.trim()) return;
    setBusy(true);
    setError(null);
    try {
      onCreated(await api.post<T>(path, { name: name.trim() }));
      toast(`The ${what} ${name.trim()} was created.`);
      setName('');
    } catch (caught) {
      setError(caught instanceof ApiError ? caught : new ApiError(0, 'internal', String(caught)));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="new-label">
      <Field label={`New ${what}`} error={error ? (error.fieldError('name') ?? error.message) : null}>
        {(control) => (
          <input
            {...control}
            value={name}
            maxLength={what === 'tag' ? 50 : 100}
            onInput={(e) => setName(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key !== 'Enter') return;
              e.preventDefault();
              void create();
            }}
          />
        )}
      </Field>
      <button type="button" class="secondary" onClick={() => void create()} disabled={busy || !name.trim()} aria-busy={busy ? 'true' : undefined}>
        Create the {what}
      </button>
    </div>
  );
}
