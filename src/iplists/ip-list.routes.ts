import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import type { IpListService } from './ip-list.service.ts';
import { IpListCreateSchema, IpListListSchema, IpListSchema, IpListUpdateSchema, MAX_IP_LISTS_PER_WORKSPACE, MAX_IP_LIST_ENTRIES } from './ip-list.schemas.ts';

// IP lists are part of the workspace's redirect settings (what its rules refer to): the workspace scopes guard them.
const read = { kind: 'workspace', scope: 'workspace:read' } as const;
const write = { kind: 'workspace', scope: 'workspace:write' } as const;

const USE =
  'Rules of the workspace and of its links refer to a list by id in `match.ip_list_ids`; a visitor matches when its ' +
  'address is in any of the named lists. Redirect pods pick up a change at once.';

export function ipListRoutes(service: IpListService): RouteSpec[] {
  return [
    route({
      method: 'POST',
      path: '/ip-lists',
      operationId: 'createIpList',
      tag: 'IP lists',
      summary: 'Create an IP list for rules to refer to',
      description:
        `${USE} At most ${MAX_IP_LISTS_PER_WORKSPACE} lists per workspace and ${MAX_IP_LIST_ENTRIES} entries per list; ` +
        'an entry that is not an address or CIDR range is answered 422 naming `entries[i]`. Needs the plan capability `ip_lists`.',
      auth: write,
      body: IpListCreateSchema,
      errors: ['plan_restricted', 'quota_exceeded'],
      responses: [{ status: 201, description: 'The created list', schema: IpListSchema }],
      handler: async (ctx, { body }) => {
        const created = await service.create(workspaceOf(ctx), body);
        ctx.status = 201;
        ctx.set('Location', `/v1/ip-lists/${created.id}`);
        ctx.body = created;
      },
    }),
    route({
      method: 'GET',
      path: '/ip-lists',
      operationId: 'listIpLists',
      tag: 'IP lists',
      summary: 'IP lists of the workspace, oldest first, in a single page',
      description: 'Readable on every plan, so lists kept after a downgrade can still be seen and deleted.',
      auth: read,
      responses: [{ status: 200, description: 'Every list with its entries', schema: IpListListSchema }],
      handler: async (ctx) => {
        ctx.body = await service.list(workspaceOf(ctx));
      },
    }),
    route({
      method: 'GET',
      path: '/ip-lists/:id',
      operationId: 'getIpList',
      tag: 'IP lists',
      summary: 'Read one IP list',
      auth: read,
      responses: [{ status: 200, description: 'The list', schema: IpListSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await service.get(workspaceOf(ctx), params.id!);
      },
    }),
    route({
      method: 'PATCH',
      path: '/ip-lists/:id',
      operationId: 'updateIpList',
      tag: 'IP lists',
      summary: 'Rename a list, replace its entries or its note',
      description: `\`entries\` replaces the whole list (at most ${MAX_IP_LIST_ENTRIES}). Needs the plan capability \`ip_lists\`.`,
      auth: write,
      body: IpListUpdateSchema,
      errors: ['plan_restricted'],
      responses: [{ status: 200, description: 'The updated list', schema: IpListSchema }],
      handler: async (ctx, { body, params }) => {
        ctx.body = await service.update(workspaceOf(ctx), params.id!, body);
      },
    }),
    route({
      method: 'DELETE',
      path: '/ip-lists/:id',
      operationId: 'deleteIpList',
      tag: 'IP lists',
      summary: 'Delete an IP list',
      description:
        'Allowed while rules still refer to the list: those rules are kept unchanged, and their `ip_list_ids` condition ' +
        'never matches on the deleted list (an inverted rule therefore always matches on it). Remove or edit such rules.',
      auth: write,
      responses: [{ status: 204, description: 'Deleted' }],
      handler: async (ctx, { params }) => {
        await service.delete(workspaceOf(ctx), params.id!);
        ctx.status = 204;
      },
    }),
  ];
}
