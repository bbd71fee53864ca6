// The authorization server MCP hosts sign in with: panva's oidc-provider (a certified OpenID/OAuth implementation
// built on Koa, like us) configured down to what a host connecting by URL needs. Open dynamic client registration
// (RFC 7591), the authorization code grant with PKCE S256 required of every client, refresh tokens rotated on use,
// revocation (RFC 7009), and resource indicators (RFC 8707): every access token is bound to one of our resources
// (the tool server, or the whole /v1 API) and carries the scopes the person approved, the same scopes as API keys.
// The library renders no login or consent page: the dashboard does (interactions.url), and the consent answer is
// written back through the library's Interaction model (see oauth.service.ts). Its storage is our store.
import { createHash, createPrivateKey, hkdfSync, type JsonWebKey } from 'node:crypto';
import Provider, { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { ALL_SCOPES } from '../tenancy/scopes.ts';
import { RecordAdapter, type AdapterHooks } from './adapter.ts';
import type { OAuthStore } from './oauth.store.ts';

/** Where the library's endpoints live (the issuer is the public API URL; discovery stays at its well-known path). */
export const OAUTH_PATHS = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  end_session: '/oauth/session/end',
  userinfo: '/oauth/userinfo',
  introspection: '/oauth/introspect',
  pushed_authorization_request: '/oauth/par',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
} as const;

/** The dashboard page a person is sent to, to sign in if need be and approve or deny the request. */
export const CONSENT_PAGE = '/dashboard/authorize';

export interface AuthorizationServerSettings {
  /** The public API URL (no trailing slash): the issuer. */
  issuer: string;
  /** The resources a token may be bound to; the first is the default (the tool server). */
  resources: readonly string[];
  secretKey: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Behind a proxy that terminates TLS (X-Forwarded-Proto is believed). */
  behindProxy: boolean;
  /** Whether a user id names an existing account (the token endpoint asks before issuing). */
  accountExists(userId: string): Promise<boolean>;
}

/** A key derived from SECRET_KEY for one purpose, the same on every replica. */
function derive(secretKey: string, purpose: string, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, 'linkplane-oauth', purpose, length));
}

/** The signing key (Ed25519, from a derived seed): the library signs nothing we use, but needs a key to start. */
function signingKey(secretKey: string): JsonWebKey {
  const pkcs8Prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
  const key = createPrivateKey({ key: Buffer.concat([pkcs8Prefix, derive(secretKey, 'signing-key')]), format: 'der', type: 'pkcs8' });
  const jwk = key.export({ format: 'jwk' });
  return { ...jwk, kid: createHash('sha256').update(jwk.x ?? '').digest('base64url').slice(0, 16), use: 'sig', alg: 'EdDSA' };
}

export function buildAuthorizationServer(store: OAuthStore, hooks: AdapterHooks, s: AuthorizationServerSettings): Provider {
  const resources = new Set(s.resources);
  const cookie = { signed: true, httpOnly: true, sameSite: 'lax' as const };
  const provider = new Provider(s.issuer, {
    adapter: (name: string) => new RecordAdapter(name, store, hooks),
    clients: [],
    // `scopes` lists what a client may register for (RFC 7591 `scope`) and ask for; the API scopes are also
    // resource scopes of our resources (getResourceServerInfo), which is what access tokens carry.
    scopes: ['openid', 'offline_access', ...ALL_SCOPES],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'EdDSA',
    },
    enabledJWA: { idTokenSigningAlgValues: ['EdDSA'], userinfoSigningAlgValues: ['EdDSA'] },
    jwks: { keys: [signingKey(s.secretKey)] },
    cookies: {
      keys: [derive(s.secretKey, 'cookies').toString('base64url')],
      names: { session: 'lp_oauth_session', interaction: 'lp_oauth_interaction', resume: 'lp_oauth_resume' },
      long: cookie,
      short: cookie,
    },
    routes: OAUTH_PATHS,
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      // A token is revoked by the client it was issued to (RFC 7009 section 5), which for a public client is its client_id.
      revocation: { enabled: true, allowedPolicy: (_ctx: KoaContextWithOIDC, client: { clientId: string }, token: { clientId?: string }) => token.clientId === client.clientId },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => s.resources[0]!,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: KoaContextWithOIDC, resource: string) => {
          if (!resources.has(resource)) throw new errors.InvalidTarget(`${resource} is not a resource of this server`);
          return { scope: ALL_SCOPES.join(' '), audience: resource, accessTokenTTL: s.accessTokenTtlSeconds, accessTokenFormat: 'opaque' };
        },
      },
    },
    interactions: { url: (_ctx: KoaContextWithOIDC, interaction: { uid: string }) => `${CONSENT_PAGE}/${interaction.uid}` },
    // Every authorization request is answered by the person on the consent page (which names the workspace the app
    // will act in): an earlier grant to the same client is never reused silently.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? await ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    issueRefreshToken: (_ctx: KoaContextWithOIDC, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    findAccount: async (_ctx: KoaContextWithOIDC, id: string) => ((await s.accountExists(id)) ? { accountId: id, claims: () => ({ sub: id }) } : undefined),
    ttl: {
      AccessToken: s.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      RefreshToken: s.refreshTokenTtlSeconds,
      Grant: s.refreshTokenTtlSeconds,
      Interaction: 600,
      Session: 14 * 86_400,
      IdToken: 3_600,
    },
  });
  provider.proxy = s.behindProxy;
  return provider;
}
