import { useEffect, useState } from 'preact/hooks';
import { api, describeError } from '../../api.ts';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Pager, useCursorList } from '../../components/pager.tsx';
import { toast } from '../../components/toast.tsx';
import { to } from '../../paths.ts';
import { isRunning, sourceInfo, type ImportJob, type ImportRowError } from './import-types.ts';

/** How often a queued or running job is read again. */
const POLL_MS = 1_000;

const number = new Intl.NumberFormat();

const STATUS_TEXT: Record<ImportJob['status'], string> = { queued: 'Queued', running: 'Running', succeeded: 'Done', failed: 'Failed', canceled: 'Canceled' };
const STATUS_CLASS: Record<ImportJob['status'], string> = { queued: 'state-wait', running: 'state-wait', succeeded: 'state-ok', failed: 'state-bad', canceled: 'state-bad' };

/** Reads the job again every second while it is queued or running; `onChange` hears every new state. */
function useJobPolling(initial: ImportJob, onChange: (job: ImportJob) => void): { job: ImportJob; setJob: (job: ImportJob) => void; error: unknown } {
  const [job, setJob] = useState(initial);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!isRunning(job)) return;
    const controller = new AbortController();
    const timer = setTimeout(() => {
      api.get<ImportJob>(`/v1/imports/${job.id}`, undefined, controller.signal).then(
        (next) => {
          setError(null);
          setJob(next);
          onChange(next);
        },
        (failure: unknown) => {
          if (controller.signal.aborted) return;
          setError(failure);
          // Tried again at the next tick: a restarting api should not stop the progress for good.
          setJob((current) => ({ ...current }));
        },
      );
    }, POLL_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [job]);
  return { job, setJob, error };
}

const ERROR_COLUMNS: Column<ImportRowError>[] = [
  { label: 'Row', render: (e) => e.ref },
  { label: 'Slug', render: (e) => e.slug ?? <span class="muted">none</span> },
  { label: 'Domain', render: (e) => e.domain ?? <span class="muted">default</span> },
  { label: 'Code', render: (e) => <code>{e.code}</code> },
  { label: 'Why', render: (e) => <span class="wrap">{e.message}</span> },
];

/** The rows not imported (or that would not be), in source order, a page at a time. */
function RowErrors({ job }: { job: ImportJob }) {
  const list = useCursorList<ImportRowError>(`/v1/imports/${job.id}/errors`, {}, 25);
  // Read again as the failed count grows while the job runs.
  const { reload } = list;
  useEffect(() => {
    if (list.page === 1) reload();
  }, [job.failed, job.status]);
  return (
    <section aria-labelledby={`errors-${job.id}`}>
      <h3 id={`errors-${job.id}`}>{job.dry_run ? 'Rows that would fail' : 'Rows not imported'}</h3>
      <ErrorBanner error={list.error} title="The rows could not be loaded" />
      <div aria-busy={list.loading ? 'true' : undefined}>
        <DataTable caption={job.dry_run ? 'Rows that would fail' : 'Rows not imported'} hideCaption columns={ERROR_COLUMNS} rows={list.items} rowKey={(e) => `${e.ref}:${e.code}`} />
      </div>
      <Pager {...list.pager} />
    </section>
  );
}

/**
 * An import job as it runs: its status, a progress bar, the counts, Cancel, and the rows that failed. Give it a
 * `key` of the job's id: a new job is a new panel.
 */
export function ImportJobPanel({ initial, onChange }: { initial: ImportJob; onChange: (job: ImportJob) => void }) {
  const { job, setJob, error } = useJobPolling(initial, onChange);
  const [canceling, setCanceling] = useState(false);
  const running = isRunning(job);
  const title = job.dry_run ? 'Preview (dry run)' : 'Import';

  const cancel = async () => {
    setCanceling(true);
    try {
      const next = await api.post<ImportJob>(`/v1/imports/${job.id}/cancel`);
      setJob(next);
      onChange(next);
      toast('The import was canceled. Links already created stay.');
    } catch (failure) {
      toast(`Could not cancel: ${describeError(failure)}`, 'error');
    } finally {
      setCanceling(false);
    }
  };

  const total = job.total ?? (running ? null : job.done);
  return (
    <article class="import-job" aria-labelledby={`job-${job.id}`}>
      <header class="section-header">
        <h2 id={`job-${job.id}`}>
          {title}: {sourceInfo(job.source).label}
        </h2>
        <span class={`state-badge ${STATUS_CLASS[job.status]}`} data-testid="import-status">
          {STATUS_TEXT[job.status]}
        </span>
      </header>
      <label>
        {total === null ? `${number.format(job.done)} rows read` : `${number.format(job.done)} of ${number.format(total)} rows`}
        {/* Without a total (some services never say), an indeterminate bar while it runs. */}
        <progress class="import-progress" max={total ?? undefined} value={total === null ? undefined : Math.min(job.done, Math.max(total, 0))} />
      </label>
      <p role="status" class="import-counts">
        {job.dry_run ? 'Would create' : 'Created'} <strong>{number.format(job.created)}</strong> · {job.dry_run ? 'would fail' : 'failed'} <strong>{number.format(job.failed)}</strong> ·
        already imported <strong>{number.format(job.skipped)}</strong>
      </p>
      {job.error && <ErrorBanner error={new Error(job.error.message)} title={`The ${job.dry_run ? 'preview' : 'import'} failed (${job.error.code})`} />}
      <ErrorBanner error={error} title="The progress could not be read" />
      <div class="form-actions">
        {running && (
          <button type="button" class="secondary" onClick={() => void cancel()} disabled={canceling} aria-busy={canceling ? 'true' : undefined}>
            Cancel the {job.dry_run ? 'preview' : 'import'}
          </button>
        )}
        {job.status === 'succeeded' && !job.dry_run && (
          <a href={to('/links')} role="button" class="secondary">
            See the links
          </a>
        )}
      </div>
      {job.failed > 0 && <RowErrors job={job} />}
    </article>
  );
}
