import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import type { DomainService } from './domain.service.ts';
import { DomainCreateSchema, DomainListSchema, DomainSchema } from './domain.schemas.ts';

// Workspace keys only: a partner key answers 403 forbidden (partner domains are another tag).
const read = { kind: 'workspace', scope: 'domains:read' } as const;
const write = { kind: 'workspace', scope: 'domains:write' } as const;

export function domainRoutes(domains: DomainService): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/domains',
      operationId: 'listDomains',
      tag: 'Domains',
      summary: 'Domains available to the workspace: the default short domain, then its custom domains, in a single page',
      auth: read,
      responses: [{ status: 200, description: 'Every domain, each with its state and DNS records', schema: DomainListSchema }],
      handler: async (ctx) => {
        ctx.body = await domains.list(workspaceOf(ctx));
      },
    }),
    route({
      method: 'POST',
      path: '/domains',
      operationId: 'createDomain',
      tag: 'Domains',
      summary: 'Connect a custom domain; the answer lists the DNS records to set',
      description:
        'Needs the `custom_domains` capability of the plan; the plan\'s `domains` quota counts custom domains (the ' +
        'default short domain does not count). The domain starts `pending_verification`: set the TXT record (ownership) ' +
        'and the CNAME (a subdomain) or A records (an apex domain) returned here; they stay readable with ' +
        'GET /domains/{id}. Once DNS is seen the certificate is issued (`pending_ssl`), then the domain turns `active` ' +
        'and its links resolve; each step is a webhook event (`domain.pending_ssl`, `domain.activated`, `domain.error`). ' +
        'A hostname already connected, by another workspace or by this one, answers 409 `conflict`. The certificate ' +
        'is obtained either by the Kubernetes operator (cert-manager) or, without a cluster, by the platform itself ' +
        'from an ACME CA through HTTP-01 and served by SNI, then renewed at two thirds of its lifetime (see ' +
        '`certificate`). Where neither is configured (a development run), connecting answers 503 `not_configured`.',
      auth: write,
      body: DomainCreateSchema,
      errors: ['plan_restricted', 'quota_exceeded', 'conflict', 'not_configured'],
      upstream: true,
      responses: [{ status: 201, description: 'The domain, `pending_verification`, with the DNS records to set', schema: DomainSchema }],
      handler: async (ctx, { body }) => {
        const created = await domains.create(workspaceOf(ctx), body);
        ctx.status = 201;
        ctx.set('Location', `/v1/domains/${created.id}`);
        ctx.body = created;
      },
    }),
    route({
      method: 'GET',
      path: '/domains/:id',
      operationId: 'getDomain',
      tag: 'Domains',
      summary: 'Read one domain with its state, error and DNS records (`dom_default`: the default short domain)',
      auth: read,
      responses: [{ status: 200, description: 'The domain', schema: DomainSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await domains.get(workspaceOf(ctx), params.id!);
      },
    }),
    route({
      method: 'DELETE',
      path: '/domains/:id',
      operationId: 'deleteDomain',
      tag: 'Domains',
      summary: 'Disconnect a custom domain; its links stop resolving',
      description:
        'The links on the domain are kept (move them with PATCH /links/{id}) but stop resolving at once; the ' +
        'certificate and the route are removed by the operator (with ACME, the stored certificate and its key are ' +
        'removed at once). The default short domain cannot be deleted (400 ' +
        '`invalid_request`).',
      auth: write,
      responses: [{ status: 204, description: 'Disconnected' }],
      upstream: true,
      handler: async (ctx, { params }) => {
        await domains.delete(workspaceOf(ctx), params.id!);
        ctx.status = 204;
      },
    }),
  ];
}
