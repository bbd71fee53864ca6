import './monitoring.css';
import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { localDateTime } from '../../components/date-time.ts';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { Pager, useCursorList } from '../../components/pager.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction } from '../../components/use-resource.ts';
import { ALERT_TYPES, ALERT_TYPE_TEXT, type AlertFiring, type AlertRule, type AlertType } from './monitoring.types.ts';

/** Alert rules (conditions the worker evaluates) and their firings, which can be acknowledged. */
export default function AlertsScreen() {
  const rules = useCursorList<AlertRule>('/v1/alerts/rules', {});
  const [state, setState] = useState('firing');
  const firings = useCursorList<AlertFiring>('/v1/alerts/firings', { state: state || undefined });
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<AlertRule | null>(null);
  const action = useAction();

  const toggle = async (rule: AlertRule) => {
    if (await action.run(() => api.patch(`/v1/alerts/rules/${rule.id}`, { enabled: !rule.enabled }))) {
      toast(`${rule.name} ${rule.enabled ? 'paused' : 'turned on'}.`);
      rules.reload();
    }
  };
  const remove = async () => {
    const rule = deleting;
    if (!rule) return;
    await action.run(() => api.delete(`/v1/alerts/rules/${rule.id}`));
    setDeleting(null);
    toast(`${rule.name} deleted.`);
    rules.reload();
  };
  const acknowledge = async (firing: AlertFiring) => {
    if (await action.run(() => api.post(`/v1/alerts/firings/${firing.id}/acknowledge`))) {
      toast(`${firing.rule_name} acknowledged.`);
      firings.reload();
    }
  };

  return (
    <Page
      title="Alerts"
      actions={
        !creating && (
          <button type="button" onClick={() => setCreating(true)}>
            New alert rule
          </button>
        )
      }
    >
      <ErrorBanner error={action.error} title="That did not work" />
      {creating && (
        <RuleForm
          onCancel={() => setCreating(false)}
          onCreated={(rule) => {
            setCreating(false);
            toast(`Alert rule ${rule.name} created.`);
            rules.reload();
          }}
        />
      )}
      <section aria-labelledby="alert-firings">
        <h2 id="alert-firings">Firings</h2>
        <Field label="Show">
          {(control) => (
            <select {...control} value={state} onChange={(e) => setState(e.currentTarget.value)}>
              <option value="firing">Firing now</option>
              <option value="resolved">Resolved</option>
              <option value="">All</option>
            </select>
          )}
        </Field>
        <ErrorBanner error={firings.error} title="The firings could not be loaded" />
        {!firings.loading && !firings.error && firings.items.length === 0 && <p>{state === 'firing' ? 'Nothing is firing.' : 'No firings.'}</p>}
        {firings.items.length > 0 && (
          <DataTable
            caption="Alert firings"
            hideCaption
            columns={[
              { label: 'Rule', render: (f) => f.rule_name },
              { label: 'What happened', render: (f) => f.message },
              { label: 'Started', render: (f) => localDateTime(f.started_at) },
              { label: 'State', render: (f) => (f.state === 'firing' ? 'Firing' : `Resolved ${localDateTime(f.resolved_at)}`) },
              {
                label: 'Acknowledged',
                render: (f) =>
                  f.acknowledged_at ? (
                    localDateTime(f.acknowledged_at)
                  ) : (
                    <button type="button" class="secondary small" disabled={action.busy} onClick={() => void acknowledge(f)} aria-label={`Acknowledge ${f.rule_name} (${localDateTime(f.started_at)})`}>
                      Acknowledge
                    </button>
                  ),
              },
            ]}
            rows={firings.items}
            rowKey={(f) => f.id}
          />
        )}
        <Pager {...firings.pager} />
      </section>
      <section aria-labelledby="alert-rules">
        <h2 id="alert-rules">Rules</h2>
        <ErrorBanner error={rules.error} title="The rules could not be loaded" />
        {!rules.loading && !rules.error && rules.items.length === 0 && (
          <EmptyState title="No alert rules yet">An alert rule watches the clicks (a spike, a drop, bots) or the platform's state (webhooks failing, domains in error) and e-mails you or calls your webhooks.</EmptyState>
        )}
        {rules.items.length > 0 && (
          <DataTable
            caption="Alert rules"
            hideCaption
            columns={[
              { label: 'Name', render: (r) => r.name },
              { label: 'Condition', render: (r) => `${ALERT_TYPE_TEXT[r.type]?.label ?? r.type}, threshold ${r.threshold}` },
              { label: 'Window', render: (r) => (ALERT_TYPE_TEXT[r.type]?.clicks ? `${r.window_minutes} min` : '—') },
              { label: 'Notifies', render: (r) => [...r.channels.emails, r.channels.webhook ? 'webhooks' : null].filter(Boolean).join(', ') || 'Nobody (dashboard only)' },
              {
                label: 'Actions',
                render: (r) => (
                  <div class="row-actions">
                    <button type="button" class="secondary outline small" disabled={action.busy} onClick={() => void toggle(r)} aria-label={`${r.enabled ? 'Pause' : 'Turn on'} ${r.name}`}>
                      {r.enabled ? 'Pause' : 'Turn on'}
                    </button>
                    <button type="button" class="secondary outline small" onClick={() => setDeleting(r)} aria-label={`Delete ${r.name}`}>
                      Delete
                    </button>
                  </div>
                ),
              },
            ]}
            rows={rules.items}
            rowKey={(r) => r.id}
          />
        )}
        <Pager {...rules.pager} />
      </section>
      <ConfirmDialog open={deleting !== null} title="Delete this alert rule?" confirmLabel="Delete the rule" danger busy={action.busy} onCancel={() => setDeleting(null)} onConfirm={() => void remove()}>
        <p>{deleting?.name} stops being evaluated; its past firings stay listed.</p>
      </ConfirmDialog>
    </Page>
  );
}

function RuleForm({ onCancel, onCreated }: { onCancel: () => void; onCreated: (rule: AlertRule) => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState<AlertType>('click_spike');
  const [threshold, setThreshold] = useState('3');
  const [windowMinutes, setWindowMinutes] = useState('60');
  const [emails, setEmails] = useState('');
  const [webhook, setWebhook] = useState(false);
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;
  const text = ALERT_TYPE_TEXT[type];

  const submit = async (event: Event) => {
    event.preventDefault();
    const body = {
      name: name.trim(),
      type,
      threshold: Number(threshold),
      ...(text.clicks ? { window_minutes: Number(windowMinutes) } : {}),
      channels: { emails: emails.split(/[\s,;]+/).filter(Boolean), webhook },
    };
    const rule = await action.run(() => api.post<AlertRule>('/v1/alerts/rules', body));
    if (rule) onCreated(rule);
  };

  return (
    <form class="card-form" onSubmit={(e) => void submit(e)} aria-label="New alert rule" noValidate>
      <h2>New alert rule</h2>
      {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The rule was not created" />}
      <Field label="Name" error={failure?.fieldError('name')}>
        {(control) => <input {...control} required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <div class="grid">
        <Field label="Condition" error={failure?.fieldError('type')}>
          {(control) => (
            <select {...control} value={type} onChange={(e) => setType(e.currentTarget.value as AlertType)}>
              {ALERT_TYPES.map((t) => (
                <option key={t} value={t}>
                  {ALERT_TYPE_TEXT[t].label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Threshold" hint={text.threshold} error={failure?.fieldError('threshold')}>
          {(control) => <input {...control} type="number" step="any" min={0} required value={threshold} onInput={(e) => setThreshold(e.currentTarget.value)} />}
        </Field>
        {text.clicks && (
          <Field label="Window (minutes)" hint="Whole quarter-hours: 15, 30, 60…" error={failure?.fieldError('window_minutes')}>
            {(control) => <input {...control} type="number" step={15} min={15} value={windowMinutes} onInput={(e) => setWindowMinutes(e.currentTarget.value)} />}
          </Field>
        )}
      </div>
      <Field label="E-mail these addresses" hint="Up to 5, separated by commas" error={failure?.fieldError('channels.emails', true)}>
        {(control) => <input {...control} value={emails} onInput={(e) => setEmails(e.currentTarget.value)} />}
      </Field>
      <label>
        <input type="checkbox" checked={webhook} onChange={(e) => setWebhook(e.currentTarget.checked)} />
        Also send alert.fired and alert.resolved to the workspace's webhooks
      </label>
      <div class="form-buttons">
        <button type="submit" disabled={action.busy} aria-busy={action.busy ? 'true' : undefined}>
          Create the alert rule
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
