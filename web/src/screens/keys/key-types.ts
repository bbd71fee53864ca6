// The dashboard key endpoints (/auth/keys, /auth/scopes; src/keys/dashboard-key.schemas.ts is the authority).

export interface KeyRecord {
  id: string;
  name: string | null;
  prefix: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface ScopeInfo {
  scope: string;
  description: string;
}

export interface CreatedKey {
  key: string;
  record: KeyRecord;
}

export type KeyState = 'active' | 'revoked' | 'expired';

export function keyState(key: KeyRecord, now = Date.now()): KeyState {
  if (key.revoked_at) return 'revoked';
  if (key.expires_at && Date.parse(key.expires_at) <= now) return 'expired';
  return 'active';
}

/** Scopes grouped by area (`links:read`, `links:write` under `links`), in the order the api lists them. */
export function groupScopes(scopes: ScopeInfo[]): { area: string; scopes: ScopeInfo[] }[] {
  const groups = new Map<string, ScopeInfo[]>();
  for (const scope of scopes) {
    const area = scope.scope.split(':')[0] ?? scope.scope;
    groups.set(area, [...(groups.get(area) ?? []), scope]);
  }
  return [...groups].map(([area, list]) => ({ area, scopes: list }));
}

export const EXPIRY_CHOICES = [
  { value: 'never', label: 'Never' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In a year' },
  { value: 'date', label: 'On a date…' },
] as const;

/** The expiry to send: null for never; a chosen date expires at the end of that day, in the browser's zone. */
export function expiryOf(choice: string, date: string, now = new Date()): string | null {
  if (choice === 'never') return null;
  if (choice === 'date') {
    const [y, m, d] = date.split('-').map(Number);
    return new Date(y!, m! - 1, d! + 1).toISOString();
  }
  return new Date(now.getTime() + Number(choice) * 86_400_000).toISOString();
}
