// Amounts are integer minor units of an ISO 4217 currency (cents, yen): shown and typed in major units.

/** Digits after the decimal point of a currency (2 for EUR, 0 for JPY), from the browser's currency data. */
export function currencyDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2; // not a currency code the browser knows: the API decides whether it is one
  }
}

export function formatMoney(minor: number, currency: string): string {
  const digits = currencyDigits(currency);
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(minor / 10 ** digits);
  } catch {
    return `${(minor / 10 ** digits).toFixed(digits)} ${currency}`;
  }
}

/** "19.99" in EUR is 1999; null when the text is not an amount with at most the currency's digits. */
export function parseMoney(text: string, currency: string): number | null {
  const digits = currencyDigits(currency);
  const match = /^\s*(\d+)(?:[.,](\d*))?\s*$/.exec(text);
  if (!match) return null;
  const fraction = match[2] ?? '';
  if (fraction.length > digits) return null;
  return Number(match[1]) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
}

/** The current month in UTC, `YYYY-MM`, as the API's `period`. */
export function currentPeriod(): string {
  return new Date().toISOString().slice(0, 7);
}
