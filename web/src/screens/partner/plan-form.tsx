import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { useAction } from '../../components/use-resource.ts';
import { capabilityName } from '../../components/capabilities.ts';
import { currencyDigits, parseMoney } from './money.ts';
import type { Limits, PartnerProfile, Plan } from './partner.types.ts';

const LIMIT_FIELDS: Array<{ key: keyof Limits; label: string }> = [
  { key: 'links', label: 'Links' },
  { key: 'domains', label: 'Custom domains' },
  { key: 'tracked_clicks_per_month', label: 'Tracked clicks per month' },
  { key: 'rate_limit_per_minute', label: 'API requests per minute per key' },
];

const number = new Intl.NumberFormat();

/**
 * A new plan, or a change to one (`plan` given: PATCH, which applies to its clients at once): its price (typed in
 * major units), its limits (at most the platform plan's) and its capabilities.
 */
export function PlanForm({ ceiling, plan, onCreated, onCancel }: { ceiling: PartnerProfile['platform_plan']; plan?: Plan; onCreated: (p: Plan) => void; onCancel: () => void }) {
  const [name, setName] = useState(plan?.name ?? '');
  const [amount, setAmount] = useState(plan ? (plan.price.amount / 10 ** currencyDigits(plan.price.currency)).toFixed(currencyDigits(plan.price.currency)) : '');
  const [currency, setCurrency] = useState(plan?.price.currency ?? 'EUR');
  const [interval, setBilling] = useState<'month' | 'year'>(plan?.price.interval ?? 'month');
  const [limits, setLimits] = useState<Record<keyof Limits, string>>({
    links: String(plan?.limits.links ?? Math.min(1000, ceiling.limits.links)),
    domains: String(plan?.limits.domains ?? Math.min(1, ceiling.limits.domains)),
    tracked_clicks_per_month: String(plan?.limits.tracked_clicks_per_month ?? Math.min(10_000, ceiling.limits.tracked_clicks_per_month)),
    rate_limit_per_minute: String(plan?.limits.rate_limit_per_minute ?? Math.min(600, ceiling.limits.rate_limit_per_minute)),
  });
  const [capabilities, setCapabilities] = useState<string[]>(plan?.capabilities ?? []);
  const [amountError, setAmountError] = useState<string | null>(null);
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    const code = currency.trim().toUpperCase();
    const minor = parseMoney(amount, code);
    if (minor === null) {
      const digits = currencyDigits(code);
      setAmountError(digits === 0 ? 'A whole amount, such as 19.' : `An amount with at most ${digits} decimals, such as 19.99.`);
      return;
    }
    setAmountError(null);
    const body = {
      name: name.trim(),
      price: { amount: minor, currency: code, interval },
      limits: Object.fromEntries(LIMIT_FIELDS.map((f) => [f.key, Number(limits[f.key])])),
      capabilities,
    };
    const created = await action.run(() => (plan ? api.patch<Plan>(`/v1/partner/plans/${plan.id}`, body) : api.post<Plan>('/v1/partner/plans', body)));
    if (created) onCreated(created);
  };

  return (
    <article>
      <h2>{plan ? `Change ${plan.name}` : 'New plan'}</h2>
      {plan && plan.clients > 0 && <p>The new limits and capabilities apply to its {number.format(plan.clients)} client(s) at once.</p>}
      <form onSubmit={(e) => void submit(e)} aria-label={plan ? `Change ${plan.name}` : 'New plan'}>
        {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title={plan ? 'The plan was not saved' : 'The plan was not created'} />}
        <Field label="Plan name" error={failure?.fieldError('name')}>
          {(control) => <input {...control} name="name" required maxLength={120} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <div class="grid">
          <Field label="Price" error={amountError ?? failure?.fieldError('price.amount')}>
            {(control) => <input {...control} name="amount" inputMode="decimal" required placeholder="19.99" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />}
          </Field>
          <Field label="Currency" error={failure?.fieldError('price.currency')} hint="ISO 4217 code: EUR, USD, JPY">
            {(control) => <input {...control} name="currency" required maxLength={3} value={currency} onInput={(e) => setCurrency(e.currentTarget.value.toUpperCase())} />}
          </Field>
          <Field label="Billed every" error={failure?.fieldError('price.interval')}>
            {(control) => (
              <select {...control} name="interval" value={interval} onChange={(e) => setBilling(e.currentTarget.value as 'month' | 'year')}>
                <option value="month">Month</option>
                <option value="year">Year</option>
              </select>
            )}
          </Field>
        </div>
        <fieldset>
          <legend>Limits (at most your platform plan's)</legend>
          <div class="grid">
            {LIMIT_FIELDS.map((f) => (
              <Field key={f.key} label={f.label} error={failure?.fieldError(`limits.${f.key}`)} hint={`At most ${number.format(ceiling.limits[f.key])}`}>
                {(control) => (
                  <input
                    {...control}
                    type="number"
                    min={f.key === 'rate_limit_per_minute' ? 1 : 0}
                    max={ceiling.limits[f.key]}
                    required
                    value={limits[f.key]}
                    onInput={(e) => setLimits({ ...limits, [f.key]: e.currentTarget.value })}
                  />
                )}
              </Field>
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend>Capabilities</legend>
          {ceiling.capabilities.map((c) => (
            <label key={c}>
              <input
                type="checkbox"
                name="capabilities"
                value={c}
                checked={capabilities.includes(c)}
                onChange={(e) => setCapabilities(e.currentTarget.checked ? [...capabilities, c] : capabilities.filter((x) => x !== c))}
              />
              {capabilityName(c)}
            </label>
          ))}
          {failure?.fieldError('capabilities', true) && (
            <small class="field-error" role="alert">
              {failure.fieldError('capabilities', true)}
            </small>
          )}
        </fieldset>
        <div class="form-actions">
          <button type="submit" disabled={action.busy} aria-busy={action.busy ? 'true' : undefined}>
            {plan ? 'Save plan' : 'Create plan'}
          </button>
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </article>
  );
}
