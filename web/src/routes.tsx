// The route table and the navigation list, assembled from every area's own declarations. An area adds its
// screens in screens/<area>/<area>.routes.ts; only a new area needs a line here.
import type { Area, AreaRoute, NavEntry } from './area.ts';
import type { ContextKind } from './session.ts';
import { linksArea } from './screens/links/links.routes.ts';
import { importsArea } from './screens/imports/imports.routes.ts';
import { analyticsArea } from './screens/analytics/analytics.routes.ts';
import { domainsArea } from './screens/domains/domains.routes.ts';
import { keysArea } from './screens/keys/keys.routes.ts';
import { webhooksArea } from './screens/webhooks/webhooks.routes.ts';
import { workspaceArea } from './screens/workspace/workspace.routes.ts';
import { partnerArea } from './screens/partner/partner.routes.ts';
import { authorizeArea } from './screens/authorize/authorize.routes.ts';
import { monitoringArea } from './screens/monitoring/monitoring.routes.ts';

/** In navigation order. */
const AREAS: Area[] = [partnerArea, linksArea, importsArea, analyticsArea, monitoringArea, domainsArea, keysArea, webhooksArea, workspaceArea, authorizeArea];

export const ROUTES: AreaRoute[] = AREAS.flatMap((area) => area.routes);

export const NAV: NavEntry[] = AREAS.flatMap((area) => area.nav);

/** Where `/dashboard/` leads: a workspace's links, a partner's overview of its business. */
const HOME: Record<ContextKind, string> = { workspace: '/links', partner: '/partner' };

export function homePath(kind: ContextKind): string {
  return HOME[kind];
}

const ALL_KINDS: ContextKind[] = ['workspace', 'partner'];

/**
 * The contexts a page (a path below the context, `/links/lnk_1`) works in: those of the navigation entry it sits
 * under (`/links` is a workspace's), every kind for pages under no entry.
 */
export function kindsOf(path: string): ContextKind[] {
  let best: NavEntry | null = null;
  for (const entry of NAV) {
    if ((path === entry.path || path.startsWith(`${entry.path}/`)) && (!best || entry.path.length > best.path.length)) best = entry;
  }
  return best?.kinds ?? ALL_KINDS;
}

/** What to call a kind of context in a sentence. */
export const KIND_NAME: Record<ContextKind, string> = { workspace: 'workspace', partner: 'partner' };
