import { route, type RouteSpec } from '../http/route-table.ts';
import { principalOf } from '../http/auth.ts';
import type { ApiContext } from '../http/context.ts';
import { webhookTenantOf, type WebhookService } from './webhook.service.ts';
import {
  WebhookCreateSchema,
  WebhookDeliveryListQuerySchema,
  WebhookDeliveryListSchema,
  WebhookListSchema,
  WebhookSchema,
  WebhookUpdateSchema,
  WebhookUpdatedSchema,
  WebhookWithSecretSchema,
  MAX_ENDPOINTS_PER_TENANT,
} from './webhook.schemas.ts';

// Workspace keys manage the workspace's endpoints, partner keys the partner's own: `any` kind, tenant from the key.
const read = { kind: 'any', scope: 'webhooks:read' } as const;
const write = { kind: 'any', scope: 'webhooks:write' } as const;
const tenant = (ctx: ApiContext) => webhookTenantOf(principalOf(ctx));

const rotation = (graceHours: number) =>
  graceHours === 0
    ? 'The previous secret stops signing at once (WEBHOOK_SECRET_GRACE_HOURS is 0 on this deployment).'
    : `The previous secret keeps signing for a grace period of ${graceHours} h (WEBHOOK_SECRET_GRACE_HOURS, 24 by default): ` +
      'during it every delivery carries two signatures, one per secret (two `v1=` values in X-Service-Signature, or two `v1,` ' +
      'entries in `webhook-signature` for the `standard` scheme), so a receiver holding either verifies it. A second rotation ' +
      'within the grace period retires the older secret at once. The new secret is in the format of the endpoint\'s signature scheme.';

export function webhookRoutes(webhooks: WebhookService, graceHours: number): RouteSpec[] {
  return [
    route({
      method: 'POST',
      path: '/webhooks',
      operationId: 'createWebhook',
      tag: 'Webhooks',
      summary: 'Register a webhook endpoint; the signing secret is returned once',
      description:
        `At most ${MAX_ENDPOINTS_PER_TENANT} endpoints per workspace or partner. The URL must resolve to public addresses. ` +
        'Partner-only event types need a partner key.',
      auth: write,
      body: WebhookCreateSchema,
      errors: ['quota_exceeded'],
      responses: [{ status: 201, description: 'The endpoint with its signing secret (shown only now)', schema: WebhookWithSecretSchema }],
      handler: async (ctx, { body }) => {
        const created = await webhooks.create(tenant(ctx), body);
        ctx.status = 201;
        ctx.set('Location', `/v1/webhooks/${created.id}`);
        ctx.body = created;
      },
    }),
    route({
      method: 'GET',
      path: '/webhooks',
      operationId: 'listWebhooks',
      tag: 'Webhooks',
      summary: 'Webhook endpoints, oldest first, in a single page',
      auth: read,
      responses: [{ status: 200, description: 'Every endpoint', schema: WebhookListSchema }],
      handler: async (ctx) => {
        ctx.body = await webhooks.list(tenant(ctx));
      },
    }),
    route({
      method: 'GET',
      path: '/webhooks/:id',
      operationId: 'getWebhook',
      tag: 'Webhooks',
      summary: 'Read one webhook endpoint (never its secret)',
      auth: read,
      responses: [{ status: 200, description: 'The endpoint', schema: WebhookSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await webhooks.get(tenant(ctx), params.id!);
      },
    }),
    route({
      method: 'PATCH',
      path: '/webhooks/:id',
      operationId: 'updateWebhook',
      tag: 'Webhooks',
      summary: 'Update an endpoint; `{"status": "active"}` re-enables a failing one',
      description:
        'Re-enabling resets the failure streak. Events that occurred while the endpoint was failing are not replayed. ' +
        'Changing `signature_scheme` issues a new signing secret in that scheme\'s format, returned once in `secret`; the previous secret stops signing at once.',
      auth: write,
      body: WebhookUpdateSchema,
      responses: [{ status: 200, description: 'The updated endpoint (with `secret` when the signature scheme changed)', schema: WebhookUpdatedSchema }],
      handler: async (ctx, { body, params }) => {
        ctx.body = await webhooks.update(tenant(ctx), params.id!, body);
      },
    }),
    route({
      method: 'DELETE',
      path: '/webhooks/:id',
      operationId: 'deleteWebhook',
      tag: 'Webhooks',
      summary: 'Delete an endpoint and its delivery log; it receives no further events',
      auth: write,
      responses: [{ status: 204, description: 'Deleted' }],
      handler: async (ctx, { params }) => {
        await webhooks.delete(tenant(ctx), params.id!);
        ctx.status = 204;
      },
    }),
    route({
      method: 'POST',
      path: '/webhooks/:id/rotate-secret',
      operationId: 'rotateWebhookSecret',
      tag: 'Webhooks',
      summary: 'Replace the signing secret; the new one is returned once',
      description: rotation(graceHours),
      auth: write,
      responses: [{ status: 200, description: 'The endpoint with its new signing secret (shown only now)', schema: WebhookWithSecretSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await webhooks.rotateSecret(tenant(ctx), params.id!);
      },
    }),
    route({
      method: 'GET',
      path: '/webhooks/:id/deliveries',
      operationId: 'listWebhookDeliveries',
      tag: 'Webhooks',
      summary: 'Delivery log of an endpoint: every attempt with its request and the response, newest first, cursor-paginated',
      auth: read,
      query: WebhookDeliveryListQuerySchema,
      responses: [{ status: 200, description: 'A page of delivery attempts', schema: WebhookDeliveryListSchema }],
      handler: async (ctx, { params, query }) => {
        ctx.body = await webhooks.deliveries(tenant(ctx), params.id!, query);
      },
    }),
  ];
}
