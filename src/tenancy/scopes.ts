// Every scope a key can hold, `<area>:read|write`. Published in the OpenAPI document and by `linkplane key scopes`.

export const SCOPE_AREAS = {
  links: 'links, tags, folders, QR codes',
  analytics: 'click analytics and exports (for a partner key: the analytics across its clients)',
  domains: 'custom domains',
  workspace: 'the workspace profile, plan limits and consumption',
  events: 'the event log (GET /events)',
  webhooks: 'webhook endpoints and their delivery log',
  conversions: 'conversions attributed to clicks',
  alerts: 'alert rules and firings',
  reports: 'abuse reports about the workspace’s links, and their resolution',
  tools: 'the tool server for AI assistants',
  clients: 'partner client workspaces and subscriptions',
  plans: 'plans the partner sells',
  billing: 'client payments and partner payouts',
} as const;

export type ScopeArea = keyof typeof SCOPE_AREAS;
export type Scope = `${ScopeArea}:${'read' | 'write'}`;

export const ALL_SCOPES: readonly Scope[] = (Object.keys(SCOPE_AREAS) as ScopeArea[]).flatMap((area) => [
  `${area}:read` as const,
  `${area}:write` as const,
]);

const SCOPE_SET: ReadonlySet<string> = new Set(ALL_SCOPES);

export function isScope(value: string): value is Scope {
  return SCOPE_SET.has(value);
}

/** Parses a CLI scope list: `all`, or comma-separated names. Returns the unknown names so the caller can name them. */
export function parseScopeList(list: string): { scopes: Scope[]; unknown: string[] } {
  if (list.trim() === 'all') return { scopes: [...ALL_SCOPES], unknown: [] };
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const unknown = names.filter((n) => !isScope(n));
  return { scopes: [...new Set(names.filter(isScope))], unknown };
}
