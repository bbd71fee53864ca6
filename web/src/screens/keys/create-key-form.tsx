import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { EXPIRY_CHOICES, expiryOf, groupScopes, type CreatedKey, type ScopeInfo } from './key-types.ts';

interface CreateKeyFormProps {
  context: string;
  scopes: ScopeInfo[];
  onCreated: (created: CreatedKey) => void;
}

/** Name, scopes (one group of checkboxes per area) and expiry of a new key. */
export function CreateKeyForm({ context, scopes, onCreated }: CreateKeyFormProps) {
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const [expiry, setExpiry] = useState('never');
  const [date, setDate] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const failure = error instanceof ApiError ? error : null;
  const groups = groupScopes(scopes);
  const scopesError = failure?.fieldError('scopes', true);

  const toggle = (scope: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(scope);
    else next.delete(scope);
    setChosen(next);
  };
  const pick = (filter: (scope: string) => boolean) => setChosen(new Set(scopes.map((s) => s.scope).filter(filter)));

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    if (chosen.size === 0) {
      setError(new ApiError(422, 'validation_failed', 'Choose at least one scope.', [{ path: 'scopes', message: 'Choose at least one scope.' }]));
      return;
    }
    setBusy(true);
    try {
      const created = await api.post<CreatedKey>('/auth/keys', {
        context,
        name: name.trim(),
        scopes: scopes.map((s) => s.scope).filter((s) => chosen.has(s)),
        expires_at: expiryOf(expiry, date),
      });
      setName('');
      setChosen(new Set());
      setExpiry('never');
      onCreated(created);
    } catch (failed) {
      setError(failed);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(e) => void submit(e)} class="create-key-form" aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <Field label="Name" error={failure?.fieldError('name')} hint="What uses the key, to recognise it later: “CI deploys”, “CRM sync”.">
        {(control) => <input {...control} type="text" name="name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <fieldset aria-describedby={scopesError ? 'scopes-error' : 'scopes-hint'}>
        <legend>Scopes</legend>
        <small id="scopes-hint">Give the key only what it needs.</small>
        <div class="scope-shortcuts">
          <button type="button" class="secondary outline" onClick={() => pick((s) => s.endsWith(':read'))}>
            All read scopes
          </button>
          <button type="button" class="secondary outline" onClick={() => pick(() => true)}>
            Every scope
          </button>
          <button type="button" class="secondary outline" onClick={() => pick(() => false)}>
            None
          </button>
        </div>
        <div class="scope-groups">
          {groups.map((group) => (
            <fieldset key={group.area} class="scope-group">
              <legend>{group.area}</legend>
              {group.scopes.map((s) => (
                <label key={s.scope}>
                  <input type="checkbox" name="scopes" value={s.scope} checked={chosen.has(s.scope)} onChange={(e) => toggle(s.scope, e.currentTarget.checked)} />
                  <code>{s.scope}</code> <small>{s.description}</small>
                </label>
              ))}
            </fieldset>
          ))}
        </div>
        {scopesError && (
          <small id="scopes-error" class="field-error" role="alert">
            {scopesError}
          </small>
        )}
      </fieldset>
      <div class="grid">
        <Field label="Expires" error={failure?.fieldError('expires_at')}>
          {(control) => (
            <select {...control} name="expiry" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
              {EXPIRY_CHOICES.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        {expiry === 'date' && (
          <Field label="Expiry date" hint="The key stops working at the end of this day.">
            {(control) => (
              <input {...control} type="date" name="expiry_date" required min={new Date().toISOString().slice(0, 10)} value={date} onInput={(e) => setDate(e.currentTarget.value)} />
            )}
          </Field>
        )}
      </div>
      <ErrorBanner error={failure && (failure.details.length > 0 || failure.code === 'validation_failed') ? null : error} title="The key could not be created" />
      <button type="submit" disabled={busy} aria-busy={busy ? 'true' : undefined}>
        Create key
      </button>
    </form>
  );
}
