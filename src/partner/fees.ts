// Money arithmetic of the ledger: integer minor units only, through BigInt where a product could pass 2^53.
// Rules (published in the OpenAPI document and docs/partners.md):
// - processor fee: the processor's own figure when the event carries it (an expanded balance transaction), else the
//   partner's fee schedule, `percent_bps` of the gross rounded half up plus `fixed`; never more than the gross;
// - platform fee: `platform_fee_bps` of the gross, rounded down, never more than what the processor fee leaves;
// - partner share: the rest, so gross = processor fee + platform fee + partner share holds for every payment;
// - a refund returns the platform fee pro rata (rounded down); the processor keeps its fee (as Stripe does), so the
//   partner's share bears the rest of the refunded amount.

import type { FeeSchedule } from '../tenancy/partner.store.ts';

export interface Split {
  gross: number;
  processor_fee: number;
  platform_fee: number;
  partner_share: number;
}

function mulDiv(a: number, b: number, divisor: number, roundHalfUp: boolean): number {
  const product = BigInt(a) * BigInt(b) + (roundHalfUp ? BigInt(Math.floor(divisor / 2)) : 0n);
  return Number(product / BigInt(divisor));
}

export function estimateProcessorFee(gross: number, schedule: FeeSchedule): number {
  if (gross <= 0) return 0;
  return Math.min(gross, mulDiv(gross, schedule.percent_bps, 10_000, true) + schedule.fixed);
}

export function splitPayment(gross: number, processorFee: number, platformFeeBps: number): Split {
  const processor_fee = Math.max(0, Math.min(gross, processorFee));
  const platform_fee = Math.min(gross - processor_fee, mulDiv(gross, platformFeeBps, 10_000, false));
  return { gross, processor_fee, platform_fee, partner_share: gross - processor_fee - platform_fee };
}

export interface RefundSplit {
  amount: number;
  platform_fee_returned: number;
  partner_share_reversed: number;
}

/** How `amount` (more of the payment refunded) is taken back; `refundedBefore`: what earlier refunds took. */
export function splitRefund(payment: Split, refundedBefore: number, amount: number): RefundSplit {
  if (payment.gross === 0) return { amount, platform_fee_returned: 0, partner_share_reversed: amount };
  // Pro rata on the cumulative refunded amount, so many small refunds return what one large one would.
  const returnedBefore = mulDiv(payment.platform_fee, refundedBefore, payment.gross, false);
  const returnedAfter = mulDiv(payment.platform_fee, refundedBefore + amount, payment.gross, false);
  const platform_fee_returned = returnedAfter - returnedBefore;
  return { amount, platform_fee_returned, partner_share_reversed: amount - platform_fee_returned };
}

const PERIOD = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** `YYYY-MM` → its UTC start and end; null when malformed. */
export function periodBounds(period: string): { start: Date; end: Date } | null {
  const match = PERIOD.exec(period);
  if (!match) return null;
  const year = Number(match[1]);
  const month = Number(match[2]) - 1;
  return { start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) };
}

export function periodKey(date: Date): string {
  return date.toISOString().slice(0, 7);
}

export function nextPeriod(period: string): string {
  return periodKey(periodBounds(period)!.end);
}
