// The signed-in person and the workspace or partner in view. Screens read it with useSession(); every /v1
// call carries the context chosen here (Linkplane-Context) and the session's CSRF token.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, setCredentials, setUnauthorizedHandler } from './api.ts';
import { pickContext, type Membership } from './context-choice.ts';

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

/** Switches the workspace or partner in view; remembered in this browser for the next visit. */
export function switchContext(id: string): void {
  if (!state.session) return;
  const context = pickContext(state.session.memberships, id);
  try {
    if (context) localStorage.setItem(CONTEXT_KEY, context.id);
  } catch {
    // storage disabled: the choice lasts for this page only
  }
  publish({ ...state, context });
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
