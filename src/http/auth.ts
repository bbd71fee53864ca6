import { InsufficientScopeError, UnauthorizedError, WrongKeyKindError } from '../platform/errors.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { KeyKind } from '../tenancy/key.store.ts';
import type { Scope } from '../tenancy/scopes.ts';
import type { ApiContext } from './context.ts';

export interface Requirement {
  kind: KeyKind | 'any';
  /** Null: any valid key may call it (only for endpoints about the key itself). */
  scope: Scope | null;
}

export function principalOf(ctx: ApiContext): Principal {
  const principal = ctx.state.principal;
  if (!principal) throw new UnauthorizedError();
  return principal;
}

/** Checks the key kind first (403 forbidden), then the scope (403 insufficient_scope naming it). */
export function authorize(principal: Principal, requirement: Requirement): void {
  if (requirement.kind !== 'any' && principal.kind !== requirement.kind) throw new WrongKeyKindError(requirement.kind);
  if (requirement.scope !== null && !principal.scopes.has(requirement.scope)) throw new InsufficientScopeError(requirement.scope);
}

export function workspaceOf(ctx: ApiContext): Extract<Principal, { kind: 'workspace' }> {
  const principal = principalOf(ctx);
  if (principal.kind !== 'workspace') throw new WrongKeyKindError('workspace');
  return principal;
}
