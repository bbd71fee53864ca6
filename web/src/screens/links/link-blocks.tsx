// Editors of a link's routing blocks (spec 2.2, 2.3, 2.5, 2.6): targeting, A/B test, mobile deep links, rotator.
import { useState } from 'preact/hooks';
import type { ApiError } from '../../api.ts';
import { Field } from '../../components/field.tsx';
import { CheckboxGroup, ItemControls, ListInput, NumberInput, move, replaceAt } from './link-inputs.tsx';
import { DEVICES, OPERATING_SYSTEMS, OS_LABELS, type AbTest, type Mobile, type MobileApp, type Rotator, type TargetingEntry } from './link-types.ts';

interface BlockProps<T> {
  value: T;
  onChange: (value: T) => void;
  error: ApiError | null;
}

// ---------------------------------------------------------------------------------------------------------------

export function TargetingEditor({ value, onChange, error }: BlockProps<TargetingEntry[]>) {
  // Entries have no id: moving or removing one remounts the rows, so no typed list keeps another entry's text.
  const [generation, setGeneration] = useState(0);
  const reorder = (next: TargetingEntry[]) => {
    setGeneration((g) => g + 1);
    onChange(next);
  };
  return (
    <div>
      <p>Send visitors who match every condition of an entry to its URL; the first matching entry wins.</p>
      <ol class="block-list">
        {value.map((entry, index) => {
          const path = `targeting[${index}]`;
          const name = `Targeting ${index + 1}`;
          const set = (next: TargetingEntry) => onChange(replaceAt(value, index, next));
          const setMatch = (key: keyof TargetingEntry['match'], items: string[]) => {
            const match = { ...entry.match, [key]: items.length ? items : undefined };
            if (!items.length) delete match[key];
            set({ ...entry, match });
          };
          return (
            <li key={`${generation}-${index}`}>
              <fieldset>
                <legend>{name}</legend>
                <Field label={`${name} URL`} error={error?.fieldError(`${path}.url`)}>
                  {(control) => <input {...control} type="url" required value={entry.url} placeholder="https://" onInput={(e) => set({ ...entry, url: e.currentTarget.value })} />}
                </Field>
                <div class="grid">
                  <Field label={`${name} countries`} error={error?.fieldError(`${path}.match.country`, true)} hint="Two-letter codes, comma-separated">
                    {(control) => <ListInput control={control} value={entry.match.country} transform={(s) => s.toUpperCase()} onChange={(items) => setMatch('country', items)} />}
                  </Field>
                  <Field label={`${name} languages`} error={error?.fieldError(`${path}.match.language`, true)} hint="Language tags: en, pt-BR">
                    {(control) => <ListInput control={control} value={entry.match.language} onChange={(items) => setMatch('language', items)} />}
                  </Field>
                </div>
                <div class="grid">
                  <CheckboxGroup
                    legend={`${name} devices`}
                    options={DEVICES.map((d) => ({ value: d, label: d }))}
                    value={entry.match.device}
                    onChange={(items) => setMatch('device', items)}
                    error={error?.fieldError(`${path}.match.device`, true)}
                  />
                  <CheckboxGroup
                    legend={`${name} operating systems`}
                    options={OPERATING_SYSTEMS.map((o) => ({ value: o, label: OS_LABELS[o] }))}
                    value={entry.match.os}
                    onChange={(items) => setMatch('os', items)}
                    error={error?.fieldError(`${path}.match.os`, true)}
                  />
                </div>
                {error?.fieldError(`${path}.match`) && (
                  <small class="field-error" role="alert">
                    Conditions: {error.fieldError(`${path}.match`)}
                  </small>
                )}
                <ItemControls name={name} index={index} count={value.length} onMove={(f, t) => reorder(move(value, f, t))} onRemove={() => reorder(value.filter((_, i) => i !== index))} />
              </fieldset>
            </li>
          );
        })}
      </ol>
      <button type="button" class="secondary" disabled={value.length >= 50} onClick={() => onChange([...value, { match: {}, url: '' }])}>
        Add a targeting entry
      </button>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------------------------

export function AbTestEditor({ value, onChange, error }: BlockProps<AbTest | null>) {
  if (!value) {
    return (
      <button type="button" class="secondary" onClick={() => onChange({ enabled: true, variants: [{ url: '', weight: 50 }, { url: '', weight: 50 }] })}>
        Set up an A/B test
      </button>
    );
  }
  const auto = value.auto;
  return (
    <div>
      <label>
        <input type="checkbox" role="switch" checked={value.enabled} onChange={(e) => onChange({ ...value, enabled: e.currentTarget.checked })} />
        A/B test running
      </label>
      <ol class="block-list">
        {value.variants.map((variant, index) => {
          const path = `ab_test.variants[${index}]`;
          const name = `Variant ${index + 1}`;
          const set = (next: typeof variant) => onChange({ ...value, variants: replaceAt(value.variants, index, next) });
          return (
            <li key={index}>
              <fieldset>
                <legend>{name}</legend>
                <div class="grid">
                  <Field label={`${name} URL`} error={error?.fieldError(`${path}.url`)}>
                    {(control) => <input {...control} type="url" required value={variant.url} placeholder="https://" onInput={(e) => set({ ...variant, url: e.currentTarget.value })} />}
                  </Field>
                  <Field label={`${name} weight`} error={error?.fieldError(`${path}.weight`)} hint="1 to 100">
                    {(control) => <NumberInput control={control} min={1} max={100} value={variant.weight} onChange={(n) => set({ ...variant, weight: n ?? 0 })} />}
                  </Field>
                  <Field label={`${name} label`} error={error?.fieldError(`${path}.label`)}>
                    {(control) => <input {...control} maxLength={40} value={variant.label ?? ''} onInput={(e) => set({ ...variant, label: e.currentTarget.value || undefined })} />}
                  </Field>
                </div>
                <ItemControls
                  name={name}
                  index={index}
                  count={value.variants.length}
                  onMove={(f, t) => onChange({ ...value, variants: move(value.variants, f, t) })}
                  onRemove={() => onChange({ ...value, variants: value.variants.filter((_, i) => i !== index) })}
                />
              </fieldset>
            </li>
          );
        })}
      </ol>
      {error?.fieldError('ab_test.variants') && (
        <small class="field-error" role="alert">
          Variants: {error.fieldError('ab_test.variants')}
        </small>
      )}
      <button type="button" class="secondary" disabled={value.variants.length >= 10} onClick={() => onChange({ ...value, variants: [...value.variants, { url: '', weight: 50 }] })}>
        Add a variant
      </button>
      <fieldset>
        <legend>Automatic winner</legend>
        <label>
          <input
            type="checkbox"
            checked={auto?.enabled ?? false}
            onChange={(e) => onChange({ ...value, auto: { ...auto, enabled: e.currentTarget.checked, min_sample: auto?.min_sample ?? 1000 } })}
          />
          Send all traffic to the best-converting variant once every variant has enough clicks
        </label>
        {auto?.enabled && (
          <Field label="Clicks per variant before choosing" error={error?.fieldError('ab_test.auto.min_sample')} hint="10 or more">
            {(control) => <NumberInput control={control} min={10} value={auto.min_sample} onChange={(n) => onChange({ ...value, auto: { ...auto, min_sample: n ?? 1000 } })} />}
          </Field>
        )}
        {auto?.winner_index !== undefined && <p>Winner: variant {auto.winner_index + 1}.</p>}
      </fieldset>
      <button type="button" class="secondary outline" onClick={() => onChange(null)}>
        Remove the A/B test
      </button>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------------------------

function AppFields({ side, label, app, onChange, error }: { side: 'ios' | 'android'; label: string; app: MobileApp | undefined; onChange: (app: MobileApp) => void; error: ApiError | null }) {
  const current = app ?? {};
  const path = `mobile.${side}`;
  return (
    <fieldset>
      <legend>{label}</legend>
      <Field label={`${label} app link`} error={error?.fieldError(`${path}.app_url`)} hint="The app's deep link, e.g. myapp://product/42">
        {(control) => <input {...control} value={current.app_url ?? ''} onInput={(e) => onChange({ ...current, app_url: e.currentTarget.value })} />}
      </Field>
      <Field label={`${label} store URL`} error={error?.fieldError(`${path}.store_url`)}>
        {(control) => <input {...control} type="url" value={current.store_url ?? ''} onInput={(e) => onChange({ ...current, store_url: e.currentTarget.value })} />}
      </Field>
      <Field label={`${label} web URL`} error={error?.fieldError(`${path}.web_url`)} hint="Where to go when the app cannot open">
        {(control) => <input {...control} type="url" value={current.web_url ?? ''} onInput={(e) => onChange({ ...current, web_url: e.currentTarget.value })} />}
      </Field>
    </fieldset>
  );
}

export function MobileEditor({ value, onChange, error }: BlockProps<Mobile | null>) {
  if (!value) {
    return (
      <button type="button" class="secondary" onClick={() => onChange({ enabled: true, tablet: 'mobile', in_app: 'attempt', delay_ms: 1600, deferred: false })}>
        Set up mobile deep links
      </button>
    );
  }
  return (
    <div>
      <label>
        <input type="checkbox" role="switch" checked={value.enabled} onChange={(e) => onChange({ ...value, enabled: e.currentTarget.checked })} />
        Open the app on phones
      </label>
      <div class="grid">
        <AppFields side="ios" label="iOS" app={value.ios} error={error} onChange={(ios) => onChange({ ...value, ios })} />
        <AppFields side="android" label="Android" app={value.android} error={error} onChange={(android) => onChange({ ...value, android })} />
      </div>
      <Field label="Desktop URL" error={error?.fieldError('mobile.desktop_url')} hint="Optional: where desktop visitors go instead of the destination">
        {(control) => <input {...control} type="url" value={value.desktop_url ?? ''} onInput={(e) => onChange({ ...value, desktop_url: e.currentTarget.value || undefined })} />}
      </Field>
      <div class="grid">
        <Field label="Tablets count as" error={error?.fieldError('mobile.tablet')}>
          {(control) => (
            <select {...control} value={value.tablet} onChange={(e) => onChange({ ...value, tablet: e.currentTarget.value as Mobile['tablet'] })}>
              <option value="mobile">Phones</option>
              <option value="desktop">Desktops</option>
            </select>
          )}
        </Field>
        <Field label="Inside in-app browsers" error={error?.fieldError('mobile.in_app')}>
          {(control) => (
            <select {...control} value={value.in_app} onChange={(e) => onChange({ ...value, in_app: e.currentTarget.value as Mobile['in_app'] })}>
              <option value="attempt">Try to open the app</option>
              <option value="store">Go to the store</option>
              <option value="web">Stay on the web</option>
            </select>
          )}
        </Field>
        <Field label="Wait before falling back (ms)" error={error?.fieldError('mobile.delay_ms')} hint="500 to 5000">
          {(control) => <NumberInput control={control} min={500} max={5000} value={value.delay_ms} onChange={(n) => onChange({ ...value, delay_ms: n ?? 1600 })} />}
        </Field>
      </div>
      <label>
        <input type="checkbox" checked={value.deferred} onChange={(e) => onChange({ ...value, deferred: e.currentTarget.checked })} />
        Deferred deep link (the app finds the link after it is installed)
      </label>
      <button type="button" class="secondary outline" onClick={() => onChange(null)}>
        Remove mobile deep links
      </button>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------------------------

export function RotatorEditor({ value, onChange, error }: BlockProps<Rotator | null>) {
  if (!value) {
    return (
      <button
        type="button"
        class="secondary"
        onClick={() =>
          onChange({ enabled: true, mode: 'weighted', sticky_ttl_seconds: 0, fallback_url: null, auto_disable_unhealthy: false, destinations: [{ id: 'd1', url: '', weight: 1, active: true }] })
        }
      >
        Set up a rotator
      </button>
    );
  }
  const nextId = () => {
    const taken = new Set(value.destinations.map((d) => d.id));
    let n = value.destinations.length + 1;
    while (taken.has(`d${n}`)) n++;
    return `d${n}`;
  };
  return (
    <div>
      <label>
        <input type="checkbox" role="switch" checked={value.enabled} onChange={(e) => onChange({ ...value, enabled: e.currentTarget.checked })} />
        Rotator on
      </label>
      <div class="grid">
        <Field label="Rotation" error={error?.fieldError('rotator.mode')}>
          {(control) => (
            <select {...control} value={value.mode} onChange={(e) => onChange({ ...value, mode: e.currentTarget.value as Rotator['mode'] })}>
              <option value="weighted">By weight</option>
              <option value="round_robin">In turn</option>
              <option value="uniform">Evenly at random</option>
            </select>
          )}
        </Field>
        <Field label="Keep a visitor's destination for (seconds)" error={error?.fieldError('rotator.sticky_ttl_seconds')} hint="0: a new pick every visit">
          {(control) => <NumberInput control={control} min={0} max={2592000} value={value.sticky_ttl_seconds} onChange={(n) => onChange({ ...value, sticky_ttl_seconds: n ?? 0 })} />}
        </Field>
      </div>
      <Field label="Fallback URL" error={error?.fieldError('rotator.fallback_url')} hint="Used when no destination is available">
        {(control) => <input {...control} type="url" value={value.fallback_url ?? ''} onInput={(e) => onChange({ ...value, fallback_url: e.currentTarget.value || null })} />}
      </Field>
      <label>
        <input type="checkbox" checked={value.auto_disable_unhealthy} onChange={(e) => onChange({ ...value, auto_disable_unhealthy: e.currentTarget.checked })} />
        Take destinations that stop answering out of the rotation
      </label>
      <ol class="block-list">
        {value.destinations.map((destination, index) => {
          const path = `rotator.destinations[${index}]`;
          const name = `Destination ${index + 1}`;
          const set = (next: typeof destination) => onChange({ ...value, destinations: replaceAt(value.destinations, index, next) });
          return (
            <li key={destination.id || index}>
              <fieldset>
                <legend>{name}</legend>
                <div class="grid">
                  <Field label={`${name} URL`} error={error?.fieldError(`${path}.url`)}>
                    {(control) => <input {...control} type="url" required value={destination.url} placeholder="https://" onInput={(e) => set({ ...destination, url: e.currentTarget.value })} />}
                  </Field>
                  <Field label={`${name} weight`} error={error?.fieldError(`${path}.weight`)}>
                    {(control) => <NumberInput control={control} min={1} max={100} value={destination.weight} onChange={(n) => set({ ...destination, weight: n ?? 1 })} />}
                  </Field>
                  <Field label={`${name} daily click limit`} error={error?.fieldError(`${path}.limits`, true)}>
                    {(control) => (
                      <NumberInput
                        control={control}
                        min={1}
                        value={destination.limits?.max_daily_clicks}
                        onChange={(n) => {
                          const limits = { ...destination.limits, max_daily_clicks: n };
                          if (n === undefined) delete limits.max_daily_clicks;
                          set({ ...destination, limits: Object.keys(limits).length ? limits : null });
                        }}
                      />
                    )}
                  </Field>
                </div>
                <label>
                  <input type="checkbox" checked={destination.active} onChange={(e) => set({ ...destination, active: e.currentTarget.checked })} />
                  {name} active
                </label>
                <ItemControls
                  name={name}
                  index={index}
                  count={value.destinations.length}
                  onMove={(f, t) => onChange({ ...value, destinations: move(value.destinations, f, t) })}
                  onRemove={() => onChange({ ...value, destinations: value.destinations.filter((_, i) => i !== index) })}
                />
              </fieldset>
            </li>
          );
        })}
      </ol>
      {error?.fieldError('rotator.destinations') && (
        <small class="field-error" role="alert">
          Destinations: {error.fieldError('rotator.destinations')}
        </small>
      )}
      <button type="button" class="secondary" disabled={value.destinations.length >= 50} onClick={() => onChange({ ...value, destinations: [...value.destinations, { id: nextId(), url: '', weight: 1, active: true }] })}>
        Add a destination
      </button>{' '}
      <button type="button" class="secondary outline" onClick={() => onChange(null)}>
        Remove the rotator
      </button>
    </div>
  );
}
