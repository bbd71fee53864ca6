// Money as every part of Linkplane checks it: integer minor units of an ISO 4217 currency. One list of currencies
// (the runtime's own, `Intl.supportedValuesOf`) serves conversions, partner plans and payments, and processor events,
// so a code refused in one place is never recorded in another.

const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** The largest amount the ledger holds, in minor units (10^12: ten billion of a two-decimal currency). */
export const MAX_MINOR_UNITS = 1_000_000_000_000;

/** An ISO 4217 code, upper case as the list spells it (`USD`, `JPY`); `usd` is not one. */
export function isCurrencyCode(code: unknown): code is string {
  return typeof code === 'string' && CURRENCIES.has(code);
}

/** An amount in integer minor units, from 0 to MAX_MINOR_UNITS: never a float, a string, negative or null. */
export function isMinorUnits(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_MINOR_UNITS;
}
