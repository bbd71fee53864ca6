/** Addresses typed one per line or separated by commas or spaces, without repeats. */
export function parseEntries(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).map((entry) => entry.trim()).filter(Boolean))];
}
