// Reading one link of a service's JSON answer into our words. Services' answers are untyped JSON: every reader here
// takes `unknown` and gives the value or null (never throws), so one odd field makes one row an error, not the page a
// failure. Dates come in three shapes: ISO 8601 with `Z` or `+00:00`, Bitly's `+0000` offsets, and epoch milliseconds
// (Short.io); all three are read.
import type { ImportedLink } from '../source.ts';
import { linkOf } from './mapping.ts';
import type { Utm } from '../../links/link.schemas.ts';
import type { TargetingEntry } from '../../rules/rule.schemas.ts';

export type Row = Record<string, unknown>;

/** A country code as our targeting takes it (ISO 3166-1 alpha-2, uppercase). */
const COUNTRY = /^[A-Z]{2}$/;
/** Our targeting entry names at most this many countries. */
const COUNTRIES_PER_ENTRY = 50;

export function isRow(value: unknown): value is Row {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A non-empty string, else null. */
export function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/** An absolute http(s) URL, else null. */
export function httpUrl(value: unknown): string | null {
  const candidate = text(value);
  if (candidate === null || !URL.canParse(candidate)) return null;
  const { protocol } = new URL(candidate);
  return protocol === 'http:' || protocol === 'https:' ? candidate : null;
}

/** An ISO 8601 date (offsets as `+0000` too) or epoch milliseconds, else null. */
export function sourceDate(value: unknown): Date | null {
  let time = Number.NaN;
  if (typeof value === 'number') time = value;
  else if (typeof value === 'string' && /^\d{10,}$/.test(value)) time = Number(value);
  else if (typeof value === 'string') time = Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return Number.isFinite(time) ? new Date(time) : null;
}

/** A count (non-negative integer), else null. */
export function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** Tag names from a list of strings or of `{ name }` objects, in order, without blanks or repeats. */
export function tagNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const names = value.map((tag) => (isRow(tag) ? text(tag['name']) : text(tag))).filter((name): name is string => name !== null);
  return [...new Set(names)];
}

/** Our UTM parameters under their own names, for a service that uses the same ones (Dub). */
export const UTM_NAMES: Readonly<Record<keyof Utm, string>> = { utm_source: 'utm_source', utm_medium: 'utm_medium', utm_campaign: 'utm_campaign', utm_term: 'utm_term', utm_content: 'utm_content' };

/** UTM parameters a service keeps apart from the destination, read under the service's `names`; null when none. */
export function utmOf(fields: Row, names: Readonly<Record<keyof Utm, string>>): Utm | null {
  const utm: Utm = {};
  for (const [ours, theirs] of Object.entries(names) as Array<[keyof Utm, string]>) {
    const given = text(fields[theirs]);
    if (given !== null) utm[ours] = given;
  }
  return Object.keys(utm).length > 0 ? utm : null;
}

/**
 * Targeting entries from a country → destination map (Dub's `geo`): one entry per destination, naming its countries
 * (split in entries of 50, our bound). Countries that are not two-letter codes and destinations that are not http(s)
 * URLs are left out.
 */
export function countryTargeting(value: unknown): TargetingEntry[] {
  if (!isRow(value)) return [];
  const byUrl = new Map<string, string[]>();
  for (const [country, destination] of Object.entries(value)) {
    const url = httpUrl(destination);
    const code = country.toUpperCase();
    if (url === null || !COUNTRY.test(code)) continue;
    byUrl.set(url, [...(byUrl.get(url) ?? []), code]);
  }
  const entries: TargetingEntry[] = [];
  for (const [url, countries] of byUrl) {
    for (let at = 0; at < countries.length; at += COUNTRIES_PER_ENTRY) {
      entries.push({ match: { country: countries.slice(at, at + COUNTRIES_PER_ENTRY) }, url });
    }
  }
  return entries;
}

/** A link with the fields every source has, and nothing else yet; the source fills in what its service gives. */
export function importedLink(sourceId: string, url: string): ImportedLink {
  return linkOf(sourceId, url, {});
}

/** How a row error names a row the service sent without its id: by another name the row has, else by position. */
export function rowRef(index: number, ...names: unknown[]): string {
  return names.map(text).find((name) => name !== null) ?? `row ${index + 1} of the page`;
}

/** Why a row has no usable destination, for its row error. */
export function destinationProblem(value: unknown): string {
  return text(value) === null ? 'the link has no destination URL' : `the destination ${JSON.stringify(value)} is not an absolute http(s) URL`;
}
