import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { to } from '../../paths.ts';
import { ImportJobPanel } from './import-job.tsx';
import { SOURCES, isRunning, sourceInfo, type ImportJob, type SourceKind } from './import-types.ts';
import './imports.css';

interface Picked {
  name: string;
  text: string;
}

/**
 * Copies links from another service (or a CSV file) into the workspace with an import job (POST /v1/imports): a
 * source, its token (and address when self-hosted) or its export file; a dry run first shows what would be created
 * and what would fail; the job then runs in the worker while this screen follows its progress.
 */
/** The source the screen opens with: `?source=csv` (the links list's Import CSV), else Bitly. */
function initialSource(): SourceKind {
  const asked = new URLSearchParams(location.search).get('source');
  return SOURCES.find((s) => s.kind === asked)?.kind ?? 'bitly';
}

export default function ImportsScreen() {
  const [source, setSource] = useState<SourceKind>(initialSource);
  const [token, setToken] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [file, setFile] = useState<Picked | null>(null);
  const [domains, setDomains] = useState<'create' | 'default'>('create');
  const [onSlugClash, setOnSlugClash] = useState<'error' | 'suffix'>('error');
  const [dragging, setDragging] = useState(false);
  const [sending, setSending] = useState<'preview' | 'start' | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [job, setJob] = useState<ImportJob | null>(null);

  const info = sourceInfo(source);
  const failure = error instanceof ApiError ? error : null;
  const ready = info.file ? file !== null : token.trim() !== '' && (!info.baseUrl || baseUrl.trim() !== '');
  const busy = sending !== null || (job !== null && isRunning(job));

  const pick = async (picked: File | undefined) => {
    if (!picked) return;
    setFile({ name: picked.name, text: await picked.text() });
  };

  const create = async (dryRun: boolean) => {
    setSending(dryRun ? 'preview' : 'start');
    setError(null);
    try {
      const body: Record<string, unknown> = { source, dry_run: dryRun, domains, on_slug_clash: onSlugClash };
      if (info.file) body.file = file?.text;
      else {
        body.token = token.trim();
        if (baseUrl.trim()) body.base_url = baseUrl.trim();
      }
      const created = await api.post<ImportJob>('/v1/imports', body);
      setJob(created);
      if (!dryRun) toast('The import started. It runs on the server: you can leave this screen.');
    } catch (caught) {
      setError(caught);
    } finally {
      setSending(null);
    }
  };

  return (
    <Page title="Import links">
      <p>
        Copy your links from another service into this workspace. Try a preview first: it reads everything and says what would be created and what would fail,
        writing nothing. Running the same import again creates nothing twice. To paste a few rows instead, use <a href={to('/links/bulk')}>the CSV paste</a>.
      </p>
      <form
        aria-label="Import source"
        onSubmit={(e) => {
          e.preventDefault();
          void create(true);
        }}
      >
        <div class="grid">
          <Field label="Source" error={failure?.fieldError('source')}>
            {(control) => (
              <select
                {...control}
                value={source}
                onChange={(e) => {
                  setSource(e.currentTarget.value as SourceKind);
                  setError(null);
                }}
              >
                {SOURCES.map((s) => (
                  <option key={s.kind} value={s.kind}>
                    {s.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Domains" hint="A custom domain of the source is connected here, pending verification, unless every link goes on the default domain.">
            {(control) => (
              <select {...control} value={domains} onChange={(e) => setDomains(e.currentTarget.value as 'create' | 'default')}>
                <option value="create">Keep custom domains</option>
                <option value="default">Everything on the default domain</option>
              </select>
            )}
          </Field>
          <Field label="Slug already taken">
            {(control) => (
              <select {...control} value={onSlugClash} onChange={(e) => setOnSlugClash(e.currentTarget.value as 'error' | 'suffix')}>
                <option value="error">Fail that row</option>
                <option value="suffix">Add -2, -3… to the slug</option>
              </select>
            )}
          </Field>
        </div>
        {info.file ? (
          <div
            class={`drop-zone${dragging ? ' dragging' : ''}`}
            onDragOver={(e) => {
              e.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={(e) => {
              e.preventDefault();
              setDragging(false);
              void pick(e.dataTransfer?.files[0]);
            }}
          >
            <Field label="Export file" hint={`${info.hint} Drop it here or choose it.`} error={failure?.fieldError('file')}>
              {(control) => <input {...control} type="file" accept=".csv,text/csv" onChange={(e) => void pick(e.currentTarget.files?.[0])} />}
            </Field>
            {file && (
              <p class="muted">
                {file.name}: {new Intl.NumberFormat().format(file.text.length)} characters
              </p>
            )}
          </div>
        ) : (
          <div class="grid">
            <Field label="API token" hint={info.hint} error={failure?.fieldError('token')}>
              {(control) => <input {...control} type="password" autoComplete="off" value={token} maxLength={4096} onInput={(e) => setToken(e.currentTarget.value)} />}
            </Field>
            {info.baseUrl && (
              <Field label="Base URL" hint="The address of your server, such as https://s.example.com" error={failure?.fieldError('base_url')}>
                {(control) => <input {...control} type="url" value={baseUrl} maxLength={2048} placeholder="https://" onInput={(e) => setBaseUrl(e.currentTarget.value)} />}
              </Field>
            )}
          </div>
        )}
        {error !== null && !failure?.details.length && <ErrorBanner error={error} title="The import could not be created" />}
        <div class="form-actions">
          <button type="submit" class="secondary" disabled={!ready || busy} aria-busy={sending === 'preview' ? 'true' : undefined}>
            Preview (dry run)
          </button>
          <button type="button" disabled={!ready || busy} aria-busy={sending === 'start' ? 'true' : undefined} onClick={() => void create(false)}>
            Start the import
          </button>
        </div>
      </form>
      {job && <ImportJobPanel key={job.id} initial={job} onChange={setJob} />}
    </Page>
  );
}
