/** A moment (key use, domain activation) in the browser's own zone and language; `fallback` when there is none. */
export function localDateTime(iso: string | null | undefined, fallback = 'Never'): string {
  if (!iso) return fallback;
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
