import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { route, type RouteSpec } from './route-table.ts';

/** What the route promises about its body: enough for a client to tell it got an OpenAPI 3.1 document. */
const OpenApiDocumentSchema = Type.Object(
  {
    openapi: Type.String({ pattern: '^3\\.1\\.\\d+$' }),
    info: Type.Object({ title: Type.String(), version: Type.String() }),
    paths: Type.Record(Type.String(), Type.Object({})),
  },
  { description: 'An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0)' },
);

/**
 * `GET /openapi.json`, public. The document is generated on the first request and kept: the route table does not
 * change while the process runs. It changes only with a release, so caches may keep it for a day and then
 * revalidate with the ETag instead of downloading it again.
 */
export function openApiRoutes(document: () => unknown): RouteSpec[] {
  let served: { body: string; etag: string } | null = null;
  return [
    route({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      tag: 'Meta',
      summary: 'This API described in OpenAPI 3.1',
      description: 'Generated from the schemas the service validates requests with. Cached for a day; revalidate with If-None-Match.',
      auth: null,
      responses: [
        { status: 200, description: 'The OpenAPI document', schema: OpenApiDocumentSchema },
        { status: 304, description: 'The document has not changed since the ETag sent in If-None-Match' },
      ],
      handler: (ctx) => {
        if (!served) {
          const body = JSON.stringify(document());
          served = { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
        }
        ctx.set('Cache-Control', 'public, max-age=86400');
        ctx.set('ETag', served.etag);
        // ctx.fresh compares If-None-Match with the ETag, but only once the status is a success.
        ctx.status = 200;
        if (ctx.fresh) {
          ctx.status = 304;
          return;
        }
        ctx.type = 'application/json';
        ctx.body = served.body;
      },
    }),
  ];
}
