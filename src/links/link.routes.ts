import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import type { LinkService } from './link.service.ts';
import type { LabelService } from './label.service.ts';
import { QR_DEFAULT_BACKGROUND, QR_DEFAULT_COLOR, qrColourProblem, renderQr } from './qr.ts';
import type { QrLogoService } from './qr-logo.service.ts';
import { ValidationError } from '../platform/errors.ts';
import { LINK_EXPORT_COLUMNS } from './link.export.ts';
import { Type } from '@sinclair/typebox';
import {
  BulkCreateSchema,
  BulkResultSchema,
  LinkCountQuerySchema,
  LinkCountSchema,
  LinkCreateSchema,
  LinkExportLineSchema,
  LinkExportQuerySchema,
  LinkListQuerySchema,
  LinkListSchema,
  LinkSchema,
  LinkUpdateSchema,
  QrQuerySchema,
} from './link.schemas.ts';
import {
  FolderCreateSchema,
  FolderListSchema,
  FolderSchema,
  FolderUpdateSchema,
  TagCreateSchema,
  TagListSchema,
  TagSchema,
  TagUpdateSchema,
} from './tag.schemas.ts';

const read = { kind: 'workspace', scope: 'links:read' } as const;
const write = { kind: 'workspace', scope: 'links:write' } as const;

export function linkRoutes(links: LinkService, qrLogos: QrLogoService): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/links',
      operationId: 'listLinks',
      tag: 'Links',
      summary: 'Links of the workspace, newest first, cursor-paginated',
      auth: read,
      query: LinkListQuerySchema,
      responses: [{ status: 200, description: 'A page of links', schema: LinkListSchema }],
      handler: async (ctx, { query }) => {
        ctx.type = 'application/json';
        ctx.body = await links.listJson(workspaceOf(ctx), query);
      },
    }),
    route({
      method: 'POST',
      path: '/links',
      operationId: 'createLink',
      tag: 'Links',
      summary: 'Create a link (slug generated when absent)',
      auth: write,
      body: LinkCreateSchema,
      errors: ['conflict', 'quota_exceeded', 'plan_restricted'],
      responses: [{ status: 201, description: 'The created link', schema: LinkSchema }],
      handler: async (ctx, { body }) => {
        const link = await links.create(workspaceOf(ctx), body);
        ctx.status = 201;
        ctx.set('Location', `/v1/links/${link.id}`);
        ctx.body = link;
      },
    }),
    route({
      method: 'POST',
      path: '/links/bulk',
      operationId: 'createLinks',
      tag: 'Links',
      summary: 'Create 1 to 100 links; each succeeds or fails on its own, reported with its index',
      auth: write,
      body: BulkCreateSchema,
      responses: [{ status: 200, description: 'One result per item, in order', schema: BulkResultSchema }],
      handler: async (ctx, { body }) => {
        ctx.body = await links.createMany(workspaceOf(ctx), body);
      },
    }),
    // Before /links/:id, which would take `count` or `export` for an id.
    route({
      method: 'GET',
      path: '/links/count',
      operationId: 'countLinks',
      tag: 'Links',
      summary: 'How many links match the same filters as GET /links, over every page',
      auth: read,
      query: LinkCountQuerySchema,
      responses: [{ status: 200, description: 'The number of matching links', schema: LinkCountSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = { count: await links.count(workspaceOf(ctx), query) };
      },
    }),
    route({
      method: 'GET',
      path: '/links/export',
      operationId: 'exportLinks',
      tag: 'Links',
      summary: 'Every link of the workspace with every field, streamed, as CSV or JSON Lines',
      description:
        'Oldest first, one link per row or line, chunked as it is read. `format=jsonl` (`application/x-ndjson`): each line is the link ' +
        'as GET /links/{id} answers it, with `folder_name`. `format=csv` (`text/csv`, RFC 4180, CRLF): a header row, then the columns ' +
        `${LINK_EXPORT_COLUMNS.map((c) => `\`${c}\``).join(', ')}; \`tags\` is a JSON array of the tag names, the blocks (\`targeting\`, ` +
        '`ab_test`, `rules`, `mobile`, `rotator`, `preview`, `destination_preview`, `moderation`) are their JSON, an empty cell is null. Cells starting with `=`, `+`, `-`, ' +
        '`@`, a tab or a carriage return (after any `\'`s) are prefixed with `\'` so a spreadsheet shows them as text: drop one leading ' +
        '`\'` from such a cell to read it back. Passwords are never exported (`has_password` only). Importing either file into another ' +
        'workspace (import source `csv`) recreates the links. At most `LINK_EXPORTS_PER_WORKSPACE` (2 by default) exports of a workspace ' +
        'run at once, across API replicas: one more answers 429 `rate_limited` with `Retry-After` (the seconds until a running one may ' +
        'end its hold; a running export holds its place until its stream closes).',
      auth: read,
      errors: ['rate_limited'],
      query: LinkExportQuerySchema,
      responses: [
        { status: 200, description: 'The links as CSV', contentType: 'text/csv', schema: Type.String({ description: 'RFC 4180 CSV: a header row, then one row per link' }) },
        { status: 200, description: 'The links as JSON Lines', contentType: 'application/x-ndjson', schema: LinkExportLineSchema },
      ],
      handler: async (ctx, { query }) => {
        const principal = workspaceOf(ctx);
        const body = await links.export(principal, query.format);
        ctx.status = 200;
        ctx.type = query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8';
        ctx.set('Content-Disposition', `attachment; filename="links-${principal.workspace._id}.${query.format}"`);
        ctx.set('Cache-Control', 'no-store');
        ctx.body = body;
      },
    }),
    route({
      method: 'GET',
      path: '/links/:id',
      operationId: 'getLink',
      tag: 'Links',
      summary: 'Read one link',
      auth: read,
      responses: [{ status: 200, description: 'The link', schema: LinkSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await links.get(workspaceOf(ctx), params.id!);
      },
    }),
    route({
      method: 'PATCH',
      path: '/links/:id',
      operationId: 'updateLink',
      tag: 'Links',
      summary: 'Update a link (the merged result is validated as a whole); `archived` archives or restores it',
      auth: write,
      body: LinkUpdateSchema,
      errors: ['conflict', 'plan_restricted'],
      responses: [{ status: 200, description: 'The updated link', schema: LinkSchema }],
      handler: async (ctx, { body, params }) => {
        ctx.body = await links.update(workspaceOf(ctx), params.id!, body);
      },
    }),
    route({
      method: 'DELETE',
      path: '/links/:id',
      operationId: 'deleteLink',
      tag: 'Links',
      summary: 'Delete a link; its short URL stops resolving at once',
      auth: write,
      responses: [{ status: 204, description: 'Deleted' }],
      handler: async (ctx, { params }) => {
        await links.delete(workspaceOf(ctx), params.id!);
        ctx.status = 204;
      },
    }),
    route({
      method: 'GET',
      path: '/links/:id/qr',
      operationId: 'getLinkQr',
      tag: 'Links',
      summary: 'QR code of the short URL, PNG or SVG, with a preset, size, margin, colours, error correction and the workspace logo; cacheable (ETag)',
      description:
        'Options override the preset (`medium` by default). The modules must be darker than the background, by a WCAG contrast ratio of at ' +
        'least 3:1 and by 40 % in brightness as scanners see it (Rec. 709 luma of the sRGB values), else 422 `validation_failed` naming ' +
        '`color`: every code answered scans. `logo=true` draws the logo ' +
        'uploaded with PUT /workspace/qr-logo in the centre, on a pad of the background colour covering at most 10 % of the symbol, and ' +
        'raises the error correction to at least Q; without an uploaded logo it is 409 `conflict`. The ETag is a hash of the image, so ' +
        'it changes with every option and with a new logo; `If-None-Match` with it answers 304.',
      auth: read,
      query: QrQuerySchema,
      errors: ['conflict'],
      responses: [
        { status: 200, description: 'The QR code (PNG)', contentType: 'image/png' },
        { status: 200, description: 'The QR code (SVG)', contentType: 'image/svg+xml' },
        { status: 304, description: 'Not modified (If-None-Match matched the ETag)' },
      ],
      handler: async (ctx, { params, query }) => {
        const principal = workspaceOf(ctx);
        const color = query.color === undefined ? undefined : hexColour(query.color);
        const background = query.background === undefined ? undefined : hexColour(query.background);
        const problem = qrColourProblem(color ?? QR_DEFAULT_COLOR, background ?? QR_DEFAULT_BACKGROUND);
        // The field to change: the one given, or `color` when both (or neither) are.
        if (problem !== null) throw new ValidationError([{ path: color === undefined && background !== undefined ? 'background' : 'color', message: problem }]);
        const link = await links.get(principal, params.id!);
        const logo = query.logo === 'true' ? await qrLogos.forRender(principal.workspace._id) : undefined;
        const image = await renderQr(link.short_url, {
          format: query.format,
          ...(query.size !== undefined ? { size: query.size } : {}),
          ...(query.preset !== undefined ? { preset: query.preset } : {}),
          ...(query.margin !== undefined ? { margin: query.margin } : {}),
          ...(query.error_correction !== undefined ? { errorCorrectionLevel: query.error_correction } : {}),
          ...(color !== undefined ? { color } : {}),
          ...(background !== undefined ? { background } : {}),
          ...(logo !== undefined ? { logo } : {}),
        });
        ctx.set('ETag', image.etag);
        ctx.set('Cache-Control', 'private, max-age=86400');
        if (ctx.get('If-None-Match') === image.etag) {
          ctx.status = 304;
          return;
        }
        ctx.type = image.contentType;
        ctx.body = image.body;
      },
    }),
  ];
}

/** `rrggbb` or `#rrggbb` (the schema's pattern) as `#rrggbb` in lower case. */
function hexColour(value: string): string {
  return `#${value.replace(/^#/, '').toLowerCase()}`;
}

export function labelRoutes(tags: LabelService, folders: LabelService): RouteSpec[] {
  const specs = [
    { path: '/tags', service: tags, one: 'tag', tag: 'Links', schema: TagSchema, list: TagListSchema, create: TagCreateSchema, update: TagUpdateSchema, op: 'Tag' },
    { path: '/folders', service: folders, one: 'folder', tag: 'Links', schema: FolderSchema, list: FolderListSchema, create: FolderCreateSchema, update: FolderUpdateSchema, op: 'Folder' },
  ] as const;
  return specs.flatMap((s) => [
    route({
      method: 'GET',
      path: s.path,
      operationId: `list${s.op}s`,
      tag: s.tag,
      summary: `The workspace's ${s.one}s, by name`,
      auth: read,
      responses: [{ status: 200, description: `Every ${s.one}`, schema: s.list }],
      handler: async (ctx) => {
        ctx.body = await s.service.list(workspaceOf(ctx).workspace._id);
      },
    }),
    route({
      method: 'POST',
      path: s.path,
      operationId: `create${s.op}`,
      tag: s.tag,
      summary: `Create a ${s.one} (names are unique in the workspace)`,
      auth: write,
      body: s.create,
      errors: ['conflict'],
      responses: [{ status: 201, description: `The created ${s.one}`, schema: s.schema }],
      handler: async (ctx, { body }) => {
        const created = await s.service.create(workspaceOf(ctx).workspace._id, body);
        ctx.status = 201;
        ctx.set('Location', `/v1${s.path}/${created.id}`);
        ctx.body = created;
      },
    }),
    route({
      method: 'PATCH',
      path: `${s.path}/:id`,
      operationId: `update${s.op}`,
      tag: s.tag,
      summary: `Rename a ${s.one}${s.one === 'tag' ? ' or change its colour' : ''}`,
      auth: write,
      body: s.update,
      errors: ['conflict'],
      responses: [{ status: 200, description: `The updated ${s.one}`, schema: s.schema }],
      handler: async (ctx, { body, params }) => {
        ctx.body = await s.service.update(workspaceOf(ctx).workspace._id, params.id!, body);
      },
    }),
    route({
      method: 'DELETE',
      path: `${s.path}/:id`,
      operationId: `delete${s.op}`,
      tag: s.tag,
      summary: `Delete a ${s.one}; links keep existing without it`,
      auth: write,
      responses: [{ status: 204, description: 'Deleted' }],
      handler: async (ctx, { params }) => {
        await s.service.delete(workspaceOf(ctx).workspace._id, params.id!);
        ctx.status = 204;
      },
    }),
  ]);
}
