import { useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { Pager, useCursorList } from '../../components/pager.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction } from '../../components/use-resource.ts';
import { formatMoney } from './money.ts';
import { PartnerNav } from './partner-nav.tsx';
import { PeriodPicker } from './period-picker.tsx';
import type { Payout } from './partner.types.ts';

/** Last month in UTC: payouts are computed once a month has closed. */
function lastPeriod(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
}

/** Payouts of a closed month (one per currency): what the partner is owed, and marking one paid with its transfer reference. */
export default function PayoutsScreen() {
  const [period, setPeriod] = useState(lastPeriod());
  const payouts = useCursorList<Payout>('/v1/partner/payouts', { period }, 50);
  const [paying, setPaying] = useState<Payout | null>(null);

  return (
    <Page title="Payouts">
      <PartnerNav />
      <p>A payout is computed after its month closes (the first day of the next month, UTC): your shares of the month's payments, minus your share of refunds.</p>
      <PeriodPicker value={period} onChange={setPeriod} />
      <ErrorBanner error={payouts.error} title="The payouts could not be loaded" />
      {payouts.loading && payouts.items.length === 0 && <p aria-busy="true">Loading…</p>}
      {!payouts.loading && !payouts.error && payouts.items.length === 0 && <p>No payouts for {period}.</p>}
      {payouts.items.length > 0 && (
        <DataTable
          caption={`Payouts for ${period}`}
          rows={payouts.items}
          rowKey={(p) => p.id}
          columns={[
            { label: 'Currency', render: (p) => p.currency },
            { label: 'Payments', numeric: true, render: (p) => p.payments },
            { label: 'Gross', numeric: true, render: (p) => formatMoney(p.gross, p.currency) },
            { label: 'Fees', numeric: true, render: (p) => formatMoney(p.processor_fees + p.platform_fees, p.currency) },
            { label: 'Refunds', numeric: true, render: (p) => formatMoney(p.refunds, p.currency) },
            { label: 'Amount', numeric: true, render: (p) => <strong>{formatMoney(p.amount, p.currency)}</strong> },
            { label: 'Status', render: (p) => (p.status === 'paid' ? `Paid ${p.paid_at ? new Date(p.paid_at).toLocaleDateString() : ''} (${p.reference ?? ''})` : 'Pending') },
            {
              label: 'Actions',
              render: (p) =>
                p.status === 'pending' ? (
                  <button type="button" class="secondary outline small" onClick={() => setPaying(p)} aria-label={`Mark the ${p.currency} payout paid`}>
                    Mark paid
                  </button>
                ) : null,
            },
          ]}
        />
      )}
      <Pager {...payouts.pager} />
      {paying && <PayDialog payout={paying} onClose={() => setPaying(null)} onPaid={payouts.reload} />}
    </Page>
  );
}

function PayDialog({ payout, onClose, onPaid }: { payout: Payout; onClose: () => void; onPaid: () => void }) {
  const [reference, setReference] = useState('');
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;
  const pay = async () => {
    const done = await action.run(() => api.post<Payout>(`/v1/partner/payouts/${payout.id}/pay`, { reference: reference.trim() }));
    if (!done) return;
    toast(`The ${payout.currency} payout is marked paid.`);
    onPaid();
    onClose();
  };
  return (
    <ConfirmDialog open title={`Mark the ${payout.currency} payout paid`} confirmLabel="Mark paid" busy={action.busy} onConfirm={() => void pay()} onCancel={onClose}>
      <p>{formatMoney(payout.amount, payout.currency)} for {payout.period}.</p>
      {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The payout was not marked paid" />}
      <Field label="Transfer reference" error={failure?.fieldError('reference')}>
        {(control) => <input {...control} required maxLength={255} value={reference} onInput={(e) => setReference(e.currentTarget.value)} />}
      </Field>
    </ConfirmDialog>
  );
}
