// The live view of a workspace's clicks (GET /v1/clicks/stream): Server-Sent Events read from the CLICKS stream
// itself through an ordered JetStream consumer on the workspace's subject. An event's id is the stream sequence of
// the message that carried the click and the click's place in it (`<seq>-<index>`), so a client reconnecting with
// `Last-Event-ID` resumes right after the last click it got: the consumer starts at that sequence and skips what was
// sent. The CLICKS stream keeps clicks for three days; a resume from further back starts at its oldest click.
import { PassThrough } from 'node:stream';
import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { RateLimitedError, ValidationError } from '../platform/errors.ts';
import { decodeClicks } from './click-wire.ts';
import { clickEventOf } from './click-event.ts';

export interface ClickStreamOptions {
  nats: Nats;
  logger: Logger;
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs?: number;
  /** Streams open at once per workspace, in this process; one more answers 429. */
  maxPerWorkspace?: number;
}

/** Where a stream starts: after click `index` of the message at stream sequence `seq`, or with the next click. */
export interface ResumePoint {
  seq: number;
  index: number;
}

const EVENT_ID = /^(\d{1,15})-(\d{1,6})$/;

/** `<seq>-<index>` as sent in `id:` lines; a malformed id is refused (422 naming where it came from). */
export function parseEventId(value: string | undefined, where: string): ResumePoint | null {
  if (value === undefined || value === '') return null;
  const match = EVENT_ID.exec(value.trim());
  if (!match || Number(match[1]) < 1) throw new ValidationError([{ path: where, message: 'is not an event id of this stream (`<sequence>-<index>`)' }]);
  return { seq: Number(match[1]), index: Number(match[2]) };
}

export interface OpenStream {
  /** The response body: SSE text. */
  body: PassThrough;
  /** Ends the stream (the client went away, or the process stops). */
  close: () => void;
}

export class ClickStreams {
  private readonly o: ClickStreamOptions;
  private readonly open = new Set<OpenStream>();
  private readonly perWorkspace = new Map<string, number>();

  constructor(options: ClickStreamOptions) {
    this.o = options;
  }

  /** Starts streaming the workspace's clicks (of one link when `linkId` is given) from `from`, or from now. */
  async start(workspaceId: string, linkId: string | null, from: ResumePoint | null): Promise<OpenStream> {
    const count = this.perWorkspace.get(workspaceId) ?? 0;
    if (count >= (this.o.maxPerWorkspace ?? 20)) throw new RateLimitedError(5);
    const { nats } = this.o;
    // Ordered consumers are ephemeral, flow-controlled and recreated by the client library after a gap.
    const consumer = await nats.js.consumers.get(nats.subjects.stream('CLICKS'), {
      filter_subjects: nats.subjects.click(workspaceId),
      ...(from ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from.seq } : { deliver_policy: DeliverPolicy.New }),
      // Milliseconds (the client converts): the server drops the consumer of an api that died without closing it.
      inactive_threshold: 30_000,
    });
    const messages: ConsumerMessages = await consumer.consume({ max_messages: 64 });
    const body = new PassThrough();
    let closed = false;
    const heartbeat = setInterval(() => body.write(': ping\n\n'), this.o.heartbeatMs ?? 15_000);
    heartbeat.unref();
    const stream: OpenStream = {
      body,
      close: () => {
        if (closed) return;
        closed = true;
        clearInterval(heartbeat);
        messages.stop();
        body.end();
        this.open.delete(stream);
        const left = (this.perWorkspace.get(workspaceId) ?? 1) - 1;
        if (left > 0) this.perWorkspace.set(workspaceId, left);
        else this.perWorkspace.delete(workspaceId);
      },
    };
    this.open.add(stream);
    this.perWorkspace.set(workspaceId, count + 1);
    // Sent at once, so the client sees the stream open (and its reconnection delay) before the first click.
    body.write('retry: 2000\n: connected\n\n');
    void (async () => {
      try {
        for await (const msg of messages) {
          const clicks = (() => {
            try {
              return decodeClicks(msg.json<unknown>()) ?? [];
            } catch {
              return [];
            }
          })();
          let chunk = '';
          clicks.forEach((click, index) => {
            if (from && msg.seq === from.seq && index <= from.index) return;
            if (linkId !== null && click.link_id !== linkId) return;
            chunk += `id: ${msg.seq}-${index}\nevent: click\ndata: ${JSON.stringify(clickEventOf(click))}\n\n`;
          });
          // Waiting for the socket to take a chunk is the back-pressure: the consumer is not read meanwhile.
          if (chunk !== '' && !body.write(chunk)) await new Promise<void>((resolve) => body.once('drain', resolve).once('close', resolve));
          if (closed) break;
        }
      } catch (error) {
        if (!closed) this.o.logger.warn({ err: error, workspace_id: workspaceId }, 'click stream ended by an error');
      } finally {
        stream.close();
      }
    })();
    return stream;
  }

  /** Ends every open stream (shutdown: clients reconnect to another replica with their Last-Event-ID). */
  closeAll(): void {
    for (const stream of [...this.open]) stream.close();
  }

  get size(): number {
    return this.open.size;
  }
}
