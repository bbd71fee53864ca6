import { createHash, randomBytes } from 'node:crypto';

/**
 * What keeps the redirect's own pages inert: a Content-Security-Policy that allows only the page's own nonce'd
 * style (and script, where one is needed), no framing, no base or form retargeting, no sniffing, no referrer, no
 * caching; plus the escaping every interpolated string goes through.
 */

/** A fresh nonce for one response: 128 random bits. */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

export interface CspOptions {
  /** Allows `<style nonce>` (and `<script nonce>` when `script`). */
  nonce?: string;
  /** `'sha256-…'` sources for fixed inline styles of pages whose bytes must not vary (the 404 page). */
  styleHashes?: readonly string[];
  /** The page runs its one nonce'd inline script; without it no script runs at all. */
  script?: boolean;
  /** The page posts a form to its own origin; without it no form may be submitted. */
  form?: boolean;
}

/**
 * The policy: `default-src 'none'` denies everything not named here (images, fonts, connections, frames, workers).
 * Trusted Types are required with no policy allowed, so no string can ever reach a DOM script sink.
 */
export function contentSecurityPolicy(options: CspOptions): string {
  const { nonce, styleHashes = [], script = false, form = false } = options;
  if (script && nonce === undefined) throw new TypeError('a page with a script needs a nonce');
  const styles = [...(nonce === undefined ? [] : [`'nonce-${nonce}'`]), ...styleHashes.map((h) => `'${h}'`)];
  return [
    "default-src 'none'",
    `style-src ${styles.length === 0 ? "'none'" : styles.join(' ')}`,
    `script-src ${script ? `'nonce-${nonce}'` : "'none'"}`,
    "img-src 'none'",
    `form-action ${form ? "'self'" : "'none'"}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ].join('; ');
}

/** Every header a page of the redirect carries, besides its status. */
export function securityHeaders(options: CspOptions): Record<string, string> {
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': contentSecurityPolicy(options),
    'X-Content-Type-Options': 'nosniff',
    // The short link (and, on a warn page, the fact that a visitor was warned) never reaches the destination.
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'X-Frame-Options': 'DENY',
  };
}

/** The CSP source for a fixed inline style: `sha256-<base64>` of its exact text. */
export function styleHash(css: string): string {
  return `sha256-${createHash('sha256').update(css, 'utf8').digest('base64')}`;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for element content and quoted attribute values alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Schemes that run code or read local data when navigated to; a link to one is replaced by a harmless page. */
const UNSAFE_SCHEMES = new Set(['javascript:', 'vbscript:', 'data:', 'file:', 'blob:', 'filesystem:']);

/**
 * A URL fit for an `href` or a navigation: absolute URLs with a code-running scheme become `about:blank`;
 * everything else (http(s), app schemes such as `myapp://`, same-origin paths) passes unchanged. CSP would block a
 * `javascript:` link anyway; this keeps such a link from ever being rendered.
 */
export function safeUrl(url: string): string {
  // What a browser does before parsing: control characters and spaces around the URL, tabs and newlines within.
  // eslint-disable-next-line no-control-regex
  const cleaned = url.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(cleaned)?.[1];
  return scheme !== undefined && UNSAFE_SCHEMES.has(`${scheme.toLowerCase()}:`) ? 'about:blank' : url;
}
