import { route, type RouteSpec } from '../http/route-table.ts';
import { principalOf } from '../http/auth.ts';
import { KeyInfoSchema } from '../keys/key.schemas.ts';
import { Type } from '@sinclair/typebox';
import { closed } from '../platform/schema.ts';
import {
  ClientCreateSchema,
  ClientKeyCreateSchema,
  ClientListQuerySchema,
  ClientListSchema,
  ClientSchema,
  ClientUpdateSchema,
  PartnerProfileSchema,
  PartnerUpdateSchema,
} from './partner.schemas.ts';
import { PartnerPlanListSchema, PartnerPlanSchema, PlanCreateSchema, PlanUpdateSchema } from './plan.schemas.ts';
import type { PartnerService } from './partner.service.ts';

type Ctx = Parameters<RouteSpec['handler']>[0];

export function partnerIdOf(ctx: Ctx): string {
  const principal = principalOf(ctx);
  // authorize() has already refused other key kinds; this narrows the type.
  if (principal.kind !== 'partner') throw new Error('partner route reached without a partner key');
  return principal.partner._id;
}

const clientsRead = { kind: 'partner', scope: 'clients:read' } as const;
const clientsWrite = { kind: 'partner', scope: 'clients:write' } as const;
const plansRead = { kind: 'partner', scope: 'plans:read' } as const;
const plansWrite = { kind: 'partner', scope: 'plans:write' } as const;

const ClientKeySchema = Type.Object(
  { key: Type.String({ description: 'The full key, shown only now (`lp_live_…`)' }), ...KeyInfoSchema.properties },
  { ...closed, $id: 'ClientKeyCreated' },
);

export function partnerRoutes(partners: PartnerService): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/partner',
      operationId: 'getPartner',
      tag: 'Partner',
      summary: "The partner: its platform plan (the ceiling of the plans it sells), client quota, fees and settings, and the Stripe ingestion URL",
      auth: clientsRead,
      responses: [{ status: 200, description: 'The partner profile', schema: PartnerProfileSchema }],
      handler: async (ctx) => {
        ctx.body = await partners.profile(partnerIdOf(ctx));
      },
    }),
    route({
      method: 'PATCH',
      path: '/partner',
      operationId: 'updatePartner',
      tag: 'Partner',
      summary: "Change the partner's settings: suspended clients' links, the grace period, the processor fee schedule, the Stripe endpoint secret",
      auth: { kind: 'partner', scope: 'billing:write' },
      body: PartnerUpdateSchema,
      responses: [{ status: 200, description: 'The partner profile with the new settings', schema: PartnerProfileSchema }],
      handler: async (ctx, { body }) => {
        ctx.body = await partners.update(partnerIdOf(ctx), body);
      },
    }),

    // ----- plans -----
    route({
      method: 'GET',
      path: '/partner/plans',
      operationId: 'listPartnerPlans',
      tag: 'Partner plans',
      summary: 'Plans the partner sells, archived ones included, oldest first, in a single page (at most 100 plans)',
      auth: plansRead,
      responses: [{ status: 200, description: 'Every plan', schema: PartnerPlanListSchema }],
      handler: async (ctx) => {
        ctx.body = await partners.listPlans(partnerIdOf(ctx));
      },
    }),
    route({
      method: 'POST',
      path: '/partner/plans',
      operationId: 'createPartnerPlan',
      tag: 'Partner plans',
      summary: 'Create a plan to sell: price, limits and capabilities',
      description:
        "Limits and capabilities may not exceed the partner's platform plan (GET /partner): 422 validation_failed naming " +
        'each field beyond it. The price is in integer minor units of an ISO 4217 currency. At most 100 plans (422 quota_exceeded).',
      auth: plansWrite,
      body: PlanCreateSchema,
      errors: ['quota_exceeded'],
      responses: [{ status: 201, description: 'The plan', schema: PartnerPlanSchema }],
      handler: async (ctx, { body }) => {
        const plan = await partners.createPlan(partnerIdOf(ctx), body);
        ctx.status = 201;
        ctx.set('Location', `/v1/partner/plans/${plan.id}`);
        ctx.body = plan;
      },
    }),
    route({
      method: 'GET',
      path: '/partner/plans/:id',
      operationId: 'getPartnerPlan',
      tag: 'Partner plans',
      summary: 'Read one plan, with the number of clients on it',
      auth: plansRead,
      responses: [{ status: 200, description: 'The plan', schema: PartnerPlanSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await partners.getPlan(partnerIdOf(ctx), params.id!);
      },
    }),
    route({
      method: 'PATCH',
      path: '/partner/plans/:id',
      operationId: 'updatePartnerPlan',
      tag: 'Partner plans',
      summary: "Change a plan; new limits and capabilities apply to its clients at once",
      auth: plansWrite,
      body: PlanUpdateSchema,
      responses: [{ status: 200, description: 'The plan', schema: PartnerPlanSchema }],
      handler: async (ctx, { body, params }) => {
        ctx.body = await partners.updatePlan(partnerIdOf(ctx), params.id!, body);
      },
    }),
    route({
      method: 'POST',
      path: '/partner/plans/:id/archive',
      operationId: 'archivePartnerPlan',
      tag: 'Partner plans',
      summary: 'Archive a plan: its clients keep it, no new client can be put on it',
      auth: plansWrite,
      responses: [{ status: 200, description: 'The archived plan', schema: PartnerPlanSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await partners.archivePlan(partnerIdOf(ctx), params.id!);
      },
    }),
    route({
      method: 'DELETE',
      path: '/partner/plans/:id',
      operationId: 'deletePartnerPlan',
      tag: 'Partner plans',
      summary: 'Delete a plan no client is on; a plan in use answers 409 conflict (archive it instead)',
      auth: plansWrite,
      errors: ['conflict'],
      responses: [{ status: 204, description: 'Deleted' }],
      handler: async (ctx, { params }) => {
        await partners.deletePlan(partnerIdOf(ctx), params.id!);
        ctx.status = 204;
      },
    }),

    // ----- clients -----
    route({
      method: 'GET',
      path: '/partner/clients',
      operationId: 'listPartnerClients',
      tag: 'Partner clients',
      summary: "The partner's client workspaces, cursor-paginated in a stable identifier order",
      auth: clientsRead,
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
      summary: 'Create a client workspace owned by the partner, `pending` until its first invoice is paid',
      description:
        "Counts against the partner's client quota (GET /partner): beyond it, 422 quota_exceeded. With a `plan`, the " +
        "client gets that plan's limits and capabilities; a `billing_customer_id` already used by another client is 409 conflict.",
      auth: clientsWrite,
      body: ClientCreateSchema,
      errors: ['quota_exceeded', 'conflict'],
      responses: [{ status: 201, description: 'The created client workspace', schema: ClientSchema }],
      handler: async (ctx, { body }) => {
        const client = await partners.createClient(partnerIdOf(ctx), body);
        ctx.status = 201;
        ctx.set('Location', `/v1/partner/clients/${client.id}`);
        ctx.body = client;
      },
    }),
    route({
      method: 'GET',
      path: '/partner/clients/:id',
      operationId: 'getPartnerClient',
      tag: 'Partner clients',
      summary: 'Read one client with its subscription',
      auth: clientsRead,
      responses: [{ status: 200, description: 'The client', schema: ClientSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await partners.getClient(partnerIdOf(ctx), params.id!);
      },
    }),
    route({
      method: 'PATCH',
      path: '/partner/clients/:id',
      operationId: 'updatePartnerClient',
      tag: 'Partner clients',
      summary: 'Rename a client, move it to another plan, set its billing customer id or metadata',
      auth: clientsWrite,
      body: ClientUpdateSchema,
      errors: ['conflict'],
      responses: [{ status: 200, description: 'The client', schema: ClientSchema }],
      handler: async (ctx, { body, params }) => {
        ctx.body = await partners.updateClient(partnerIdOf(ctx), params.id!, body);
      },
    }),
    route({
      method: 'POST',
      path: '/partner/clients/:id/suspend',
      operationId: 'suspendPartnerClient',
      tag: 'Partner clients',
      summary: 'Suspend a client by hand (workspace.suspended): its keys are refused on writes, its links follow `suspended_links`',
      description: 'A payment does not lift a suspension made by hand; only reactivation does. An already suspended or canceled client is 409 conflict.',
      auth: clientsWrite,
      errors: ['conflict'],
      responses: [{ status: 200, description: 'The suspended client', schema: ClientSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await partners.setActive(partnerIdOf(ctx), params.id!, false);
      },
    }),
    route({
      method: 'POST',
      path: '/partner/clients/:id/reactivate',
      operationId: 'reactivatePartnerClient',
      tag: 'Partner clients',
      summary: 'Reactivate a suspended or canceled client by hand (workspace.subscribed)',
      description: 'A client that is neither suspended nor canceled is 409 conflict.',
      auth: clientsWrite,
      errors: ['conflict'],
      responses: [{ status: 200, description: 'The client, subscribed', schema: ClientSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await partners.setActive(partnerIdOf(ctx), params.id!, true);
      },
    }),
    route({
      method: 'POST',
      path: '/partner/clients/:id/keys',
      operationId: 'createPartnerClientKey',
      tag: 'Partner clients',
      summary: "Mint a workspace key for the client, to operate its links through the workspace API; the key is shown once",
      auth: clientsWrite,
      body: ClientKeyCreateSchema,
      responses: [{ status: 201, description: 'The key (its full value only now)', schema: ClientKeySchema }],
      handler: async (ctx, { body, params }) => {
        const created = await partners.mintClientKey(partnerIdOf(ctx), params.id!, body);
        ctx.status = 201;
        ctx.body = { key: created.key, ...created.view };
      },
    }),
  ];
}
