// The authorization server's decisions that are ours, not the library's: what the consent page shows, what an
// approval grants (the scopes asked for, within what the person's role allows and what the workspace's kind of key
// can use), which workspace an access token acts in, and the authorised apps a workspace lists and revokes.
import type Provider from 'oidc-provider';
import { ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Logger } from '../platform/logger.ts';
import type { ApiKeyDoc, KeyKind } from '../tenancy/key.store.ts';
import type { MembershipStore } from '../tenancy/membership.store.ts';
import type { PartnerStore } from '../tenancy/partner.store.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import type { UserStore } from '../tenancy/user.store.ts';
import type { Principal } from '../tenancy/principal.ts';
import { effectivePlan } from '../tenancy/plans.ts';
import { scopesOf } from '../tenancy/roles.ts';
import { SCOPE_AREAS, isScope, type ScopeArea } from '../tenancy/scopes.ts';
import type { AuthorizedAppDoc, OAuthStore } from './oauth.store.ts';

/** last_used_at is shown, not audited: one write per app per minute. */
const TOUCH_INTERVAL_MS = 60_000;

export interface OAuthServiceDeps {
  store: OAuthStore;
  memberships: MembershipStore;
  workspaces: WorkspaceStore;
  partners: PartnerStore;
  users: UserStore;
  logger: Logger;
  /** The tool server's resource (tokens bound to it work only there) and the whole API's (tokens work on all of /v1). */
  resources: { mcp: string; api: string };
  defaultRateLimits: { workspacePerMinute: number; partnerPerMinute: number };
  /** For each scope, the kinds of key whose endpoints check it. */
  scopeKinds: () => ReadonlyMap<string, ReadonlySet<KeyKind>>;
  now?: () => number;
}

export interface ConsentRequest {
  id: string;
  client: { id: string; name: string | null; uri: string | null; redirect_uri: string };
  resource: string;
  scopes: Array<{ scope: string; description: string }>;
}

export interface AuthorizedApp {
  id: string;
  client_id: string;
  client_name: string | null;
  authorized_by: string;
  scopes: string[];
  resource: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export function describeScope(scope: string): string {
  const [area, access] = scope.split(':') as [ScopeArea, 'read' | 'write'];
  return `${access === 'read' ? 'Read' : 'Change'} ${SCOPE_AREAS[area]}`;
}

export class OAuthService {
  private readonly d: OAuthServiceDeps;
  private provider: Provider | null = null;
  private readonly now: () => number;
  private readonly lastTouched = new Map<string, number>();

  constructor(deps: OAuthServiceDeps) {
    this.d = deps;
    this.now = deps.now ?? Date.now;
  }

  /** The library instance (built after this service, whose hooks it calls). */
  attach(provider: Provider): void {
    this.provider = provider;
  }

  private get p(): Provider {
    if (!this.provider) throw new Error('OAuthService used before its authorization server was attached');
    return this.provider;
  }

  async accountExists(userId: string): Promise<boolean> {
    return (await this.d.users.findById(userId)) !== null;
  }

  /** The library ended a grant (revocation of its refresh token, a replayed refresh token): its app is revoked too. */
  async grantEnded(grantId: string): Promise<void> {
    await this.d.store.revokeApp({ grant_id: grantId }, new Date(this.now()));
  }

  /** What the consent page shows for a pending authorization request. */
  async consentRequest(uid: string): Promise<ConsentRequest> {
    const { interaction, client } = await this.pending(uid);
    const params = interaction.params as Record<string, unknown>;
    return {
      id: uid,
      client: { id: client.clientId, name: client.clientName ?? null, uri: client.clientUri ?? null, redirect_uri: typeof params.redirect_uri === 'string' ? params.redirect_uri : '' },
      resource: this.resourceOf(params),
      scopes: requestedScopes(params).map((scope) => ({ scope, description: describeScope(scope) })),
    };
  }

  /**
   * The person approves: a grant of the asked-for scopes (or the subset they chose) that their role allows in the
   * chosen workspace or partner, recorded as an authorised app; the answer is where the browser goes next (the
   * library's resume endpoint, which redirects to the app with the code).
   */
  async approve(userId: string, uid: string, input: { context: string; scopes?: string[] | undefined }): Promise<{ redirect_to: string }> {
    const { interaction, client } = await this.pending(uid);
    const params = interaction.params as Record<string, unknown>;
    const membership = await this.d.memberships.find(userId, input.context);
    if (!membership) throw new ForbiddenError('The context names no workspace or partner this user belongs to.');
    if (membership.kind !== 'workspace') throw new ForbiddenError('Apps are authorised to act in a workspace: choose one of yours.');
    const requested = requestedScopes(params);
    const chosen = input.scopes ?? requested;
    const foreign = chosen.filter((s) => !requested.includes(s));
    if (foreign.length > 0) throw new ValidationError(foreign.map((s) => ({ path: 'scopes', message: `${s} was not asked for by the app` })));
    const role = scopesOf(membership.role);
    const kinds = this.d.scopeKinds();
    // A scope that some endpoint checks only for the other kind of key (clients:*, plans:* for partners) is dropped;
    // one checked inside an endpoint rather than by its route (tools:write) stays.
    const granted = chosen.filter((s) => role.has(s) && (kinds.get(s)?.has(membership.kind) ?? true));
    if (granted.length === 0) {
      throw new ValidationError([{ path: 'scopes', message: 'none of the scopes asked for can be granted in this workspace with your role' }]);
    }
    const resource = this.resourceOf(params);
    const rejected = requested.filter((s) => !granted.includes(s));

    const grant = new this.p.Grant({ accountId: userId, clientId: client.clientId });
    // Granted as resource scopes (what the access token carries) and, since they may also be registered client
    // scopes, as OpenID scopes too; those not granted are recorded as refused, so the library asks nothing more.
    grant.addResourceScope(resource, granted.join(' '));
    grant.addOIDCScope([...granted, ...oidcScopes(params)].join(' '));
    if (rejected.length > 0) {
      grant.rejectResourceScope(resource, rejected.join(' '));
      grant.rejectOIDCScope(rejected.join(' '));
    }
    const grantId = await grant.save();
    await this.d.store.insertApp({
      _id: newId('app'),
      grant_id: grantId,
      client_id: client.clientId,
      client_name: client.clientName ?? null,
      user_id: userId,
      kind: membership.kind,
      target_id: membership.target_id,
      scopes: granted,
      resource,
      created_at: new Date(this.now()),
      last_used_at: null,
      revoked_at: null,
    });
    interaction.result = { login: { accountId: userId }, consent: { grantId } };
    await interaction.save(this.remaining(interaction.exp));
    return { redirect_to: interaction.returnTo };
  }

  /** The person refuses: the app is sent back `access_denied`. */
  async deny(uid: string): Promise<{ redirect_to: string }> {
    const { interaction } = await this.pending(uid);
    interaction.result = { error: 'access_denied', error_description: 'The request was denied.' };
    await interaction.save(this.remaining(interaction.exp));
    return { redirect_to: interaction.returnTo };
  }

  /**
   * The principal an access token stands for, as a key would: the workspace (or partner) of its app, the scopes
   * the token carries within what the person's role still allows there. A token bound to the tool server works
   * only there; one bound to the API works on all of /v1. Unknown, expired, revoked: 401.
   */
  async principalFor(token: string, path: string): Promise<Principal> {
    const access = await this.p.AccessToken.find(token);
    if (!access?.grantId) throw new UnauthorizedError('The access token is unknown, expired or revoked.');
    const audience = Array.isArray(access.aud) ? access.aud : [access.aud];
    const allowed = audience.includes(this.d.resources.api) || (audience.includes(this.d.resources.mcp) && (path === '/v1/mcp' || path === '/v1/mcp/'));
    if (!allowed) throw new UnauthorizedError(`The access token was issued for ${String(audience[0])}, not this endpoint.`);
    const app = await this.d.store.findAppByGrant(access.grantId);
    if (!app || app.revoked_at) throw new UnauthorizedError('The app’s authorisation has been revoked.');
    const isWorkspace = app.kind === 'workspace';
    const [membership, target] = await Promise.all([
      this.d.memberships.find(app.user_id, app.target_id),
      isWorkspace ? this.d.workspaces.findById(app.target_id) : this.d.partners.findById(app.target_id),
    ]);
    if (!membership || !target) throw new UnauthorizedError('The person who authorised this app no longer belongs to its workspace.');
    const role = scopesOf(membership.role);
    const scopes = new Set((access.scope ?? '').split(' ').filter((s) => isScope(s) && app.scopes.includes(s) && role.has(s)));
    const key: ApiKeyDoc = {
      _id: app._id,
      kind: app.kind,
      workspace_id: isWorkspace ? app.target_id : null,
      partner_id: isWorkspace ? null : app.target_id,
      name: app.client_name,
      prefix: 'oauth',
      key_hash: '',
      scopes: [...scopes],
      created_at: app.created_at,
      expires_at: typeof access.exp === 'number' ? new Date(access.exp * 1000) : null,
      revoked_at: null,
      last_used_at: app.last_used_at,
    };
    this.touch(app._id);
    const limits = this.d.defaultRateLimits;
    if ('plan_id' in target) {
      const plan = effectivePlan(target.plan_id, target.limits_override, target.capabilities_override);
      return { kind: 'workspace', key, scopes, workspace: target, plan, rateLimitPerMinute: plan.limits.rate_limit_per_minute ?? limits.workspacePerMinute };
    }
    return { kind: 'partner', key, scopes, partner: target, rateLimitPerMinute: target.rate_limit_per_minute ?? limits.partnerPerMinute };
  }

  async list(principal: Principal): Promise<AuthorizedApp[]> {
    return (await this.d.store.listApps(targetOf(principal))).map(appView);
  }

  /** Revokes an app of the principal's workspace at once: its grant and every token of it are deleted. */
  async revoke(principal: Principal, id: string): Promise<AuthorizedApp> {
    const app = await this.d.store.findApp(id);
    if (!app || app.target_id !== targetOf(principal)) throw new NotFoundError('authorized app');
    await this.d.store.revokeApp({ _id: app._id }, new Date(this.now()));
    const grant = await this.p.Grant.find(app.grant_id);
    await grant?.destroy();
    await this.d.store.deleteGrantRecords(app.grant_id);
    return appView((await this.d.store.findApp(id)) ?? app);
  }

  private async pending(uid: string) {
    const interaction = await this.p.Interaction.find(uid);
    if (!interaction) throw new NotFoundError('authorization request');
    const clientId = (interaction.params as { client_id?: unknown }).client_id;
    const client = typeof clientId === 'string' ? await this.p.Client.find(clientId) : undefined;
    if (!client) throw new NotFoundError('authorization request');
    return { interaction, client };
  }

  private resourceOf(params: Record<string, unknown>): string {
    const resource: unknown = params.resource;
    const first: unknown = Array.isArray(resource) ? (resource as unknown[])[0] : resource;
    return typeof first === 'string' && first !== '' ? first : this.d.resources.mcp;
  }

  private remaining(exp: number): number {
    return Math.max(1, exp - Math.floor(this.now() / 1000));
  }

  private touch(id: string): void {
    const nowMs = this.now();
    if (nowMs - (this.lastTouched.get(id) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(id, nowMs);
    this.d.store.touchApp(id, new Date(nowMs)).catch((error: unknown) => {
      this.d.logger.warn({ err: error, app_id: id }, 'could not record app last use');
    });
  }
}

/** The API scopes an authorization request asks for, in order, each once. */
function requestedScopes(params: Record<string, unknown>): string[] {
  const scope = typeof params.scope === 'string' ? params.scope : '';
  return [...new Set(scope.split(' ').filter(isScope))];
}

/** The OpenID scopes of the request (openid, offline_access), granted as asked: they carry no API access. */
function oidcScopes(params: Record<string, unknown>): string[] {
  const scope = typeof params.scope === 'string' ? params.scope : '';
  return scope.split(' ').filter((s) => s === 'openid' || s === 'offline_access');
}

function targetOf(principal: Principal): string {
  return principal.kind === 'workspace' ? principal.workspace._id : principal.partner._id;
}

function appView(app: AuthorizedAppDoc): AuthorizedApp {
  return {
    id: app._id,
    client_id: app.client_id,
    client_name: app.client_name,
    authorized_by: app.user_id,
    scopes: app.scopes,
    resource: app.resource,
    created_at: app.created_at.toISOString(),
    last_used_at: app.last_used_at?.toISOString() ?? null,
    revoked_at: app.revoked_at?.toISOString() ?? null,
  };
}
