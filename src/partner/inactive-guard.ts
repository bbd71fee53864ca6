import type { Next } from 'koa';
import { ForbiddenError } from '../platform/errors.ts';
import type { ApiContext } from '../http/context.ts';
import { isInactive } from '../tenancy/subscription.ts';

export class ClientInactiveError extends ForbiddenError {
  readonly state: string;
  constructor(state: string) {
    super(
      `This workspace's subscription is ${state} by its partner, so its keys may read but not write. ` +
        'Writes resume when the partner records a payment or reactivates the workspace.',
    );
    this.state = state;
  }
}

/**
 * On every mutation, after the key is known: a suspended or canceled client's keys are refused (403 forbidden,
 * saying why). The key cache holds the workspace with its subscription and drops it on the change's broadcast.
 */
export function refuseInactiveWrites(ctx: ApiContext, next: Next): Promise<void> {
  const principal = ctx.state.principal;
  if (principal?.kind === 'workspace') {
    const state = principal.workspace.subscription?.state;
    if (isInactive(state)) throw new ClientInactiveError(state!);
  }
  return next() as Promise<void>;
}
