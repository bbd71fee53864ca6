import { route, type RouteSpec } from '../http/route-table.ts';
import { principalOf } from '../http/auth.ts';
import { decodeTimePosition, pageOf, timePosition } from '../http/cursor.ts';
import type { EventStore, EventDoc } from './event.store.ts';
import type { EventType } from './event-types.ts';
import { EventListQuerySchema, EventListSchema } from './event.schemas.ts';

export function eventView(e: EventDoc): { id: string; type: EventType; created_at: string; data: Record<string, unknown> } {
  return { id: e._id, type: e.type, created_at: e.created_at.toISOString(), data: e.data };
}

export function eventRoutes(events: EventStore): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/events',
      operationId: 'listEvents',
      tag: 'Webhooks',
      summary: 'Events of the workspace (or of the partner and its clients), newest first, cursor-paginated',
      auth: { kind: 'any', scope: 'events:read' },
      query: EventListQuerySchema,
      responses: [{ status: 200, description: 'A page of events', schema: EventListSchema }],
      handler: async (ctx, { query }) => {
        const principal = principalOf(ctx);
        const tenant = principal.kind === 'workspace' ? { workspaceId: principal.workspace._id } : { partnerId: principal.partner._id };
        const rows = await events.page({
          tenant,
          ...(query.type ? { type: query.type } : {}),
          after: decodeTimePosition(query.cursor),
          limit: query.limit + 1,
        });
        const { page, pagination } = pageOf(rows, query.limit, timePosition);
        ctx.body = { data: page.map(eventView), pagination };
      },
    }),
  ];
}
