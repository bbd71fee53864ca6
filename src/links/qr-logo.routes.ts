import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import { QrLogoSchema, QrLogoUploadSchema } from './qr-logo.schemas.ts';
import type { QrLogoService } from './qr-logo.service.ts';

const read = { kind: 'workspace', scope: 'workspace:read' } as const;
const write = { kind: 'workspace', scope: 'workspace:write' } as const;

export function qrLogoRoutes(logos: QrLogoService): RouteSpec[] {
  return [
    route({
      method: 'PUT',
      path: '/workspace/qr-logo',
      operationId: 'putQrLogo',
      tag: 'Workspace',
      summary: "Upload the workspace's QR logo (PNG or JPEG, base64), replacing any earlier one",
      description:
        'The logo QR codes draw with `logo=true`. The type is read from the bytes and must match `content_type`; SVG is refused, as it can ' +
        'carry scripts. At most 100 KiB, each side 16 to 1024 pixels, and an image that decodes completely: otherwise 422 ' +
        '`validation_failed`. Codes drawn with the new logo get new ETags.',
      auth: write,
      body: QrLogoUploadSchema,
      responses: [{ status: 200, description: 'The stored logo', schema: QrLogoSchema }],
      handler: async (ctx, { body }) => {
        ctx.body = await logos.put(workspaceOf(ctx).workspace._id, body.content_type, body.data);
      },
    }),
    route({
      method: 'GET',
      path: '/workspace/qr-logo',
      operationId: 'getQrLogo',
      tag: 'Workspace',
      summary: "The workspace's QR logo; 404 when none is uploaded",
      auth: read,
      errors: ['not_found'],
      responses: [{ status: 200, description: 'The stored logo', schema: QrLogoSchema }],
      handler: async (ctx) => {
        ctx.body = await logos.get(workspaceOf(ctx).workspace._id);
      },
    }),
    route({
      method: 'DELETE',
      path: '/workspace/qr-logo',
      operationId: 'deleteQrLogo',
      tag: 'Workspace',
      summary: "Remove the workspace's QR logo; codes asked for with `logo=true` then answer 409",
      auth: write,
      errors: ['not_found'],
      responses: [{ status: 204, description: 'Removed' }],
      handler: async (ctx) => {
        await logos.delete(workspaceOf(ctx).workspace._id);
        ctx.status = 204;
      },
    }),
  ];
}
