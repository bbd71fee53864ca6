// The rule builder: each rule reads as a sentence ("When device is mobile and country is US, redirect to …"),
// edited as a list of conditions and one action. Conditions and actions are those of the rule schema (spec 2.4).
import { useState } from 'preact/hooks';
import type { ApiError } from '../../api.ts';
import { Field } from '../../components/field.tsx';
import { newKey, type RuleDraft } from './link-draft.ts';
import { CheckboxGroup, ItemControls, ListInput, NumberInput, move, replaceAt } from './link-inputs.tsx';
import { DEVICES, type RuleAction, type RuleMatch } from './link-types.ts';

const VISITOR_TYPES = [
  'human', 'search_bot', 'social_preview', 'seo_crawler', 'ai_crawler', 'monitoring', 'security_scanner', 'library',
  'headless', 'feed_reader', 'automated', 'datacenter', 'proxy', 'vpn', 'tor', 'unknown',
] as const;
const PROXY_TYPES = ['DCH', 'PUB', 'VPN', 'SES', 'TOR', 'WEB'] as const;
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MAX_RULES = 20;

type Key = keyof RuleMatch;
type Kind = 'choices' | 'list' | 'numbers' | 'yes-no' | 'number' | 'text' | 'hours' | 'weekdays' | 'visit';

interface ConditionSpec {
  key: Key;
  label: string;
  kind: Kind;
  hint?: string;
  options?: readonly string[];
  upper?: boolean;
  min?: number;
  max?: number;
}

/** Every condition of the rule schema, in the order a person looks for them. */
const CONDITIONS: ConditionSpec[] = [
  { key: 'device', label: 'Device', kind: 'choices', options: DEVICES },
  { key: 'country', label: 'Country', kind: 'list', hint: 'Two-letter codes, comma-separated: US, DE', upper: true },
  { key: 'region', label: 'Region', kind: 'list', hint: 'Region names, comma-separated' },
  { key: 'city', label: 'City', kind: 'list', hint: 'City names, comma-separated' },
  { key: 'language', label: 'Browser language', kind: 'list', hint: 'Language tags, comma-separated: en, pt-BR' },
  { key: 'visitor_type', label: 'Visitor type', kind: 'choices', options: VISITOR_TYPES },
  { key: 'verified_bot', label: 'Verified bot', kind: 'yes-no' },
  { key: 'proxy_type', label: 'Proxy type', kind: 'choices', options: PROXY_TYPES },
  { key: 'quality_below', label: 'Traffic quality below', kind: 'number', min: 1, max: 100, hint: '1 to 100' },
  { key: 'asn', label: 'Network (ASN)', kind: 'numbers', hint: 'AS numbers, comma-separated: 15169, 13335' },
  { key: 'ip', label: 'IP address or range', kind: 'list', hint: 'Addresses or CIDR ranges, comma-separated' },
  { key: 'ip_list_ids', label: 'IP list', kind: 'list', hint: 'Ids of workspace IP lists, comma-separated' },
  { key: 'user_agent', label: 'User agent contains', kind: 'text' },
  { key: 'referer', label: 'Referrer contains', kind: 'text' },
  { key: 'has_utm', label: 'Has UTM parameters', kind: 'yes-no' },
  { key: 'local_time', label: 'Local time between', kind: 'hours' },
  { key: 'weekday', label: 'Day of the week', kind: 'weekdays' },
  { key: 'visit', label: 'Visit', kind: 'visit' },
];

const ACTIONS: { type: RuleAction['type']; label: string }[] = [
  { type: 'redirect', label: 'Redirect to another URL' },
  { type: 'block', label: 'Block' },
  { type: 'page', label: 'Show a page' },
  { type: 'warn', label: 'Show a warning first' },
  { type: 'pass', label: 'Let through (stop checking rules)' },
];

function specOf(key: Key): ConditionSpec {
  return CONDITIONS.find((c) => c.key === key)!;
}

/** The value a newly added condition starts with. */
function initialValue(spec: ConditionSpec): RuleMatch[Key] {
  switch (spec.kind) {
    case 'yes-no':
      return true;
    case 'hours':
      return { from: 9, to: 17 };
    case 'visit':
      return 'first';
    case 'text':
      return '';
    case 'number':
      return undefined;
    default:
      return [];
  }
}

function describeCondition(key: Key, value: unknown): string {
  const spec = specOf(key);
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return `${spec.label.toLowerCase()} is …`;
  switch (spec.kind) {
    case 'yes-no':
      return `${spec.label.toLowerCase()}: ${value ? 'yes' : 'no'}`;
    case 'hours': {
      const { from, to } = value as { from: number; to: number };
      return `local time is between ${from}:00 and ${to}:00`;
    }
    case 'weekdays':
      return `day is ${(value as number[]).map((d) => WEEKDAYS[d - 1]).join(' or ')}`;
    case 'visit':
      return `it is the visitor's ${value as string} visit`;
    case 'text':
      return `${spec.label.toLowerCase()} "${value as string}"`;
    case 'number':
      return `${spec.label.toLowerCase()} ${value as number}`;
    default:
      return `${spec.label.toLowerCase()} is ${(value as unknown[]).join(' or ')}`;
  }
}

function describeAction(action: RuleAction): string {
  switch (action.type) {
    case 'redirect':
      return `redirect to ${action.url || '…'}`;
    case 'block':
      return `block with ${action.status} (${action.status === 410 ? 'gone for good' : 'as if the link did not exist'})`;
    case 'page':
      return `show the page "${action.title ?? ''}"`;
    case 'warn':
      return 'show a warning page first';
    case 'pass':
      return 'let the visitor through to the destination';
  }
}

/** The whole rule as one sentence, shown above its editor and read by screen readers. */
export function describeRule(rule: RuleDraft): string {
  const keys = Object.keys(rule.match) as Key[];
  const when = keys.length === 0 ? 'For every visitor' : `When ${keys.map((k) => describeCondition(k, rule.match[k])).join(' and ')}`;
  const prefix = rule.invert && keys.length > 0 ? `Unless ${when.slice(5)}` : when;
  return `${prefix}, ${describeAction(rule.action)}.${rule.enabled ? '' : ' (Disabled)'}`;
}

function newRule(): RuleDraft {
  return { key: newKey(), enabled: true, invert: false, match: {}, action: { type: 'redirect', url: '' } };
}

interface RuleBuilderProps {
  rules: RuleDraft[];
  onChange: (rules: RuleDraft[]) => void;
  error: ApiError | null;
}

export function RuleBuilder({ rules, onChange, error }: RuleBuilderProps) {
  return (
    <div class="rule-builder">
      <p>Rules are checked top to bottom; the first one whose conditions hold decides what the visitor gets.</p>
      {rules.length === 0 && <p class="muted">No rules: every visitor goes to the destination (or its targeting, A/B test, rotator).</p>}
      <ol class="rule-list">
        {rules.map((rule, index) => (
          <li key={rule.key}>
            <RuleEditor
              rule={rule}
              index={index}
              count={rules.length}
              error={error}
              onChange={(next) => onChange(replaceAt(rules, index, next))}
              onMove={(from, to) => onChange(move(rules, from, to))}
              onRemove={() => onChange(rules.filter((_, i) => i !== index))}
            />
          </li>
        ))}
      </ol>
      <button type="button" class="secondary" onClick={() => onChange([...rules, newRule()])} disabled={rules.length >= MAX_RULES}>
        Add a rule
      </button>
    </div>
  );
}

function RuleEditor({
  rule,
  index,
  count,
  error,
  onChange,
  onMove,
  onRemove,
}: {
  rule: RuleDraft;
  index: number;
  count: number;
  error: ApiError | null;
  onChange: (rule: RuleDraft) => void;
  onMove: (from: number, to: number) => void;
  onRemove: () => void;
}) {
  const path = `rules[${index}]`;
  const name = `Rule ${index + 1}`;
  const used = Object.keys(rule.match) as Key[];
  const available = CONDITIONS.filter((c) => !used.includes(c.key));
  const setMatch = (match: RuleMatch) => onChange({ ...rule, match });

  const addCondition = (key: Key) => setMatch({ ...rule.match, [key]: initialValue(specOf(key)) });

  return (
    <fieldset class={`rule${rule.enabled ? '' : ' rule-disabled'}`}>
      <legend>
        {name}
        {rule.label ? `: ${rule.label}` : ''}
      </legend>
      <p class="rule-summary" aria-live="polite">
        {describeRule(rule)}
      </p>
      <div class="grid">
        <Field label={`${name} label (optional)`} error={error?.fieldError(`${path}.label`)}>
          {(control) => <input {...control} value={rule.label ?? ''} maxLength={80} onInput={(e) => onChange({ ...rule, label: e.currentTarget.value || undefined })} />}
        </Field>
        <div class="rule-switches">
          <label>
            <input type="checkbox" role="switch" checked={rule.enabled} onChange={(e) => onChange({ ...rule, enabled: e.currentTarget.checked })} />
            {name} enabled
          </label>
          <label>
            <input type="checkbox" checked={rule.invert} onChange={(e) => onChange({ ...rule, invert: e.currentTarget.checked })} />
            Act when the conditions do <strong>not</strong> hold
          </label>
        </div>
      </div>

      <h4>Conditions (all must hold)</h4>
      {used.length === 0 && <p class="muted">No conditions: the rule applies to every visitor.</p>}
      <ul class="condition-list">
        {used.map((key) => (
          <li key={key} class="condition">
            <ConditionEditor
              spec={specOf(key)}
              ruleName={name}
              value={rule.match[key]}
              error={error?.fieldError(`${path}.match.${key}`, true)}
              onChange={(value) => setMatch({ ...rule.match, [key]: value })}
            />
            <button
              type="button"
              class="secondary outline"
              aria-label={`Remove the ${specOf(key).label.toLowerCase()} condition of ${name}`}
              onClick={() => {
                const { [key]: _removed, ...rest } = rule.match;
                setMatch(rest);
              }}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      {available.length > 0 && <AddCondition ruleName={name} available={available} onAdd={addCondition} />}
      {error?.fieldError(`${path}.match`) && (
        <small class="field-error" role="alert">
          {error.fieldError(`${path}.match`)}
        </small>
      )}

      <h4>Then</h4>
      <ActionEditor ruleName={name} path={`${path}.action`} action={rule.action} error={error} onChange={(action) => onChange({ ...rule, action })} />
      <ItemControls name={name} index={index} count={count} onMove={onMove} onRemove={onRemove} />
    </fieldset>
  );
}

function AddCondition({ ruleName, available, onAdd }: { ruleName: string; available: ConditionSpec[]; onAdd: (key: Key) => void }) {
  // A select and a button rather than acting on change: keyboard users browse a closed select with the arrow keys.
  const [wanted, setWanted] = useState<Key>(available[0]!.key);
  const choice = available.some((c) => c.key === wanted) ? wanted : available[0]!.key;
  return (
    <div class="add-condition" role="group" aria-label={`Add a condition to ${ruleName}`}>
      <select aria-label={`Condition to add to ${ruleName}`} value={choice} onChange={(e) => setWanted(e.currentTarget.value as Key)}>
        {available.map((c) => (
          <option key={c.key} value={c.key}>
            {c.label}
          </option>
        ))}
      </select>
      <button type="button" class="secondary" onClick={() => onAdd(choice)}>
        Add condition
      </button>
    </div>
  );
}

function ConditionEditor({ spec, ruleName, value, error, onChange }: { spec: ConditionSpec; ruleName: string; value: unknown; error?: string; onChange: (value: RuleMatch[Key]) => void }) {
  const label = `${spec.label} (${ruleName})`;
  switch (spec.kind) {
    case 'choices':
      return (
        <CheckboxGroup
          legend={label}
          options={spec.options!.map((o) => ({ value: o, label: o.replace(/_/g, ' ') }))}
          value={value as string[]}
          onChange={(next) => onChange(next)}
          error={error}
        />
      );
    case 'weekdays':
      return (
        <CheckboxGroup legend={label} options={WEEKDAYS.map((d, i) => ({ value: i + 1, label: d }))} value={value as number[]} onChange={(next) => onChange(next)} error={error} />
      );
    case 'list':
      return (
        <Field label={label} error={error} hint={spec.hint}>
          {(control) => <ListInput control={control} value={value as string[]} transform={spec.upper ? (s) => s.toUpperCase() : undefined} onChange={(items) => onChange(items)} />}
        </Field>
      );
    case 'numbers':
      return (
        <Field label={label} error={error} hint={spec.hint}>
          {(control) => <ListInput control={control} numeric value={value as number[]} onChange={(items) => onChange(items.map(Number))} />}
        </Field>
      );
    case 'number':
      return (
        <Field label={label} error={error} hint={spec.hint}>
          {(control) => <NumberInput control={control} value={value as number | undefined} min={spec.min} max={spec.max} onChange={(n) => onChange(n)} />}
        </Field>
      );
    case 'text':
      return (
        <Field label={label} error={error}>
          {(control) => <input {...control} value={(value as string) ?? ''} maxLength={200} onInput={(e) => onChange(e.currentTarget.value)} />}
        </Field>
      );
    case 'yes-no':
      return (
        <Field label={label} error={error}>
          {(control) => (
            <select {...control} value={value ? 'yes' : 'no'} onChange={(e) => onChange(e.currentTarget.value === 'yes')}>
              <option value="yes">Yes</option>
              <option value="no">No</option>
            </select>
          )}
        </Field>
      );
    case 'visit':
      return (
        <Field label={label} error={error}>
          {(control) => (
            <select {...control} value={value as string} onChange={(e) => onChange(e.currentTarget.value)}>
              <option value="first">First visit</option>
              <option value="repeat">Repeat visit</option>
            </select>
          )}
        </Field>
      );
    case 'hours': {
      const hours = (value as { from: number; to: number } | undefined) ?? { from: 9, to: 17 };
      return (
        <fieldset class="hours" aria-describedby={undefined}>
          <legend>{label}</legend>
          <div class="grid">
            <Field label="From hour" error={error}>
              {(control) => <NumberInput control={control} min={0} max={23} value={hours.from} onChange={(n) => onChange({ ...hours, from: n ?? 0 })} />}
            </Field>
            <Field label="To hour">
              {(control) => <NumberInput control={control} min={0} max={23} value={hours.to} onChange={(n) => onChange({ ...hours, to: n ?? 0 })} />}
            </Field>
          </div>
        </fieldset>
      );
    }
  }
}

function ActionEditor({ ruleName, path, action, error, onChange }: { ruleName: string; path: string; action: RuleAction; error: ApiError | null; onChange: (action: RuleAction) => void }) {
  const changeType = (type: RuleAction['type']) => {
    switch (type) {
      case 'redirect':
        return onChange({ type, url: '' });
      case 'block':
        return onChange({ type, status: 404 });
      case 'page':
        return onChange({ type, title: '', text: '' });
      default:
        return onChange({ type });
    }
  };
  return (
    <div class="action">
      <Field label={`Action of ${ruleName}`} error={error?.fieldError(`${path}.type`)}>
        {(control) => (
          <select {...control} value={action.type} onChange={(e) => changeType(e.currentTarget.value as RuleAction['type'])}>
            {ACTIONS.map((a) => (
              <option key={a.type} value={a.type}>
                {a.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {action.type === 'redirect' && (
        <Field label={`Redirect URL of ${ruleName}`} error={error?.fieldError(`${path}.url`)}>
          {(control) => <input {...control} type="url" required value={action.url} placeholder="https://" onInput={(e) => onChange({ ...action, url: e.currentTarget.value })} />}
        </Field>
      )}
      {action.type === 'block' && (
        <Field label={`Answer of ${ruleName}`} error={error?.fieldError(`${path}.status`)}>
          {(control) => (
            <select {...control} value={String(action.status)} onChange={(e) => onChange({ ...action, status: Number(e.currentTarget.value) as 404 | 410 })}>
              <option value="404">404: as if the link did not exist</option>
              <option value="410">410: removed for good</option>
            </select>
          )}
        </Field>
      )}
      {action.type === 'page' && (
        <>
          <Field label={`Page title of ${ruleName}`} error={error?.fieldError(`${path}.title`)}>
            {(control) => <input {...control} maxLength={140} value={action.title ?? ''} onInput={(e) => onChange({ ...action, title: e.currentTarget.value })} />}
          </Field>
          <Field label={`Page text of ${ruleName}`} error={error?.fieldError(`${path}.text`)}>
            {(control) => <textarea {...control} maxLength={600} value={action.text ?? ''} onInput={(e) => onChange({ ...action, text: e.currentTarget.value })} />}
          </Field>
          <div class="grid">
            <Field label={`Button label of ${ruleName}`} error={error?.fieldError(`${path}.button_label`)}>
              {(control) => <input {...control} maxLength={60} value={action.button_label ?? ''} onInput={(e) => onChange({ ...action, button_label: e.currentTarget.value })} />}
            </Field>
            <Field label={`Button URL of ${ruleName}`} error={error?.fieldError(`${path}.button_url`)}>
              {(control) => <input {...control} type="url" value={action.button_url ?? ''} onInput={(e) => onChange({ ...action, button_url: e.currentTarget.value })} />}
            </Field>
          </div>
        </>
      )}
    </div>
  );
}
