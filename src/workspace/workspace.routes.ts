import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import { WorkspaceProfileSchema, WorkspaceUpdateSchema } from './workspace.schemas.ts';
import type { WorkspaceService } from './workspace.service.ts';

export function workspaceRoutes(service: WorkspaceService): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/workspace',
      operationId: 'getWorkspace',
      tag: 'Workspace',
      summary: 'The workspace profile: plan limits, current consumption and redirect settings',
      auth: { kind: 'workspace', scope: 'workspace:read' },
      responses: [{ status: 200, description: 'The workspace profile', schema: WorkspaceProfileSchema }],
      handler: async (ctx) => {
        ctx.body = await service.profile(workspaceOf(ctx));
      },
    }),
    route({
      method: 'PATCH',
      path: '/workspace',
      operationId: 'updateWorkspace',
      tag: 'Workspace',
      summary: 'Change the redirect settings: workspace rules, conversion tracking, attribution window',
      description:
        'Each field given replaces the stored value; the others stay. Rules are checked like a link\'s (IP entries must be ' +
        'addresses or CIDR ranges, `ip_list_ids` must name IP lists of the workspace). Redirect pods apply the change at once.',
      auth: { kind: 'workspace', scope: 'workspace:write' },
      body: WorkspaceUpdateSchema,
      errors: ['plan_restricted'],
      responses: [{ status: 200, description: 'The workspace profile with the new settings', schema: WorkspaceProfileSchema }],
      handler: async (ctx, { body }) => {
        ctx.body = await service.update(workspaceOf(ctx), body);
      },
    }),
  ];
}
