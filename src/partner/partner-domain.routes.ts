import { Type } from '@sinclair/typebox';
import { route, type RouteSpec } from '../http/route-table.ts';
import { closed, StringEnum, Nullable } from '../platform/schema.ts';
import { DomainConnectSchema, DomainCreateSchema, DomainSchema } from '../domains/domain.schemas.ts';
import { view, type DomainService } from '../domains/domain.service.ts';
import type { DomainDoc } from '../domains/domain.store.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import type { PartnerStore } from '../tenancy/partner.store.ts';
import { platformPlanOf } from './partner.service.ts';
import { partnerIdOf } from './partner.routes.ts';
import { NotFoundError } from '../platform/errors.ts';

const read = { kind: 'partner', scope: 'domains:read' } as const;
const write = { kind: 'partner', scope: 'domains:write' } as const;

const PartnerDomainSchema = Type.Object(
  {
    ...DomainSchema.properties,
    owner: Type.Object(
      {
        kind: StringEnum(['partner', 'client'] as const, { description: '`partner`: usable by every client\'s links; `client`: a client workspace\'s own' }),
        client_id: Nullable(Type.String(), { description: 'The client owning it; null for a partner domain' }),
      },
      closed,
    ),
  },
  { ...closed, $id: 'PartnerDomain' },
);
const PartnerDomainListSchema = Type.Object(
  {
    data: Type.Array(PartnerDomainSchema, { description: "The partner's domains and every client's, oldest first" }),
    pagination: Type.Object({ next_cursor: Type.Null(), has_more: Type.Literal(false) }, { ...closed, description: 'Always a single page' }),
    connect: DomainConnectSchema,
  },
  { ...closed, $id: 'PartnerDomainList' },
);

function partnerView(doc: DomainDoc) {
  const partnerOwned = doc.owner_kind === 'partner';
  return { ...view(doc), owner: { kind: partnerOwned ? ('partner' as const) : ('client' as const), client_id: partnerOwned ? null : doc.workspace_id } };
}

export function partnerDomainRoutes(domains: DomainService, deps: { partners: PartnerStore; workspaces: WorkspaceStore; defaultWorkspaceRatePerMinute: number }): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/partner/domains',
      operationId: 'listPartnerDomains',
      tag: 'Partner domains',
      summary: "The partner's own domains and every client workspace's domain, in a single page",
      auth: read,
      responses: [{ status: 200, description: 'Every domain, with its owner', schema: PartnerDomainListSchema }],
      handler: async (ctx) => {
        const partnerId = partnerIdOf(ctx);
        const clients = await deps.workspaces.collection.find({ partner_id: partnerId }, { projection: { _id: 1 } }).toArray();
        const docs = await domains.listForPartner(partnerId, clients.map((c) => c._id));
        const partner = await deps.partners.findById(partnerId);
        if (!partner) throw new NotFoundError('partner');
        const own = docs.filter((d) => d.owner_kind === 'partner').length;
        ctx.body = {
          data: docs.map(partnerView),
          pagination: { next_cursor: null, has_more: false },
          connect: domains.connectability(platformPlanOf(partner, deps.defaultWorkspaceRatePerMinute), own),
        };
      },
    }),
    route({
      method: 'POST',
      path: '/partner/domains',
      operationId: 'createPartnerDomain',
      tag: 'Partner domains',
      summary: 'Connect a partner domain, usable by the links of every client; the answer lists the DNS records to set',
      description:
        'Provisioned like a workspace domain (the same `Domain` resource and operator, the same states and events, which ' +
        "go to the partner's webhook endpoints). Needs `custom_domains` in the partner's platform plan; its `domains` " +
        'limit counts partner domains. Clients see it in GET /domains (`partner_domain: true`) and may put links on it.',
      auth: write,
      body: DomainCreateSchema,
      errors: ['plan_restricted', 'quota_exceeded', 'conflict', 'not_configured'],
      upstream: true,
      responses: [{ status: 201, description: 'The domain, `pending_verification`, with the DNS records to set', schema: PartnerDomainSchema }],
      handler: async (ctx, { body }) => {
        const partnerId = partnerIdOf(ctx);
        const partner = await deps.partners.findById(partnerId);
        if (!partner) throw new NotFoundError('partner');
        const created = await domains.createForPartner(partnerId, platformPlanOf(partner, deps.defaultWorkspaceRatePerMinute), body);
        ctx.status = 201;
        ctx.set('Location', `/v1/partner/domains/${created.id}`);
        ctx.body = partnerView(await domains.getForPartner(partnerId, created.id));
      },
    }),
    route({
      method: 'GET',
      path: '/partner/domains/:id',
      operationId: 'getPartnerDomain',
      tag: 'Partner domains',
      summary: 'Read one partner domain with its state and DNS records',
      auth: read,
      responses: [{ status: 200, description: 'The domain', schema: PartnerDomainSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = partnerView(await domains.getForPartner(partnerIdOf(ctx), params.id!));
      },
    }),
    route({
      method: 'DELETE',
      path: '/partner/domains/:id',
      operationId: 'deletePartnerDomain',
      tag: 'Partner domains',
      summary: "Delete a partner domain: clients' links on it stop resolving (a client's own domain is deleted with its key)",
      auth: write,
      upstream: true,
      responses: [{ status: 204, description: 'Deleted' }],
      handler: async (ctx, { params }) => {
        await domains.deleteForPartner(partnerIdOf(ctx), params.id!);
        ctx.status = 204;
      },
    }),
  ];
}
