import './monitoring.css';
import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { localDateTime } from '../../components/date-time.ts';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { Pager, useCursorList } from '../../components/pager.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction } from '../../components/use-resource.ts';
import { to } from '../../paths.ts';
import { REPORT_REASONS, type Report } from './monitoring.types.ts';

const ACTIONS = {
  dismiss: { label: 'Dismiss', done: 'dismissed', text: 'Nothing wrong: the link works as before (a warning or block this report set is lifted).' },
  warn: { label: 'Warn visitors', done: 'resolved with a warning', text: 'Visitors see a warning page naming the reason first, and may continue.' },
  disable: { label: 'Block the link', done: 'resolved: the link is blocked', text: 'The link answers 410 with a notice; nobody is sent to the destination.' },
} as const;
type ActionName = keyof typeof ACTIONS;

/** Abuse reports filed against the workspace's links: the review queue, each resolved by dismissing, warning or blocking. */
export default function ReportsScreen() {
  const [status, setStatus] = useState('open');
  const list = useCursorList<Report>('/v1/reports', { status: status || undefined });
  const [resolving, setResolving] = useState<Report | null>(null);

  return (
    <Page title="Abuse reports">
      <p>Anyone may report a short link as phishing, malware or spam (the report form on the short domain, or POST /v1/public/reports). Review each one here.</p>
      <Field label="Show">
        {(control) => (
          <select {...control} value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="open">To review</option>
            <option value="resolved">Resolved</option>
            <option value="">All</option>
          </select>
        )}
      </Field>
      <ErrorBanner error={list.error} title="The reports could not be loaded" />
      {list.loading && list.items.length === 0 && <p aria-busy="true">Loading…</p>}
      {!list.loading && !list.error && list.items.length === 0 && <EmptyState title={status === 'open' ? 'Nothing to review' : 'No reports'}>Reports about your links appear here.</EmptyState>}
      {list.items.map((report) => (
        <article key={report.id} class="report-card" aria-labelledby={`report-${report.id}`}>
          <h2 id={`report-${report.id}`}>
            {REPORT_REASONS[report.reason] ?? report.reason}: {report.short_url.replace(/^https?:\/\//, '')}
          </h2>
          <dl class="facts">
            <dt>Destination</dt>
            <dd>{report.destination}</dd>
            <dt>Reported</dt>
            <dd>
              {localDateTime(report.created_at)} {report.source === 'form' ? 'through the report form' : 'through the API'}
            </dd>
            {report.details && (
              <>
                <dt>What the reporter saw</dt>
                <dd>{report.details}</dd>
              </>
            )}
            {report.reporter_contact && (
              <>
                <dt>Reporter</dt>
                <dd>{report.reporter_contact}</dd>
              </>
            )}
            {report.resolution && (
              <>
                <dt>Resolution</dt>
                <dd>
                  {ACTIONS[report.resolution.action].label} on {localDateTime(report.resolution.resolved_at)}
                  {report.resolution.note ? `: ${report.resolution.note}` : ''}
                </dd>
              </>
            )}
          </dl>
          <div class="form-buttons">
            <a href={to(`/links/${report.link_id}`)}>Open the link</a>
            <button type="button" class="secondary small" onClick={() => setResolving(report)} aria-label={`${report.status === 'open' ? 'Resolve' : 'Change resolution of'} the report about ${report.short_url}`}>
              {report.status === 'open' ? 'Resolve' : 'Change resolution'}
            </button>
          </div>
        </article>
      ))}
      <Pager {...list.pager} />
      {resolving && (
        <ResolveDialog
          report={resolving}
          onClose={(changed) => {
            setResolving(null);
            if (changed) list.reload();
          }}
        />
      )}
    </Page>
  );
}

/** A native modal: focus stays inside, Escape closes it. */
function ResolveDialog({ report, onClose }: { report: Report; onClose: (changed: boolean) => void }) {
  const [choice, setChoice] = useState<ActionName>('dismiss');
  const [note, setNote] = useState('');
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;
  const open = (element: HTMLDialogElement | null) => {
    if (element && !element.open) element.showModal();
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    const done = await action.run(() => api.post<Report>(`/v1/reports/${report.id}/resolve`, { action: choice, ...(note.trim() ? { note: note.trim() } : {}) }));
    if (!done) return;
    toast(`Report ${ACTIONS[choice].done}.`);
    onClose(true);
  };
  return (
    <dialog ref={open} aria-labelledby="resolve-title" onCancel={(e) => (e.preventDefault(), onClose(false))}>
      <article>
        <h2 id="resolve-title">Resolve the report</h2>
        <p>
          {REPORT_REASONS[report.reason] ?? report.reason} reported for {report.short_url}.
        </p>
        <form onSubmit={(e) => void submit(e)} aria-label="Resolve the report">
          {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The report was not resolved" />}
          <fieldset>
            <legend>What to do</legend>
            {(Object.keys(ACTIONS) as ActionName[]).map((name) => (
              <label key={name}>
                <input type="radio" name="action" value={name} checked={choice === name} onChange={() => setChoice(name)} />
                <strong>{ACTIONS[name].label}</strong>: {ACTIONS[name].text}
              </label>
            ))}
          </fieldset>
          <Field label="Note (for your records)" error={failure?.fieldError('note')}>
            {(control) => <textarea {...control} maxLength={1000} value={note} onInput={(e) => setNote(e.currentTarget.value)} />}
          </Field>
          <footer class="form-buttons">
            <button type="button" class="secondary" onClick={() => onClose(false)} disabled={action.busy}>
              Cancel
            </button>
            <button type="submit" disabled={action.busy} aria-busy={action.busy ? 'true' : undefined}>
              {ACTIONS[choice].label}
            </button>
          </footer>
        </form>
      </article>
    </dialog>
  );
}
