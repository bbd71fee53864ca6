// GET /events: the events of spec 6.1 as a cursor-paginated list, newest first.
import { Type, type Static } from '@sinclair/typebox';
import { LOGGED_EVENT_TYPES, type LoggedEventType } from './event-types.ts';
import { closed, PaginationSchema } from '../platform/schema.ts';

const EventTypeSchema = Type.Unsafe<LoggedEventType>({ type: 'string', enum: [...LOGGED_EVENT_TYPES] });

export const EventSchema = Type.Object(
  {
    id: Type.String(),
    type: EventTypeSchema,
    created_at: Type.String({ format: 'date-time' }),
    data: Type.Unsafe<Record<string, unknown>>({ type: 'object', description: 'Event payload; its shape depends on `type`' }),
  },
  { ...closed, $id: 'Event' },
);
export type Event = Static<typeof EventSchema>;

export const EventListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'The next_cursor of the previous page, unchanged' })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    type: Type.Optional(EventTypeSchema),
  },
  closed,
);
export type EventListQuery = Static<typeof EventListQuerySchema>;

export const EventListSchema = Type.Object({ data: Type.Array(EventSchema), pagination: PaginationSchema }, { ...closed, $id: 'EventList' });
export type EventList = Static<typeof EventListSchema>;
