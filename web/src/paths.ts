// Every dashboard URL lives under the base the build was made for (vite `base`, /dashboard/), and every signed-in
// page names the workspace or partner it shows: /dashboard/w/<workspace id>/links, /dashboard/p/<partner id>/partner.
// The address is the one source of the context in view, so Back, Forward, a bookmark or a second tab always show
// the page with the data it was opened with.
// (`?? '/dashboard/'`: the unit tests import this file outside vite.)
export const BASE = ((import.meta as { env?: { BASE_URL?: string } }).env?.BASE_URL ?? '/dashboard/').replace(/\/$/, '');

export type ContextKindLetter = 'w' | 'p';

/** The part of a context an address needs. */
export interface ContextRef {
  kind: 'workspace' | 'partner';
  id: string;
}

/** Pages without a context (no session needed). */
const PUBLIC = ['/sign-in', '/accept-invite'];

let current: ContextRef | null = null;

/** Set by session.ts whenever the context in view changes. */
export function setPathContext(context: ContextRef | null): void {
  current = context;
}

function isPublic(path: string): boolean {
  return PUBLIC.some((p) => path === p || path.startsWith(`${p}/`) || path.startsWith(`${p}?`));
}

/** The address of a page of `context`: `inContext(ws, '/links')` is `/dashboard/w/ws_1/links`. */
export function inContext(context: ContextRef, path: string): string {
  const rest = path.startsWith('/') ? path : `/${path}`;
  return `${BASE}/${context.kind === 'partner' ? 'p' : 'w'}/${encodeURIComponent(context.id)}${rest === '/' ? '' : rest}`;
}

/**
 * The address of a dashboard page: `to('/links')` is the links of the context in view
 * (`/dashboard/w/ws_1/links`); public pages (`/sign-in`) and addresses without a context in view stay as they are.
 */
export function to(path: string): string {
  const rest = path.startsWith('/') ? path : `/${path}`;
  if (current && !isPublic(rest)) return inContext(current, rest);
  return `${BASE}${rest}`;
}

export interface ContextAddress {
  kind: 'workspace' | 'partner';
  id: string;
  /** The page below the context, `/links/lnk_1`; `/` for the context's home. */
  rest: string;
}

/** Reads the context an address names, or null for an address without one (public pages, old bookmarks). */
export function contextOfPath(path: string): ContextAddress | null {
  const match = /^\/(w|p)\/([^/]+)(\/.*)?$/.exec(path.startsWith(BASE) ? path.slice(BASE.length) : path);
  if (!match) return null;
  let id: string;
  try {
    id = decodeURIComponent(match[2]!);
  } catch {
    return null;
  }
  return { kind: match[1] === 'p' ? 'partner' : 'workspace', id, rest: (match[3] ?? '/').replace(/(.)\/$/, '$1') };
}
