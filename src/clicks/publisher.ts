// The redirect answers first and records the click afterwards (DESIGN: the redirect never waits to record a click).
// `record` only appends to an in-memory queue; a pump scheduled once per event-loop turn serialises and publishes
// the queued clicks to JetStream, several in flight, and keeps every click until its ack. While NATS is away the
// queue holds up to `bufferMax` clicks; beyond that the oldest waiting ones go to the spool on local disk
// (click-spool.ts) and come back once NATS takes clicks again. Only with no spool, or a full one, are clicks dropped:
// counted, logged (at most every 10 s) and alerted on (LinkplaneClicksDropped).
import { hash } from 'node:crypto';
import { createInbox, headers } from '@nats-io/transport-node';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import type { ClickRecord } from '../visitor/click-record.ts';
import { encodeClicks } from './click-wire.ts';
import type { ClickSpool, SpoolSegment } from './click-spool.ts';

export interface ClickPublisherOptions {
  nats: Nats;
  logger: Logger;
  registry: Registry;
  /** config.redirect.clickBufferMax: clicks held (waiting or in flight) before the oldest are dropped. */
  bufferMax: number;
  /** Messages awaiting their ack at once. */
  maxInFlight?: number;
  /** Clicks per message at most (clicks of one workspace queued together travel as one JSON array). */
  maxBatch?: number;
  /** How long the first click of a batch waits for others (0: publish on the next event-loop turn). */
  lingerMs?: number;
  /** How long one publish waits for its ack before the click goes back to the queue. */
  ackTimeoutMs?: number;
  /** Where clicks beyond `bufferMax` wait while NATS is unreachable; none: they are dropped. */
  spool?: ClickSpool | null;
}

const DROP_LOG_INTERVAL_MS = 10_000;
/** After the spool refused a segment (full, or the disk failed), it is not tried again for this long. */
const SPOOL_PAUSE_MS = 1000;

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2000;

/** A FIFO with O(1) push, shift and unshift-after-shift: an array and a moving head, compacted now and then. */
class Queue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Puts an item back at the front (a failed publish is older than anything queued after it). */
  unshift(item: T): void {
    if (this.head > 0) this.items[--this.head] = item;
    else this.items.unshift(item);
  }
}

export class ClickPublisher {
  private readonly o: ClickPublisherOptions;
  private readonly maxInFlight: number;
  private readonly ackTimeoutMs: number;
  private readonly queue = new Queue<ClickRecord>();
  private readonly maxBatch: number;
  private readonly lingerMs: number;
  /** Clicks in messages awaiting their ack. */
  private inFlight = 0;
  private messagesInFlight = 0;
  private scheduled = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryMs = RETRY_MIN_MS;
  private failing = false;
  private closed = false;
  private readonly idleWaiters = new Set<() => void>();
  /** Publishes awaiting their ack, by sequence, in send order. */
  private readonly awaiting = new Map<number, { clicks: ClickRecord[]; deadline: number }>();
  private seq = 0;
  private replyPrefix: string | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private readonly failures: Counter;
  private readonly dropped: Counter;
  private readonly published: Counter;
  private readonly spilled: Counter;
  private readonly spool: ClickSpool | null;
  /** Clicks sent before whose ack failed or never came: JetStream may hold them already (see messageId). */
  private readonly sentBefore = new WeakSet<ClickRecord>();
  /** Replayed clicks and the segment each came from, with the count of its clicks still in our hands. */
  private readonly fromSegment = new WeakMap<ClickRecord, { segment: SpoolSegment; left: number }>();
  private spoolPausedUntil = 0;
  private droppedUnlogged = 0;
  private lastDropLog = 0;

  constructor(options: ClickPublisherOptions) {
    this.o = options;
    this.maxInFlight = options.maxInFlight ?? 64;
    this.maxBatch = options.maxBatch ?? 256;
    this.lingerMs = options.lingerMs ?? 0;
    this.ackTimeoutMs = options.ackTimeoutMs ?? 2000;
    const registers = [options.registry];
    this.failures = new Counter({ name: 'linkplane_click_publish_failures_total', help: 'Click publishes to JetStream that failed (the click is retried)', registers });
    this.dropped = new Counter({ name: 'linkplane_clicks_dropped_total', help: 'Clicks dropped because the buffer was full while NATS was unreachable', registers });
    this.published = new Counter({ name: 'linkplane_clicks_published_total', help: 'Clicks acknowledged by JetStream', registers });
    this.spilled = new Counter({ name: 'linkplane_clicks_spilled_total', help: 'Clicks written to the local spool because the buffer was full while NATS was unreachable', registers });
    this.spool = options.spool ?? null;
    const spool = this.spool;
    new Gauge({
      name: 'linkplane_click_spool_bytes',
      help: 'Bytes of clicks waiting in the local spool for NATS',
      registers,
      collect() {
        this.set(spool?.bytes() ?? 0);
      },
    });
    new Gauge({ name: 'linkplane_click_spool_max_bytes', help: 'The spool limit (CLICK_SPOOL_MAX_MB); 0: no spool', registers }).set(spool?.maxBytes ?? 0);
    const depth = () => this.depth();
    new Gauge({
      name: 'linkplane_click_buffer_depth',
      help: 'Clicks held in memory: waiting to be published or awaiting their ack',
      registers,
      collect() {
        this.set(depth());
      },
    });
    // Segments an earlier run left behind are published as soon as NATS takes them.
    if (this.spool !== null && this.spool.pending() > 0) this.schedule();
  }

  /** Queues a click: synchronous, never throws, never waits. */
  record(click: ClickRecord): void {
    if (this.closed) {
      this.drop([click]);
      return;
    }
    if (this.depth() >= this.o.bufferMax && this.queue.length > 0) this.spillWaiting();
    if (this.depth() >= this.o.bufferMax) {
      // The oldest waiting click makes room; when every held click is in flight, the new one is the one dropped.
      if (this.queue.length === 0) {
        this.drop([click]);
        return;
      }
      this.drop([this.queue.shift()!]);
    }
    this.queue.push(click);
    this.schedule();
  }

  /** Clicks held: waiting plus in flight. */
  depth(): number {
    return this.queue.length + this.inFlight;
  }

  /**
   * Graceful shutdown: publishes what is held, waiting at most `timeoutMs`; later `record` calls are dropped.
   * Resolves with the number of clicks that could not be published in time.
   */
  async flush(timeoutMs: number): Promise<number> {
    this.closed = true;
    if (this.depth() > 0) {
      this.pump();
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.idleWaiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        this.idleWaiters.add(done);
      });
    }
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    // What NATS did not take in time waits in the spool for the next start (clicks in flight may also have been
    // stored: the ingestion keeps one of each id).
    if (this.spool && this.depth() > 0) {
      const held: ClickRecord[] = [];
      for (let click = this.queue.shift(); click !== undefined; click = this.queue.shift()) held.push(click);
      for (const entry of this.awaiting.values()) held.push(...entry.clicks);
      if (this.spoolAppend(held)) {
        this.awaiting.clear();
        this.inFlight = 0;
        this.messagesInFlight = 0;
      } else {
        for (const click of held) this.queue.push(click);
      }
    }
    if (this.droppedUnlogged > 0) this.logDropped(true);
    return this.depth();
  }

  /** Moves every waiting click to the spool (one segment); false when there is no spool or it refused them. */
  private spillWaiting(): boolean {
    if (this.spool === null || Date.now() < this.spoolPausedUntil) return false;
    const waiting: ClickRecord[] = [];
    for (let click = this.queue.shift(); click !== undefined; click = this.queue.shift()) waiting.push(click);
    if (this.spoolAppend(waiting)) return true;
    for (const click of waiting) this.queue.push(click);
    return false;
  }

  private spoolAppend(clicks: ClickRecord[]): boolean {
    if (this.spool === null || clicks.length === 0) return clicks.length === 0;
    if (!this.spool.append(clicks)) {
      this.spoolPausedUntil = Date.now() + SPOOL_PAUSE_MS;
      return false;
    }
    this.spilled.inc(clicks.length);
    this.o.logger.warn({ clicks: clicks.length, spool_bytes: this.spool.bytes(), spool_dir: this.spool.dir }, 'click buffer full while NATS is unreachable; clicks written to the spool');
    // Replayed clicks spooled again now live in the new segment: the old one no longer waits for them.
    this.release(clicks);
    return true;
  }

  /** Reads spooled segments back into the queue while it has room (and, while publishes fail, one at a time). */
  private refill(): void {
    const spool = this.spool;
    if (spool === null || this.closed) return;
    while (spool.pending() > 0 && this.depth() < this.o.bufferMax / 2 && (!this.failing || this.depth() === 0)) {
      const next = spool.next();
      if (next === null) return;
      const holder = { segment: next.segment, left: next.clicks.length };
      for (const click of next.clicks) {
        this.fromSegment.set(click, holder);
        this.queue.push(click);
      }
      if (this.failing) return;
    }
  }

  /** The clicks left our hands (acknowledged, dropped or spooled anew): a segment whose clicks all did is deleted. */
  private release(clicks: readonly ClickRecord[]): void {
    if (this.spool === null) return;
    for (const click of clicks) {
      const holder = this.fromSegment.get(click);
      if (holder === undefined) continue;
      this.fromSegment.delete(click);
      if (--holder.left === 0) this.spool.release(holder.segment);
    }
  }

  private drop(clicks: ClickRecord[]): void {
    this.dropped.inc(clicks.length);
    this.release(clicks);
    this.droppedUnlogged += clicks.length;
    if (Date.now() - this.lastDropLog >= DROP_LOG_INTERVAL_MS) this.logDropped(false);
  }

  /** One line per 10 s at most, whatever the drop rate: how many, and why. */
  private logDropped(final: boolean): void {
    this.lastDropLog = Date.now();
    this.o.logger.error(
      { clicks: this.droppedUnlogged, buffer_max: this.o.bufferMax, spool_bytes: this.spool?.bytes() ?? null, spool_max_bytes: this.spool?.maxBytes ?? null },
      final
        ? 'clicks dropped at shutdown or since the last report'
        : this.spool
          ? 'clicks dropped: the buffer and the spool are full while NATS is unreachable'
          : 'clicks dropped: the buffer is full while NATS is unreachable and no spool is configured (CLICK_SPOOL_DIR)',
    );
    this.droppedUnlogged = 0;
  }

  private schedule(): void {
    if (this.scheduled || this.retryTimer) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.pump();
    };
    // Clicks gather for `lingerMs` (a full batch goes at once): fewer, larger messages cost the NATS server, which
    // shares the machine's cores with the redirect, far less per click.
    if (this.lingerMs > 0 && this.queue.length < this.maxBatch) setTimeout(run, this.lingerMs).unref();
    else setImmediate(run);
  }

  private pump(): void {
    // A closed connection (after shutdown) never comes back: what is left stays counted in depth().
    if (this.retryTimer || this.o.nats.nc.isClosed()) return;
    if (!this.o.nats.isConnected()) {
      if (this.queue.length > 0 || (this.spool?.pending() ?? 0) > 0) this.retryLater();
      return;
    }
    this.refill();
    // A failed send arms the retry timer: stop there rather than spin on the clicks it put back.
    while (this.retryTimer === null && this.messagesInFlight < this.maxInFlight && this.queue.length > 0) {
      // The clicks queued now, grouped by workspace (the subject), one message per group: at thousands of clicks
      // a second, a message per click would cost more than the redirects themselves.
      const groups = new Map<string, ClickRecord[]>();
      for (let n = 0; n < this.maxBatch && this.queue.length > 0; n++) {
        const click = this.queue.shift()!;
        const group = groups.get(click.workspace_id);
        if (group) group.push(click);
        else groups.set(click.workspace_id, [click]);
      }
      for (const group of groups.values()) this.send(group);
    }
  }

  private send(clicks: ClickRecord[]): void {
    this.inFlight += clicks.length;
    this.messagesInFlight++;
    const seq = ++this.seq;
    this.awaiting.set(seq, { clicks, deadline: Date.now() + this.ackTimeoutMs });
    const first = clicks[0]!;
    try {
      const h = headers();
      // A click from the spool may have been sent by an earlier process (in flight at its shutdown).
      h.set('Nats-Msg-Id', messageId(clicks, this.sentBefore.has(first) || this.fromSegment.has(first)));
      this.o.nats.nc.publish(this.o.nats.subjects.click(first.workspace_id), encodeClicks(first.workspace_id, clicks), {
        reply: `${this.inbox()}.${seq}`,
        headers: h,
      });
    } catch (error) {
      if (this.o.nats.nc.isClosed()) {
        this.settle(seq, error instanceof Error ? error : new Error(String(error)));
        return;
      }
      // Refused before reaching the wire (a subject NATS does not accept): no retry can succeed, and retrying it
      // at the head of the queue would hold back every click behind it.
      this.awaiting.delete(seq);
      this.inFlight -= clicks.length;
      this.messagesInFlight--;
      this.drop(clicks);
      this.o.logger.error({ err: error, click_id: first.id, workspace_id: first.workspace_id }, 'clicks cannot be published; dropped');
      this.settled();
      return;
    }
    if (this.sweepTimer === null) {
      this.sweepTimer = setInterval(() => this.sweep(), Math.max(50, Math.min(500, this.ackTimeoutMs / 4)));
      this.sweepTimer.unref();
    }
  }

  /**
   * The subject JetStream answers on: one subscription for every publish, instead of a request (with its own
   * timer, inbox and promise) per click. nats.js re-subscribes it after a reconnect.
   */
  private inbox(): string {
    if (this.replyPrefix === null) {
      this.replyPrefix = createInbox();
      this.o.nats.nc.subscribe(`${this.replyPrefix}.*`, {
        callback: (error, msg) => {
          if (error) return;
          const seq = Number(msg.subject.slice(this.replyPrefix!.length + 1));
          this.settle(seq, ackError(msg.data, msg.headers?.code));
        },
      });
    }
    return this.replyPrefix;
  }

  /** Publishes whose ack has not come within ackTimeoutMs fail (and are retried); the map is in send order. */
  private sweep(): void {
    const now = Date.now();
    for (const [seq, entry] of this.awaiting) {
      if (entry.deadline > now) break;
      this.settle(seq, new Error(`no JetStream ack within ${this.ackTimeoutMs} ms`));
    }
    if (this.awaiting.size === 0 && this.sweepTimer) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = null;
    }
  }

  private settle(seq: number, error: Error | null): void {
    const entry = this.awaiting.get(seq);
    if (!entry) return;
    this.awaiting.delete(seq);
    this.inFlight -= entry.clicks.length;
    this.messagesInFlight--;
    if (error === null) {
      this.published.inc(entry.clicks.length);
      this.release(entry.clicks);
      if (this.failing) this.o.logger.info('click publishing recovered');
      this.failing = false;
      this.retryMs = RETRY_MIN_MS;
    } else {
      this.failures.inc();
      for (const click of entry.clicks) this.sentBefore.add(click);
      if (!this.failing) this.o.logger.warn({ err: error }, 'click publish failed; clicks are buffered and retried');
      this.failing = true;
      // Back to the front, in order, unless the buffer filled meanwhile: then the oldest of them are spooled (or
      // dropped without a spool).
      const overflow: ClickRecord[] = [];
      for (let i = entry.clicks.length - 1; i >= 0; i--) {
        if (this.depth() < this.o.bufferMax) this.queue.unshift(entry.clicks[i]!);
        else overflow.push(entry.clicks[i]!);
      }
      if (overflow.length > 0 && !this.spoolAppend(overflow.reverse())) this.drop(overflow);
      this.retryLater();
    }
    this.settled();
  }

  private settled(): void {
    if (this.depth() === 0 && (this.spool?.pending() ?? 0) > 0 && !this.closed) {
      this.schedule();
      return;
    }
    if (this.depth() === 0) {
      for (const done of [...this.idleWaiters]) done();
      return;
    }
    if (this.queue.length > 0) this.schedule();
  }

  private retryLater(): void {
    if (this.retryTimer) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.pump();
    }, delay);
    this.retryTimer.unref();
  }
}

/**
 * The stream drops a second message with the same id within its duplicate window, answering it as stored: right for
 * a retry of the same batch after a lost ack, a loss for any other. A failed batch goes back to the queue and may be
 * re-formed with other clicks (failed batches return in another order, new clicks join them), so a batch whose first
 * click was sent before is named by every click it carries: a re-formed batch is a new message, and a click it
 * shares with one already stored is kept once by the ingestion, keyed by click id. A batch whose first click was
 * never sent cannot share its first click with any message sent before: its first click and count name it, without
 * the cost of hashing on every message.
 */
function messageId(clicks: readonly ClickRecord[], firstSentBefore: boolean): string {
  const first = clicks[0]!;
  if (clicks.length === 1) return first.id;
  if (!firstSentBefore) return `${first.id}+${clicks.length}`;
  let ids = first.id;
  for (let i = 1; i < clicks.length; i++) ids += ',' + clicks[i]!.id;
  return `${first.id}+${clicks.length}.${hash('sha1', ids, 'base64url')}`;
}

const decoder = new TextDecoder();

/** Null for a PubAck; an error for a JetStream error answer or a status (503: no stream listens on the subject). */
function ackError(data: Uint8Array, status: number | undefined): Error | null {
  if (data.length === 0) return new Error(status === 503 ? 'no stream for the click subject (no responders)' : `JetStream answered status ${status ?? 'unknown'}`);
  let ack: { stream?: unknown; error?: { description?: string } };
  try {
    ack = JSON.parse(decoder.decode(data)) as typeof ack;
  } catch {
    return new Error('unreadable JetStream ack');
  }
  if (ack.error) return new Error(`JetStream refused the click: ${ack.error.description ?? 'unknown error'}`);
  return typeof ack.stream === 'string' ? null : new Error('unexpected JetStream ack');
}
