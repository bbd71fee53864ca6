import { Type } from '@sinclair/typebox';
import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import { closed, ReferenceId, Text } from '../platform/schema.ts';
import { ClickEventSchema } from './click-event.ts';
import { parseEventId, type ClickStreams } from './click-stream.ts';

const ClickStreamQuerySchema = Type.Object(
  {
    link_id: Type.Optional(ReferenceId({ description: 'Only the clicks of this link' })),
    last_event_id: Type.Optional(
      Text(3, 30, { pattern: '^\\d{1,15}-\\d{1,6}$', description: 'Resume after this event id, for clients that cannot send the `Last-Event-ID` header (which wins when both are given)' }),
    ),
  },
  closed,
);

/** GET /clicks/stream: the workspace's clicks as they happen (click-stream.ts). */
export function clickStreamRoutes(streams: ClickStreams): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/clicks/stream',
      operationId: 'streamClicks',
      tag: 'Analytics',
      summary: 'The workspace\'s clicks as they happen, as Server-Sent Events',
      description:
        'A `text/event-stream` that stays open: each click is one event `click` whose `data` is a `ClickEvent` (the visitor and the decision, ' +
        'the shape of the `link.clicked` webhook\'s clicks) and whose `id` is `<sequence>-<index>`. A client that reconnects with `Last-Event-ID` ' +
        '(browsers\' EventSource does it by itself) gets every click after that one, then the live ones: clicks are kept for resuming for three days. ' +
        'Without it the stream starts with the next click. A comment line comes every 15 s when there is no click. At most 20 streams per workspace ' +
        'and api replica (429 beyond). Keys need `analytics:read`; dashboard sessions may read it too.',
      auth: { kind: 'workspace', scope: 'analytics:read' },
      query: ClickStreamQuerySchema,
      responses: [{ status: 200, description: 'The stream of clicks; each `data:` line holds one ClickEvent as JSON', contentType: 'text/event-stream', schema: ClickEventSchema }],
      errors: ['rate_limited'],
      handler: async (ctx, { query }) => {
        const principal = workspaceOf(ctx);
        const header = ctx.get('Last-Event-ID');
        const from = header !== '' ? parseEventId(header, 'Last-Event-ID') : parseEventId(query.last_event_id, 'last_event_id');
        const stream = await streams.start(principal.workspace._id, query.link_id ?? null, from);
        ctx.req.socket.setNoDelay(true);
        ctx.req.socket.setTimeout(0);
        ctx.res.once('close', () => stream.close());
        ctx.status = 200;
        ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
        ctx.set('Cache-Control', 'no-store');
        ctx.set('X-Accel-Buffering', 'no');
        ctx.body = stream.body;
      },
    }),
  ];
}
