import type { ClientSession, Collection, Db, Filter } from 'mongodb';
import { newId } from '../platform/ids.ts';
import { newestFirst } from '../platform/paging.ts';
import type { EventType } from './event-types.ts';

export interface EventDoc {
  _id: string;
  type: EventType;
  /** The workspace the event is about; null for partner-only events about the partner itself. */
  workspace_id: string | null;
  /** The partner owning that workspace (or receiving the partner-only event), so fan-out reaches it too. */
  partner_id: string | null;
  data: Record<string, unknown>;
  created_at: Date;
  /** Null until the outbox relay has published the row to JetStream. */
  published_at: Date | null;
}

export interface NewEvent {
  type: EventType;
  workspaceId: string | null;
  partnerId: string | null;
  data: Record<string, unknown>;
}

/** The `events` collection: the outbox the relay publishes from, and the log GET /events reads. */
export class EventStore {
  readonly collection: Collection<EventDoc>;
  constructor(db: Db) {
    this.collection = db.collection<EventDoc>('events');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      // The relay's scan: only unpublished rows, oldest first.
      { key: { published_at: 1, created_at: 1, _id: 1 }, name: 'outbox' },
      { key: { workspace_id: 1, created_at: -1, _id: -1 }, name: 'workspace_log' },
      { key: { partner_id: 1, created_at: -1, _id: -1 }, name: 'partner_log' },
    ]);
  }

  /** Writes an event row, inside the caller's transaction when it passes its session. */
  async append(event: NewEvent, session?: ClientSession, now = new Date()): Promise<EventDoc> {
    const doc = eventDoc(event, now);
    await this.collection.insertOne(doc, session ? { session } : {});
    return doc;
  }

  /** Writes the event rows of a batch in one insert, inside the caller's transaction when it passes its session. */
  async appendMany(events: readonly NewEvent[], session?: ClientSession, now = new Date()): Promise<EventDoc[]> {
    const docs = events.map((event) => eventDoc(event, now));
    if (docs.length > 0) await this.collection.insertMany(docs, session ? { session } : {});
    return docs;
  }

  /**
   * The log of one tenant, newest first by (created_at, _id). A partner sees its own events and those of its
   * client workspaces (their rows carry the partner id).
   */
  page(query: { tenant: { workspaceId: string } | { partnerId: string }; type?: EventType; after: { created_at: Date; id: string } | null; limit: number }): Promise<EventDoc[]> {
    const and: Filter<EventDoc>[] = ['workspaceId' in query.tenant ? { workspace_id: query.tenant.workspaceId } : { partner_id: query.tenant.partnerId }];
    if (query.type) and.push({ type: query.type });
    return newestFirst(this.collection, and, query.after, query.limit);
  }

  unpublished(limit: number): Promise<EventDoc[]> {
    return this.collection.find({ published_at: null }).sort({ created_at: 1, _id: 1 }).limit(limit).toArray();
  }

  /** When the oldest row still waiting for the relay was written; null when the outbox is empty. */
  async oldestUnpublished(): Promise<Date | null> {
    const [oldest] = await this.collection.find({ published_at: null }, { projection: { created_at: 1 } }).sort({ created_at: 1, _id: 1 }).limit(1).toArray();
    return oldest?.created_at ?? null;
  }

  async markPublished(ids: string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.collection.updateMany({ _id: { $in: ids }, published_at: null }, { $set: { published_at: at } });
  }
}

/** The outbox row of a new event: unpublished until the relay has handed it to JetStream. */
function eventDoc(event: NewEvent, now: Date): EventDoc {
  return {
    _id: newId('evt'),
    type: event.type,
    workspace_id: event.workspaceId,
    partner_id: event.partnerId,
    data: event.data,
    created_at: now,
    published_at: null,
  };
}
