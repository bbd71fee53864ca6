import { route, type RouteSpec } from '../http/route-table.ts';
import { principalOf } from '../http/auth.ts';
import type { WorkspaceService } from '../workspace/workspace.service.ts';
import { ClientCreateSchema, ClientListQuerySchema, ClientListSchema, ClientSchema } from './partner.schemas.ts';
import { clientView, type PartnerService } from './partner.service.ts';

function partnerIdOf(ctx: Parameters<RouteSpec['handler']>[0]): string {
  const principal = principalOf(ctx);
  // authorize() has already refused other key kinds; this narrows the type.
  if (principal.kind !== 'partner') throw new Error('partner route reached without a partner key');
  return principal.partner._id;
}

export function partnerRoutes(partners: PartnerService, workspaces: WorkspaceService): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/partner/clients',
      operationId: 'listPartnerClients',
      tag: 'Partner clients',
      summary: "The partner's client workspaces, cursor-paginated in a stable identifier order",
      auth: { kind: 'partner', scope: 'clients:read' },
      query: ClientListQuerySchema,
      responses: [{ status: 200, description: 'A page of client workspaces', schema: ClientListSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await partners.listClients(partnerIdOf(ctx), query.cursor, query.limit);
      },
    }),
    route({
      method: 'POST',
      path: '/partner/clients',
      operationId: 'createPartnerClient',
      tag: 'Partner clients',
      summary: 'Create a client workspace owned by the partner',
      auth: { kind: 'partner', scope: 'clients:write' },
      body: ClientCreateSchema,
      responses: [{ status: 201, description: 'The created client workspace', schema: ClientSchema }],
      handler: async (ctx, { body }) => {
        const ws = await workspaces.create({ name: body.name, planId: body.plan ?? 'free', partnerId: partnerIdOf(ctx) });
        ctx.status = 201;
        ctx.set('Location', `/v1/partner/clients/${ws._id}`);
        ctx.body = clientView(ws);
      },
    }),
  ];
}
