// Small pieces every source's mapping needs: an ImportedLink with what the source cannot give left empty, and the
// checks on the values services hand back (a destination must be an absolute http(s) URL; dates come in each
// service's own format).
import type { ImportedLink } from '../source.ts';

/** A link with only its id and destination; the source spreads what it knows over it. */
export function linkOf(sourceId: string, url: string, known: Partial<Omit<ImportedLink, 'sourceId' | 'url'>>): ImportedLink {
  return {
    sourceId,
    url,
    domain: null,
    slug: null,
    title: null,
    tags: [],
    createdAt: null,
    expiresAt: null,
    expiredUrl: null,
    password: null,
    utm: null,
    targeting: [],
    ios: null,
    android: null,
    clicksTotal: null,
    ...known,
  };
}

/** True for an absolute http(s) URL, the only kind of destination a link can have here. */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 8192) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** An ISO 8601 date-time with its offset; null when absent or unreadable. */
export function isoDateOf(value: unknown): Date | null {
  if (typeof value !== 'string' || value === '') return null;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? null : at;
}

/**
 * A `YYYY-MM-DD hh:mm:ss` date-time that a service stores in UTC without saying so (YOURLS's timestamp, Kutt's dates
 * on SQLite), or an ISO 8601 one; null when absent or unreadable.
 */
export function sqlUtcDateOf(value: unknown): Date | null {
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value)) return isoDateOf(`${value.replace(' ', 'T')}Z`);
  return isoDateOf(value);
}

/** A count a service gives as a number, or as a numeric string (PHP before 8.1 returned database integers as strings). */
export function countOf(value: unknown): number | null {
  const count = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof count === 'number' && Number.isSafeInteger(count) && count >= 0 ? count : null;
}

/** Lower-case host name of a URL, or null. */
export function hostnameOf(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  try {
    return new URL(url).hostname.toLowerCase() || null;
  } catch {
    return null;
  }
}

/** A string, or null when absent or blank. */
export function textOf(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/** Percent-decoding that keeps the text as it is when it is not valid percent-encoding. */
export function decodePath(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
