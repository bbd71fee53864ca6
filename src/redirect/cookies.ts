// The redirect's own cookies, read and written without a general-purpose parser: only `lp_` names matter and the
// Cookie header is on every request.

/** The `lp_…` cookies of a Cookie header; others are skipped without being decoded. */
export function readCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  let start = 0;
  while (start < header.length) {
    let end = header.indexOf(';', start);
    if (end === -1) end = header.length;
    while (header.charCodeAt(start) === 32) start++;
    if (header.startsWith('lp_', start)) {
      const eq = header.indexOf('=', start);
      if (eq !== -1 && eq < end) cookies.set(header.slice(start, eq), header.slice(eq + 1, end).trim());
    }
    start = end + 1;
  }
  return cookies;
}

export interface CookieOptions {
  maxAgeSeconds: number;
  path?: string;
  secure: boolean;
}

/** Every cookie we set is HttpOnly and SameSite=Lax: read by us only, and sent on the top-level navigation. */
export function setCookie(name: string, value: string, options: CookieOptions): string {
  return `${name}=${value}; Max-Age=${options.maxAgeSeconds}; Path=${options.path ?? '/'}; HttpOnly; SameSite=Lax${options.secure ? '; Secure' : ''}`;
}
