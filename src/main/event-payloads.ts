// Every event type of the catalogue (src/events/event-types.ts) with the schema of its `data`, for the OpenAPI
// document's `webhooks` section. Each schema is the one its builder is typed with (`satisfies`), so what is
// published is what is sent; a type added to the catalogue without a payload here fails the check below.
import { EVENT_TYPES, type EventType } from '../events/event-types.ts';
import type { EventPayloadSpec } from '../http/openapi.ts';
import { LinkEventDataSchema } from '../links/link.schemas.ts';
import { DomainEventDataSchema } from '../domains/domain.schemas.ts';
import { ClickThresholdEventDataSchema } from '../clicks/usage-meter.ts';
import { ConversionSchema } from '../conversions/conversion.schemas.ts';
import { AlertFiringSchema } from '../alerts/alert.schemas.ts';
import { PARTNER_EVENT_PAYLOADS } from '../partner/event-payloads.ts';
import { ClickedEventDataSchema } from '../clicks/click-event.ts';

const WORKSPACE_EVENT_PAYLOADS: readonly (EventPayloadSpec & { type: EventType })[] = [
  { type: 'link.created', summary: 'A link was created', data: LinkEventDataSchema },
  { type: 'link.updated', summary: 'A link changed: by the API, an A/B test that found its winner, or a resolved abuse report', data: LinkEventDataSchema },
  { type: 'link.deleted', summary: 'A link was deleted', data: LinkEventDataSchema },
  {
    type: 'link.clicked',
    summary: 'Clicks of the workspace\'s links, in batches (opt-in)',
    description:
      'Each delivery carries up to WEBHOOK_CLICK_BATCH_SIZE clicks (100 by default), sent at the latest ' +
      'WEBHOOK_CLICK_BATCH_WAIT_MS (1 s) after the first. Opt-in: received only by workspace endpoints that list it themselves; never in GET /events. ' +
      'At least once: a batch may come again after a failure, possibly regrouped; deduplicate by each click\'s `id`',
    data: ClickedEventDataSchema,
  },
  { type: 'domain.pending_ssl', summary: 'A custom domain was verified; its certificate is being issued', data: DomainEventDataSchema },
  { type: 'domain.activated', summary: 'A custom domain serves links over HTTPS', data: DomainEventDataSchema },
  { type: 'domain.error', summary: 'Provisioning a custom domain failed', data: DomainEventDataSchema },
  { type: 'click.threshold', summary: 'Tracked clicks crossed 80 % or 100 % of the plan limit for the period', data: ClickThresholdEventDataSchema },
  { type: 'conversion.created', summary: 'A conversion was recorded', data: ConversionSchema },
  { type: 'alert.fired', summary: 'An alert rule with the webhook channel fired', data: AlertFiringSchema },
  { type: 'alert.resolved', summary: 'A firing of an alert rule with the webhook channel resolved', data: AlertFiringSchema },
];

export const EVENT_PAYLOADS: readonly EventPayloadSpec[] = [...WORKSPACE_EVENT_PAYLOADS, ...PARTNER_EVENT_PAYLOADS];

const listed = new Set(EVENT_PAYLOADS.map((event) => event.type));
const missing = EVENT_TYPES.filter((type) => !listed.has(type));
if (missing.length > 0 || listed.size !== EVENT_PAYLOADS.length) throw new Error(`event payloads: missing or repeated types (${missing.join(', ')})`);
