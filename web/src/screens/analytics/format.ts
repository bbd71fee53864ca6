// Numbers and times as the analytics screen shows them. Timestamps arrive with the zone's own offset
// (`2026-11-24T09:00:00-05:00`), so their wall time in that zone is read straight from the text.

const integer = new Intl.NumberFormat('en');

export function count(n: number): string {
  return integer.format(n);
}

export function percent(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}

/** Revenue per currency in minor units: `€12.50, $3.00`; an em dash when none. */
export function money(revenue: Record<string, number>): string {
  const entries = Object.entries(revenue);
  if (entries.length === 0) return '—';
  return entries
    .map(([currency, minor]) => {
      const format = new Intl.NumberFormat('en', { style: 'currency', currency });
      const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
      return format.format(minor / 10 ** digits);
    })
    .join(', ');
}

/** A change against the previous period: `+25.0 %`, `−10.0 %`, `new` from zero, `no change`. */
export function change(current: number, previous: number): { text: string; direction: 'up' | 'down' | 'flat' } {
  if (current === previous) return { text: 'no change', direction: 'flat' };
  if (previous === 0) return { text: 'new', direction: 'up' };
  const ratio = (current - previous) / previous;
  return { text: `${ratio > 0 ? '+' : '−'}${Math.abs(ratio * 100).toFixed(1)} %`, direction: ratio > 0 ? 'up' : 'down' };
}

/** The wall date and time of an ISO timestamp with offset, as the answer's zone reads it. */
export function wallTime(iso: string, granularity: 'hour' | 'day' | 'week' | 'month' | 'minute' = 'minute'): string {
  const date = iso.slice(0, 10);
  if (granularity === 'month') return date.slice(0, 7);
  if (granularity === 'day' || granularity === 'week') return date;
  return `${date} ${iso.slice(11, 16)}`;
}

/** A range for a sentence: `2026-11-17 00:00 – 2026-11-24 00:00 (Europe/Paris)`. */
export function rangeText(range: { start: string; end: string; timezone: string }): string {
  return `${wallTime(range.start)} – ${wallTime(range.end)} (${range.timezone})`;
}
