import { useState } from 'preact/hooks';
import { ApiError, api, fetchAll } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { Pager, useCursorList } from '../../components/pager.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';
import { useCurrentContext } from '../../session.ts';
import { currencyDigits, currentPeriod, formatMoney, parseMoney } from './money.ts';
import { PartnerNav } from './partner-nav.tsx';
import { PeriodPicker } from './period-picker.tsx';
import { RecordPayment } from './record-payment.tsx';
import type { Client, Payment } from './partner.types.ts';

const STATUS: Record<Payment['status'], string> = { succeeded: 'Paid', partially_refunded: 'Partly refunded', refunded: 'Refunded' };

/** Client payments of a month, with the fee breakdown; record one made outside the processor, refund one. */
export default function PaymentsScreen() {
  const context = useCurrentContext();
  const [period, setPeriod] = useState(currentPeriod());
  const payments = useCursorList<Payment>('/v1/partner/payments', { period }, 50);
  const clients = useResource(() => fetchAll<Client>('/v1/partner/clients'), context.id);
  const [recording, setRecording] = useState(false);
  const [refunding, setRefunding] = useState<Payment | null>(null);
  const clientName = (id: string) => clients.data?.find((c) => c.id === id)?.name ?? id;

  return (
    <Page
      title="Payments"
      actions={
        !recording && (
          <button type="button" onClick={() => setRecording(true)}>
            Record a payment
          </button>
        )
      }
    >
      <PartnerNav />
      {recording && (
        <RecordPayment
          clients={clients.data ?? []}
          onCancel={() => setRecording(false)}
          onRecorded={(payment) => {
            setRecording(false);
            toast(`Payment of ${formatMoney(payment.gross, payment.currency)} recorded.`);
            setPeriod(payment.period);
            payments.reload();
          }}
        />
      )}
      <PeriodPicker value={period} onChange={setPeriod} />
      <ErrorBanner error={payments.error} title="The payments could not be loaded" />
      {payments.loading && payments.items.length === 0 && <p aria-busy="true">Loading…</p>}
      {!payments.loading && !payments.error && payments.items.length === 0 && <p>No payments in {period}.</p>}
      {payments.items.length > 0 && (
        <DataTable
          caption={`Payments in ${period}`}
          rows={payments.items}
          rowKey={(p) => p.id}
          columns={[
            { label: 'Paid', render: (p) => new Date(p.paid_at).toLocaleString() },
            { label: 'Client', render: (p) => clientName(p.client_id) },
            { label: 'Gross', numeric: true, render: (p) => formatMoney(p.gross, p.currency) },
            { label: 'Processor fee', numeric: true, render: (p) => formatMoney(p.processor_fee, p.currency) },
            { label: 'Platform fee', numeric: true, render: (p) => formatMoney(p.platform_fee, p.currency) },
            { label: 'Your share', numeric: true, render: (p) => formatMoney(p.partner_share, p.currency) },
            { label: 'Refunded', numeric: true, render: (p) => formatMoney(p.refunded, p.currency) },
            { label: 'Status', render: (p) => `${STATUS[p.status]} · ${p.source === 'manual' ? 'recorded by hand' : 'Stripe'}` },
            {
              label: 'Actions',
              render: (p) =>
                p.refunded < p.gross ? (
                  <button type="button" class="secondary outline small" onClick={() => setRefunding(p)} aria-label={`Refund the payment of ${clientName(p.client_id)} of ${formatMoney(p.gross, p.currency)}`}>
                    Refund
                  </button>
                ) : null,
            },
          ]}
        />
      )}
      <Pager {...payments.pager} />
      {refunding && <RefundDialog payment={refunding} onClose={() => setRefunding(null)} onRefunded={payments.reload} />}
    </Page>
  );
}

function RefundDialog({ payment, onClose, onRefunded }: { payment: Payment; onClose: () => void; onRefunded: () => void }) {
  const left = payment.gross - payment.refunded;
  const [amount, setAmount] = useState(formatPlain(left, payment.currency));
  const [amountError, setAmountError] = useState<string | null>(null);
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;

  const refund = async () => {
    const minor = parseMoney(amount, payment.currency);
    if (minor === null || minor < 1 || minor > left) {
      setAmountError(`An amount from the smallest unit up to ${formatMoney(left, payment.currency)}.`);
      return;
    }
    setAmountError(null);
    const done = await action.run(() => api.post(`/v1/partner/payments/${payment.id}/refunds`, { amount: minor }));
    if (!done) return;
    toast(`Refunded ${formatMoney(minor, payment.currency)}.`);
    onRefunded();
    onClose();
  };

  return (
    <ConfirmDialog open title="Refund a payment" confirmLabel="Record refund" danger busy={action.busy} onConfirm={() => void refund()} onCancel={onClose}>
      <p>
        Up to {formatMoney(left, payment.currency)} can still be refunded. The platform fee is returned pro rata; the rest comes from your share.
      </p>
      {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The refund was not recorded" />}
      <Field label={`Amount to refund (${payment.currency})`} error={amountError ?? failure?.fieldError('amount')}>
        {(control) => <input {...control} inputMode="decimal" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />}
      </Field>
    </ConfirmDialog>
  );
}

/** Minor units as the plain decimal a person types back ("12.50"). */
function formatPlain(minor: number, currency: string): string {
  const digits = currencyDigits(currency);
  return (minor / 10 ** digits).toFixed(digits);
}
