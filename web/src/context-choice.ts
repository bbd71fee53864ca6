export type ContextKind = 'workspace' | 'partner';

/** A workspace or partner the signed-in person belongs to, as the session lists it. */
export interface Membership {
  kind: ContextKind;
  id: string;
  name: string;
  role: 'owner' | 'member';
}

/**
 * The workspace or partner a session opens on: the one remembered in this browser if the person still belongs to
 * it, else their first workspace (where links live: the usual home), else their first membership. Memberships made
 * in the same instant come back in no fixed order, so "the first one" alone could open a partner one day and its
 * workspace the next.
 */
export function pickContext(memberships: readonly Membership[], wanted: string | null): Membership | null {
  return memberships.find((m) => m.id === wanted) ?? memberships.find((m) => m.kind === 'workspace') ?? memberships[0] ?? null;
}
