import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import type { ImportService } from './import.service.ts';
import { ImportCreateSchema, ImportErrorListSchema, ImportListQuerySchema, ImportListSchema, ImportSchema } from './import.schemas.ts';

// An import writes links: it needs the scopes links need.
const read = { kind: 'workspace', scope: 'links:read' } as const;
const write = { kind: 'workspace', scope: 'links:write' } as const;

export function importRoutes(imports: ImportService): RouteSpec[] {
  return [
    route({
      method: 'POST',
      path: '/imports',
      operationId: 'createImport',
      tag: 'Links',
      summary: 'Start importing the links of another service (Bitly, Dub, Shlink, Kutt, YOURLS, Rebrandly, Short.io) or of an export file',
      description:
        'The job runs in the background: poll GET /imports/{id} for its progress. Credentials (token, base URL, file) are stored encrypted and never returned. Running the same import again creates nothing twice: rows already imported from that source are counted as skipped.',
      auth: write,
      body: ImportCreateSchema,
      responses: [{ status: 202, description: 'The job, queued', schema: ImportSchema }],
      handler: async (ctx, { body }) => {
        const job = await imports.create(workspaceOf(ctx), body);
        ctx.status = 202;
        ctx.set('Location', `/v1/imports/${job.id}`);
        ctx.body = job;
      },
    }),
    route({
      method: 'GET',
      path: '/imports',
      operationId: 'listImports',
      tag: 'Links',
      summary: 'Import jobs of the workspace, newest first, cursor-paginated',
      auth: read,
      query: ImportListQuerySchema,
      responses: [{ status: 200, description: 'A page of import jobs', schema: ImportListSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await imports.list(workspaceOf(ctx), query);
      },
    }),
    route({
      method: 'GET',
      path: '/imports/:id',
      operationId: 'getImport',
      tag: 'Links',
      summary: 'One import job and its progress: status, total, done, created, skipped, failed',
      auth: read,
      responses: [{ status: 200, description: 'The job', schema: ImportSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await imports.get(workspaceOf(ctx), params.id!);
      },
    }),
    route({
      method: 'GET',
      path: '/imports/:id/errors',
      operationId: 'listImportErrors',
      tag: 'Links',
      summary: 'The rows of an import job that could not be imported, in source order, cursor-paginated',
      auth: read,
      query: ImportListQuerySchema,
      responses: [{ status: 200, description: 'A page of row errors', schema: ImportErrorListSchema }],
      handler: async (ctx, { params, query }) => {
        ctx.body = await imports.errors(workspaceOf(ctx), params.id!, query);
      },
    }),
    route({
      method: 'POST',
      path: '/imports/:id/cancel',
      operationId: 'cancelImport',
      tag: 'Links',
      summary: 'Cancel a queued or running import; links already created stay',
      auth: write,
      errors: ['conflict'],
      responses: [{ status: 200, description: 'The job, canceled', schema: ImportSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await imports.cancel(workspaceOf(ctx), params.id!);
      },
    }),
  ];
}
