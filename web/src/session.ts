// The signed-in person and the workspace or partner in view. Screens read it with useSession(); every /v1
// call carries the context chosen here (Linkplane-Context) and the session's CSRF token.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, setCredentials, setUnauthorizedHandler } from './api.ts';
import type { ContextKind } from './context-choice.ts';
import { pickContext, type Membership } from './context-choice.ts';
import { setPathContext } from './paths.ts';

export type { ContextKind, Membership } from './context-choice.ts';

export interface Session {
  user: { id: string; email: string; name: string | null };
  memberships: Membership[];
  csrf_token: string;
}

export interface SessionState {
  /** undefined while the first /auth/session answer is awaited; null when signed out. */
  session: Session | null | undefined;
  context: Membership | null;
}

const CONTEXT_KEY = 'linkplane.context';

let state: SessionState = { session: undefined, context: null };
const listeners = new Set<(s: SessionState) => void>();

function publish(next: SessionState): void {
  state = next;
  setPathContext(next.context);
  setCredentials({ csrfToken: next.session?.csrf_token ?? null, context: next.context?.id ?? null });
  for (const listener of listeners) listener(state);
}

function rememberedContext(): string | null {
  try {
    return localStorage.getItem(CONTEXT_KEY);
  } catch {
    return null; // storage disabled: the first membership is used
  }
}


/** Adopts a session (after sign-in, invite acceptance or the start-up check). */
export function setSession(session: Session | null): void {
  publish({ session, context: session ? pickContext(session.memberships, state.context?.id ?? rememberedContext()) : null });
}

export function getSessionState(): SessionState {
  return state;
}

/** Asks the api who is signed in; 401 means nobody. */
export async function loadSession(): Promise<Session | null> {
  try {
    const session = await api.get<Session>('/auth/session');
    setSession(session);
    return session;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      setSession(null);
      return null;
    }
    throw error;
  }
}

/** As loadSession, for public pages: asks /auth/config first, so a visitor who is not signed in meets no 401. */
export async function loadSessionIfSignedIn(): Promise<Session | null> {
  const config = await api.get<{ signed_in?: boolean }>('/auth/config');
  if (config.signed_in) return loadSession();
  setSession(null);
  return null;
}

/**
 * Switches the workspace or partner in view; remembered in this browser for the next visit. The address is what
 * names the context (paths.ts): the app calls this when the address changes, so a screen that wants another
 * context navigates to its address (`inContext`) rather than calling this.
 */
export function switchContext(id: string): void {
  if (!state.session) return;
  const context = pickContext(state.session.memberships, id);
  if (context?.id === state.context?.id) return;
  try {
    if (context) localStorage.setItem(CONTEXT_KEY, context.id);
  } catch {
    // storage disabled: the choice lasts for this page only
  }
  publish({ ...state, context });
}

/** The membership the address names, or null when the person has none with that id and kind. */
export function membershipOf(kind: ContextKind, id: string): Membership | null {
  return state.session?.memberships.find((m) => m.id === id && m.kind === kind) ?? null;
}

/**
 * The context an address without one (an old bookmark, `/dashboard/`) opens in: the one in view or remembered
 * when its kind fits the page, else the first membership of a fitting kind.
 */
export function contextFor(kinds: readonly ContextKind[]): Membership | null {
  const memberships = state.session?.memberships ?? [];
  const fitting = memberships.filter((m) => kinds.includes(m.kind));
  return pickContext(fitting, state.context?.id ?? rememberedContext());
}

export async function signOut(): Promise<void> {
  try {
    await api.post('/auth/sign-out');
  } finally {
    setSession(null);
  }
}

// A /v1 call answering 401 means the session ended elsewhere (expiry, revocation): show the sign-in page.
setUnauthorizedHandler(() => setSession(null));

export function useSession(): SessionState {
  const [current, setCurrent] = useState(state);
  useEffect(() => {
    listeners.add(setCurrent);
    setCurrent(state);
    return () => {
      listeners.delete(setCurrent);
    };
  }, []);
  return current;
}

/** The context in view, for screens that only render inside the signed-in shell. */
export function useCurrentContext(): Membership {
  const { context } = useSession();
  if (!context) throw new Error('useCurrentContext outside the signed-in shell');
  return context;
}
