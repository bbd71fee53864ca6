import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import { clientIp } from '../platform/client-ip.ts';
import type { ReportService } from './report.service.ts';
import { ReportFileSchema, ReportFiledSchema, ReportListQuerySchema, ReportListSchema, ReportResolveSchema, ReportSchema } from './report.schemas.ts';

const read = { kind: 'workspace', scope: 'reports:read' } as const;
const write = { kind: 'workspace', scope: 'reports:write' } as const;

/** The path of the public filing endpoint, answered without a key. */
export const PUBLIC_REPORT_PATH = '/public/reports';

export function reportRoutes(reports: ReportService, options: { trustedProxyHops: number; perMinute: number }): RouteSpec[] {
  return [
    route({
      method: 'POST',
      path: PUBLIC_REPORT_PATH,
      operationId: 'fileReport',
      tag: 'Reports',
      summary: 'Report a short link as abusive (public: no key)',
      description:
        `Anyone may file; the same form is served on every redirect domain at \`/<slug>/report\`. At most ${options.perMinute} reports per ` +
        'minute per address (429 `rate_limited` with Retry-After). An unknown short link is 404. The answer says only that the report ' +
        'exists; the workspace owning the link reviews it.',
      auth: null,
      body: ReportFileSchema,
      errors: ['rate_limited', 'not_found'],
      responses: [{ status: 201, description: 'The report was filed', schema: ReportFiledSchema }],
      handler: async (ctx, { body }) => {
        const reporter = clientIp(ctx.req.headers, ctx.req.socket.remoteAddress, options.trustedProxyHops) ?? 'unknown';
        const doc = await reports.fileByUrl(body, reporter);
        ctx.status = 201;
        ctx.body = { id: doc._id, status: 'open', created_at: doc.created_at.toISOString() };
      },
    }),
    route({
      method: 'GET',
      path: '/reports',
      operationId: 'listReports',
      tag: 'Reports',
      summary: 'Abuse reports about the workspace’s links, newest first, cursor-paginated',
      auth: read,
      query: ReportListQuerySchema,
      responses: [{ status: 200, description: 'A page of reports', schema: ReportListSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await reports.list(workspaceOf(ctx), query);
      },
    }),
    route({
      method: 'GET',
      path: '/reports/:id',
      operationId: 'getReport',
      tag: 'Reports',
      summary: 'Read one abuse report',
      auth: read,
      responses: [{ status: 200, description: 'The report', schema: ReportSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await reports.get(workspaceOf(ctx), params.id!);
      },
    }),
    route({
      method: 'POST',
      path: '/reports/:id/resolve',
      operationId: 'resolveReport',
      tag: 'Reports',
      summary: 'Resolve a report: dismiss it, put a warning page before the link, or disable the link',
      description:
        '`warn`: visitors first see a page naming the reported reason, and may continue. `disable`: the link answers 410 with a notice ' +
        'instead of redirecting. `dismiss`: nothing is done, and a warning or disabling this same report had set is lifted (a resolved ' +
        'report may be resolved again). A change to the link emits `link.updated` with `changed: ["moderation"]` and reaches every ' +
        'redirect pod at once; the link shows it in `moderation`.',
      auth: write,
      body: ReportResolveSchema,
      responses: [{ status: 200, description: 'The resolved report', schema: ReportSchema }],
      handler: async (ctx, { params, body }) => {
        ctx.body = await reports.resolve(workspaceOf(ctx), params.id!, body);
      },
    }),
  ];
}
