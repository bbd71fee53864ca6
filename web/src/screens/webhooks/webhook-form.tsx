import { useState } from 'preact/hooks';
import { ApiError } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { eventChoices } from './event-catalogue.ts';
import type { EventType } from './event-catalogue.ts';

export interface WebhookFormValue {
  url: string;
  name: string;
  events: EventType[];
}

interface WebhookFormProps {
  kind: 'workspace' | 'partner';
  initial?: WebhookFormValue;
  submitLabel: string;
  busy: boolean;
  error: unknown;
  onSubmit: (value: WebhookFormValue) => void;
  onCancel?: () => void;
}

/** The endpoint's URL, its label and the events it receives; the same form creates and edits. */
export function WebhookForm({ kind, initial, submitLabel, busy, error, onSubmit, onCancel }: WebhookFormProps) {
  const [url, setUrl] = useState(initial?.url ?? '');
  const [name, setName] = useState(initial?.name ?? '');
  const [events, setEvents] = useState<EventType[]>(initial?.events ?? []);
  const [localError, setLocalError] = useState<string | null>(null);
  const failure = error instanceof ApiError ? error : null;
  const choices = eventChoices(kind);

  const toggle = (type: EventType, on: boolean) => setEvents((list) => (on ? [...list.filter((t) => t !== type), type] : list.filter((t) => t !== type)));
  const submit = (event: Event) => {
    event.preventDefault();
    if (events.length === 0) {
      setLocalError('Choose at least one event.');
      return;
    }
    setLocalError(null);
    // In catalogue order, so the stored list reads the same way as the form.
    onSubmit({ url: url.trim(), name: name.trim(), events: choices.map((c) => c.type).filter((t) => events.includes(t)) });
  };
  const eventsError = localError ?? failure?.fieldError('events', true);

  return (
    <form onSubmit={submit} aria-label={submitLabel}>
      {error !== null && !failure?.details.length && <ErrorBanner error={error} title="The endpoint was not saved" />}
      <Field label="Endpoint URL" error={failure?.fieldError('url')} hint="Receives a signed JSON POST per event; it must answer 2xx within 10 seconds.">
        {(control) => <input {...control} type="url" name="url" required placeholder="https://example.com/hooks/linkplane" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />}
      </Field>
      <Field label="Name (optional)" error={failure?.fieldError('name')}>
        {(control) => <input {...control} name="name" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <fieldset aria-describedby={eventsError ? 'webhook-events-error' : undefined}>
        <legend>Events</legend>
        <div class="event-tools">
          <button type="button" class="secondary outline" onClick={() => setEvents((list) => [...choices.filter((c) => !c.optIn).map((c) => c.type), ...list.filter((t) => choices.some((c) => c.optIn && c.type === t))])}>
            Select all
          </button>
          <button type="button" class="secondary outline" onClick={() => setEvents([])}>
            Clear
          </button>
        </div>
        {choices.map((choice) => (
          <label key={choice.type} class="event-choice">
            <input type="checkbox" name="events" value={choice.type} checked={events.includes(choice.type)} onChange={(e) => toggle(choice.type, e.currentTarget.checked)} />
            <code>{choice.type}</code> <small>{choice.description}</small>
          </label>
        ))}
        {eventsError && (
          <small id="webhook-events-error" class="field-error" role="alert">
            {eventsError}
          </small>
        )}
      </fieldset>
      <div class="form-actions">
        <button type="submit" disabled={busy} aria-busy={busy ? 'true' : undefined}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
