// The transport of the authorization server: the library's own endpoints (/oauth/*, discovery), the metadata a
// host discovers us by (RFC 9728 protected resources, RFC 8414 authorization server), the consent page's calls
// (/auth/oauth/requests, signed-in dashboard sessions) and the authorised apps of a workspace (/v1/authorized-apps).
import type Provider from 'oidc-provider';
import { route, type RouteSpec } from '../http/route-table.ts';
import { principalOf } from '../http/auth.ts';
import type { ApiContext } from '../http/context.ts';
import { signedInOf } from '../users/auth.routes.ts';
import { ALL_SCOPES } from '../tenancy/scopes.ts';
import { AuthorizedAppListSchema, AuthorizedAppSchema, ConsentAnswerSchema, ConsentApproveBody, ConsentRequestSchema } from './oauth.schemas.ts';
import type { OAuthService } from './oauth.service.ts';

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
const AUTHORIZATION_SERVER_PATH = '/.well-known/oauth-authorization-server';
const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';

export interface OAuthEndpointSettings {
  issuer: string;
  resources: { mcp: string; api: string };
  docsUrl: string;
}

/** The URL of the protected-resource metadata of a resource (RFC 9728: the resource's path after the well-known one). */
export function resourceMetadataUrl(issuer: string, resource: string): string {
  return `${issuer}${PROTECTED_RESOURCE_PATH}${new URL(resource).pathname}`;
}

/**
 * The handler of the paths outside /v1 the authorization server answers, or null for any other path. The
 * protected-resource documents are ours; everything else is the library's, given the raw request.
 */
export function oauthEndpoints(provider: Provider, s: OAuthEndpointSettings): (ctx: ApiContext) => Promise<void> | null {
  const library = provider.callback();
  const document = (resource: string, name: string) => ({
    resource,
    authorization_servers: [s.issuer],
    scopes_supported: ALL_SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: name,
    resource_documentation: s.docsUrl,
  });
  const documents = new Map<string, Record<string, unknown>>([
    // Without a path: clients that do not insert the resource's path get the tool server's, the resource they came for.
    [PROTECTED_RESOURCE_PATH, document(s.resources.mcp, 'Linkplane tool server (MCP)')],
    [`${PROTECTED_RESOURCE_PATH}${new URL(s.resources.mcp).pathname}`, document(s.resources.mcp, 'Linkplane tool server (MCP)')],
    [`${PROTECTED_RESOURCE_PATH}${new URL(s.resources.api).pathname}`, document(s.resources.api, 'Linkplane API')],
  ]);

  const handOver = async (ctx: ApiContext): Promise<void> => {
    ctx.respond = false;
    await library(ctx.req, ctx.res);
  };

  return (ctx) => {
    const resourceDocument = documents.get(ctx.path);
    if (resourceDocument) {
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return null;
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = resourceDocument;
      return Promise.resolve();
    }
    if (ctx.path === AUTHORIZATION_SERVER_PATH) {
      // RFC 8414's name for the library's discovery document: the same metadata.
      ctx.req.url = OPENID_CONFIGURATION_PATH;
      return handOver(ctx);
    }
    if (ctx.path === OPENID_CONFIGURATION_PATH || ctx.path.startsWith('/oauth/')) return handOver(ctx);
    return null;
  };
}

const CONSENT_TAG = 'Dashboard authorisations';

/** The consent page's calls (paths relative to /auth); a request without a session answers 401. */
export function consentRoutes(service: OAuthService): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/oauth/requests/:uid',
      operationId: 'getConsentRequest',
      tag: CONSENT_TAG,
      summary: 'A pending authorization request: the app, the resource and the scopes it asks for',
      auth: null,
      responses: [{ status: 200, description: 'The request', schema: ConsentRequestSchema }],
      handler: async (ctx, { params }) => {
        signedInOf(ctx);
        ctx.body = await service.consentRequest(params.uid ?? '');
      },
    }),
    route({
      method: 'POST',
      path: '/oauth/requests/:uid/approve',
      operationId: 'approveConsentRequest',
      tag: CONSENT_TAG,
      summary: 'Approve the request for a workspace (or partner): the app gets a code for the scopes approved',
      auth: null,
      body: ConsentApproveBody,
      responses: [{ status: 200, description: 'Where the browser goes next', schema: ConsentAnswerSchema }],
      handler: async (ctx, { params, body }) => {
        ctx.body = await service.approve(signedInOf(ctx).user._id, params.uid ?? '', body);
      },
    }),
    route({
      method: 'POST',
      path: '/oauth/requests/:uid/deny',
      operationId: 'denyConsentRequest',
      tag: CONSENT_TAG,
      summary: 'Deny the request: the app is answered access_denied',
      auth: null,
      responses: [{ status: 200, description: 'Where the browser goes next', schema: ConsentAnswerSchema }],
      handler: async (ctx, { params }) => {
        signedInOf(ctx);
        ctx.body = await service.deny(params.uid ?? '');
      },
    }),
  ];
}

/** The authorised apps of the calling workspace or partner, as the keys page lists and revokes them. */
export function authorizedAppRoutes(service: OAuthService): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/authorized-apps',
      operationId: 'listAuthorizedApps',
      tag: 'Keys',
      summary: 'The apps people authorised by OAuth to act in this workspace (MCP hosts connected by URL), newest first, revoked ones included',
      auth: { kind: 'workspace', scope: 'workspace:read' },
      responses: [{ status: 200, description: 'The authorised apps', schema: AuthorizedAppListSchema }],
      handler: async (ctx) => {
        ctx.body = { data: await service.list(principalOf(ctx)) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/authorized-apps/:id',
      operationId: 'revokeAuthorizedApp',
      tag: 'Keys',
      summary: 'Revoke an authorised app at once: its tokens stop working and its refresh token with them; revoking twice keeps the first time',
      auth: { kind: 'workspace', scope: 'workspace:write' },
      responses: [{ status: 200, description: 'The revoked app', schema: AuthorizedAppSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await service.revoke(principalOf(ctx), params.id ?? '');
      },
    }),
  ];
}
