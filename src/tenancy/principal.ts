// Who a request acts as: the principal an API key or a dashboard session gives (its workspace and plan, or its
// partner; its scopes; its rate limit), the signed-in user behind a session, and the plan check every feature makes.
import { PlanRestrictedError } from '../platform/errors.ts';
import type { ApiKeyDoc } from './key.store.ts';
import type { WorkspaceDoc } from './workspace.store.ts';
import type { PartnerDoc } from './partner.store.ts';
import type { Capability, Plan } from './plans.ts';
import type { SessionDoc } from './session.store.ts';
import type { UserDoc } from './user.store.ts';

export type Principal =
  | { kind: 'workspace'; key: ApiKeyDoc; scopes: ReadonlySet<string>; workspace: WorkspaceDoc; plan: Plan; rateLimitPerMinute: number }
  | { kind: 'partner'; key: ApiKeyDoc; scopes: ReadonlySet<string>; partner: PartnerDoc; rateLimitPerMinute: number };

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

/** A session as the transport sees it once its cookie checked out. */
export interface SignedIn {
  session: SessionDoc;
  user: UserDoc;
}

export function requireCapabilities(principal: WorkspacePrincipal, used: readonly Capability[]): void {
  for (const capability of used) {
    if (!principal.plan.capabilities.includes(capability)) throw new PlanRestrictedError(capability, principal.plan.id);
  }
}
