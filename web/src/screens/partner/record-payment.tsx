import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { useAction } from '../../components/use-resource.ts';
import { parseMoney } from './money.ts';
import type { Client, Payment } from './partner.types.ts';

/** A payment a client made outside the processor (a bank transfer): it moves the subscription like a paid invoice. */
export function RecordPayment({ clients, onRecorded, onCancel }: { clients: Client[]; onRecorded: (p: Payment) => void; onCancel: () => void }) {
  const [clientId, setClientId] = useState(clients[0]?.id ?? '');
  const [amount, setAmount] = useState('');
  const [currency, setCurrency] = useState('EUR');
  const [fee, setFee] = useState('');
  const [reference, setReference] = useState('');
  const [paidOn, setPaidOn] = useState('');
  const [localErrors, setLocalErrors] = useState<{ amount?: string; fee?: string }>({});
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    const code = currency.trim().toUpperCase();
    const gross = parseMoney(amount, code);
    const processorFee = fee.trim() ? parseMoney(fee, code) : 0;
    const errors = { amount: gross === null || gross < 1 ? 'An amount such as 49.00.' : undefined, fee: processorFee === null ? 'An amount such as 1.75, or nothing.' : undefined };
    setLocalErrors(errors);
    if (errors.amount || errors.fee) return;
    const payment = await action.run(() =>
      api.post<Payment>('/v1/partner/payments', {
        client_id: clientId,
        amount: gross,
        currency: code,
        processor_fee: processorFee || undefined,
        reference: reference.trim() || undefined,
        paid_at: paidAt(paidOn),
      }),
    );
    if (payment) onRecorded(payment);
  };

  return (
    <article>
      <h2>Record a payment</h2>
      <form onSubmit={(e) => void submit(e)} aria-label="Record a payment">
        {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The payment was not recorded" />}
        <Field label="Client" error={failure?.fieldError('client_id')}>
          {(control) => (
            <select {...control} name="client_id" required value={clientId} onChange={(e) => setClientId(e.currentTarget.value)}>
              {clients.length === 0 && <option value="">No clients yet</option>}
              {clients.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <div class="grid">
          <Field label="Amount paid" error={localErrors.amount ?? failure?.fieldError('amount')}>
            {(control) => <input {...control} name="amount" inputMode="decimal" required placeholder="49.00" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />}
          </Field>
          <Field label="Currency" error={failure?.fieldError('currency')}>
            {(control) => <input {...control} name="currency" required maxLength={3} value={currency} onInput={(e) => setCurrency(e.currentTarget.value.toUpperCase())} />}
          </Field>
          <Field label="Collection fee (optional)" error={localErrors.fee ?? failure?.fieldError('processor_fee')} hint="What collecting it cost you.">
            {(control) => <input {...control} name="processor_fee" inputMode="decimal" value={fee} onInput={(e) => setFee(e.currentTarget.value)} />}
          </Field>
        </div>
        <Field label="Paid on (optional)" error={failure?.fieldError('paid_at')} hint="The day the money arrived (UTC); today when left empty. It decides the month the payment counts in.">
          {(control) => <input {...control} type="date" name="paid_on" max={today()} value={paidOn} onInput={(e) => setPaidOn(e.currentTarget.value)} />}
        </Field>
        <Field label="Reference (optional)" error={failure?.fieldError('reference')} hint="Your own reference, such as the bank transfer id; unique.">
          {(control) => <input {...control} name="reference" maxLength={255} value={reference} onInput={(e) => setReference(e.currentTarget.value)} />}
        </Field>
        <div class="form-actions">
          <button type="submit" disabled={action.busy || clients.length === 0} aria-busy={action.busy ? 'true' : undefined}>
            Record payment
          </button>
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </article>
  );
}

function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/** A past day as noon UTC (inside that day and month in UTC); today or nothing is "now", which is never in the future. */
function paidAt(day: string): string | undefined {
  if (!day || day >= today()) return undefined;
  return `${day}T12:00:00.000Z`;
}
