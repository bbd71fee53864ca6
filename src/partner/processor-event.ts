// The one validation of processor events (Stripe's webhook format), run on every event whose signature verified and
// before anything reads it: the envelope (an object with an id, a type, a `created` time and `data.object`), and for
// each type used, its money (integer minor units from 0 to MAX_MINOR_UNITS, an ISO 4217 currency from the list
// conversions and plans use) and the fields the type is applied by. An event that fails is acknowledged as ignored
// (the processor must not retry it), logged with its reason and counted; it changes nothing.
import { isCurrencyCode, isMinorUnits } from '../platform/money.ts';

export type StripeObject = Record<string, unknown>;

/** A verified event that passed the checks: what the billing service applies. */
export interface ProcessorEvent {
  id: string;
  type: string;
  created: number;
  object: StripeObject;
}

/** Why an event was refused; `kind` is the metric label (a closed set), `reason` the message logged and answered. */
export type RefusalKind = 'envelope' | 'amount' | 'currency' | 'field';
export type CheckedEvent = { ok: true; event: ProcessorEvent } | { ok: false; kind: RefusalKind; reason: string };

const MAX_ID_LENGTH = 255;

function isObject(value: unknown): value is StripeObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refuse(kind: RefusalKind, reason: string): CheckedEvent {
  return { ok: false, kind, reason };
}

/** Money fields the type is applied by: required ones must be there; optional ones, when present, must be money. */
interface MoneyRule {
  required: string[];
  optional: string[];
  currency: 'required' | 'optional';
}

const INVOICE_PAID: MoneyRule = { required: ['amount_paid'], optional: ['amount_due'], currency: 'required' };
const MONEY: Record<string, MoneyRule> = {
  'invoice.paid': INVOICE_PAID,
  'invoice.payment_succeeded': INVOICE_PAID,
  'invoice.payment_failed': { required: [], optional: ['amount_due', 'amount_paid'], currency: 'optional' },
  'charge.refunded': { required: ['amount_refunded'], optional: ['amount'], currency: 'required' },
};

function checkMoney(type: string, object: StripeObject): CheckedEvent | null {
  const rule = MONEY[type];
  if (!rule) return null;
  for (const field of rule.required) {
    if (!isMinorUnits(object[field])) return refuse('amount', `${type}: ${field} is not an integer amount of minor units from 0 to 10^12`);
  }
  for (const field of rule.optional) {
    if (object[field] !== undefined && object[field] !== null && !isMinorUnits(object[field])) {
      return refuse('amount', `${type}: ${field} is not an integer amount of minor units from 0 to 10^12`);
    }
  }
  const currency = object.currency;
  if (currency === undefined || currency === null) {
    if (rule.currency === 'required') return refuse('currency', `${type}: no currency`);
  } else if (typeof currency !== 'string' || !isCurrencyCode(currency.toUpperCase())) {
    return refuse('currency', `${type}: currency ${JSON.stringify(currency).slice(0, 20)} is not an ISO 4217 code`);
  }
  return null;
}

function checkFields(type: string, object: StripeObject): CheckedEvent | null {
  if (type === 'invoice.paid' || type === 'invoice.payment_succeeded') {
    // The processor's own fee, when the charge is expanded down to its balance transaction.
    const charge = object.charge;
    if (isObject(charge) && isObject(charge.balance_transaction)) {
      const fee = charge.balance_transaction.fee;
      if (fee !== undefined && fee !== null && !(isMinorUnits(fee) && fee <= (object.amount_paid as number))) {
        return refuse('amount', `${type}: charge.balance_transaction.fee is not an integer amount of minor units within amount_paid`);
      }
    }
    const paidAt = isObject(object.status_transitions) ? object.status_transitions.paid_at : undefined;
    if (paidAt !== undefined && paidAt !== null && !(typeof paidAt === 'number' && Number.isSafeInteger(paidAt) && paidAt >= 0)) {
      return refuse('field', `${type}: status_transitions.paid_at is not a time in seconds`);
    }
  }
  if (type === 'charge.refunded' && isMinorUnits(object.amount) && (object.amount_refunded as number) > object.amount) {
    return refuse('amount', `${type}: amount_refunded exceeds amount`);
  }
  if (type === 'customer.subscription.updated' && typeof object.status !== 'string') {
    return refuse('field', `${type}: status is not a string`);
  }
  return null;
}

/** Checks a verified, parsed event body; `ok` events are safe to apply. */
export function checkStripeEvent(body: unknown): CheckedEvent {
  if (!isObject(body)) return refuse('envelope', `the body is ${Array.isArray(body) ? 'an array' : body === null ? 'null' : `a ${typeof body}`}, not an event object`);
  const { id, type, created, data } = body;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) return refuse('envelope', 'the event has no id');
  if (typeof type !== 'string' || type.length === 0 || type.length > MAX_ID_LENGTH) return refuse('envelope', 'the event has no type');
  if (typeof created !== 'number' || !Number.isSafeInteger(created) || created < 0) return refuse('envelope', 'the event has no created time in seconds');
  if (!isObject(data) || !isObject(data.object)) return refuse('envelope', 'the event has no data.object');
  const object = data.object;
  const problem = checkMoney(type, object) ?? checkFields(type, object);
  return problem ?? { ok: true, event: { id, type, created, object } };
}
