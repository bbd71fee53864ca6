import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import { WorkspaceProfileSchema } from './workspace.schemas.ts';
import type { WorkspaceService } from './workspace.service.ts';

export function workspaceRoutes(service: WorkspaceService): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/workspace',
      operationId: 'getWorkspace',
      tag: 'Workspace',
      summary: 'The workspace profile: plan limits and current consumption',
      auth: { kind: 'workspace', scope: 'workspace:read' },
      responses: [{ status: 200, description: 'The workspace profile', schema: WorkspaceProfileSchema }],
      handler: async (ctx) => {
        ctx.body = await service.profile(workspaceOf(ctx));
      },
    }),
  ];
}
