// POST /webhooks/{id}/test (spec 6.2: "a test delivery uses the same pipeline and signature; its data is
// {test: true}"). The test event is published straight to DELIVERIES, addressed to this one endpoint: it never
// enters EVENTS (so no other endpoint receives it) nor the events log (it did not happen). From there it takes the
// normal path: the delivery consumer signs, POSTs, logs and retries it like any other delivery.
import { Type } from '@sinclair/typebox';
import { route, type RouteSpec } from '../http/route-table.ts';
import { principalOf } from '../http/auth.ts';
import { newId } from '../platform/ids.ts';
import { ConflictError, NotFoundError } from '../platform/errors.ts';
import type { Nats } from '../platform/nats.ts';
import { webhookTenantOf } from './webhook.service.ts';
import type { WebhookStore } from './webhook.store.ts';
import { deliveryIdFor, publishDelivery } from './delivery-message.ts';

export const WebhookTestDeliverySchema = Type.Object(
  {
    delivery_id: Type.String({ description: 'Prefix `dlv_`: the `id` of the body the endpoint receives, and of its rows in the delivery log' }),
    event_id: Type.String({ description: 'The test event (not listed by GET /events)' }),
    event_type: Type.String({ description: 'The first event type the endpoint subscribes to' }),
  },
  { additionalProperties: false, $id: 'WebhookTestDelivery' },
);

export function webhookTestRoutes(deps: { webhooks: WebhookStore; nats: Nats; now?: () => Date }): RouteSpec[] {
  const now = deps.now ?? (() => new Date());
  return [
    route({
      method: 'POST',
      path: '/webhooks/:id/test',
      operationId: 'testWebhook',
      tag: 'Webhooks',
      summary: 'Send a signed test delivery (`data: {"test": true}`) to this endpoint only',
      description:
        'The test event carries the first event type the endpoint subscribes to and goes through the normal delivery ' +
        'pipeline: same headers, signature, delivery log and retries. A `failing` endpoint must be re-enabled first (409).',
      auth: { kind: 'any', scope: 'webhooks:write' },
      errors: ['conflict'],
      responses: [{ status: 202, description: 'Queued for delivery', schema: WebhookTestDeliverySchema }],
      handler: async (ctx, { params }) => {
        const tenant = webhookTenantOf(principalOf(ctx));
        const endpoint = await deps.webhooks.findById(tenant, params.id!);
        if (!endpoint) throw new NotFoundError('webhook endpoint');
        if (endpoint.status !== 'active') {
          throw new ConflictError('The endpoint is failing and receives no deliveries; re-enable it with PATCH {"status": "active"} first.');
        }
        const type = endpoint.events[0]!;
        const event = {
          id: newId('evt'),
          type,
          created_at: now().toISOString(),
          workspace_id: endpoint.workspace_id,
          partner_id: endpoint.partner_id,
          data: { test: true },
        };
        const deliveryId = deliveryIdFor(event.id, endpoint._id);
        await publishDelivery(deps.nats, { delivery_id: deliveryId, webhook_id: endpoint._id, event, test: true });
        ctx.status = 202;
        ctx.body = { delivery_id: deliveryId, event_id: event.id, event_type: type };
      },
    }),
  ];
}
