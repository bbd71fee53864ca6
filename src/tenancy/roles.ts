import { ALL_SCOPES, type Scope } from './scopes.ts';
import type { Role } from './membership.store.ts';

/**
 * What a dashboard member may do in /v1. Owners hold every scope. Members read everything and change the day-to-day
 * things (links, domains, alerts, abuse reports, conversions); settings, webhooks (their secrets), keys, clients,
 * plans and billing stay with owners. Listed by what members may write, so a scope added later is owner-only until
 * someone decides otherwise.
 */
const MEMBER_WRITE_AREAS: ReadonlySet<string> = new Set(['links', 'analytics', 'domains', 'events', 'conversions', 'alerts', 'reports', 'tools']);

export const OWNER_SCOPES: readonly Scope[] = ALL_SCOPES;
export const MEMBER_SCOPES: readonly Scope[] = ALL_SCOPES.filter((scope) => {
  const [area, access] = scope.split(':') as [string, string];
  return access === 'read' || MEMBER_WRITE_AREAS.has(area);
});

const OWNER_SET: ReadonlySet<string> = new Set(OWNER_SCOPES);
const MEMBER_SET: ReadonlySet<string> = new Set(MEMBER_SCOPES);

export function scopesOf(role: Role): ReadonlySet<string> {
  return role === 'owner' ? OWNER_SET : MEMBER_SET;
}
