// The delivery consumer: a durable consumer on DELIVERIES POSTs each message to its endpoint, signed (spec 6.2,
// 6.3), logs every attempt in `webhook_deliveries`, and retries on the configured schedule (spec 6.4). The delay
// is computed from the attempts logged (not JetStream's delivery count, which platform failures raise too) and
// passed to nak: JetStream consumer `backoff` is not used.
import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import type { TargetOptions } from '../platform/outbound/ssrf.ts';
import { outboundAgents, send, type OutboundAgents, type OutboundAnswer, type OutboundError } from '../platform/outbound/outbound.ts';
import { signPayload, SIGNATURE_HEADER } from './signature.ts';
import { standardHeaders } from './standard-signature.ts';
import { schemeOf, type WebhookDoc, type WebhookStore } from './webhook.store.ts';
import type { WebhookDeliveryDoc, WebhookDeliveryStore } from './delivery.store.ts';
import { RESPONSE_BODY_CAP_BYTES } from './webhook.schemas.ts';
import type { DeliveryMessage } from './delivery-message.ts';
import { infraRetryDelayMs } from './fanout.ts';
import { ensureDurable, PullRunner } from '../platform/pull-runner.ts';

export const DELIVERY_DURABLE = 'webhook-delivery';
const USER_AGENT = 'Linkplane-Webhooks/1.0';
const MAX_RESPONSE_HEADERS = 50;

export interface DeliveryOptions {
  nats: Nats;
  webhooks: WebhookStore;
  deliveries: WebhookDeliveryStore;
  /** The secrets to sign with now: current, and previous within its grace (WebhookService.signingSecrets). */
  signingSecrets: (endpoint: WebhookDoc) => string[];
  targets: TargetOptions;
  /** Delay before retry n is retrySchedule[n-1]; its length is the number of retries after the first attempt. */
  retryScheduleMs: readonly number[];
  timeoutMs: number;
  /** JetStream ack_wait: a message held this long without an answer (its worker died) is redelivered. */
  ackWaitMs?: number;
  logger: Logger;
  registry?: Registry;
  concurrency?: number;
  now?: () => Date;
  /**
   * Called once per transition to `failing`, by the worker that won it (the owner's e-mail: EndpointFailingNotifier).
   * Must not throw or block; an exception is logged.
   */
  onEndpointFailing: (endpoint: WebhookDoc) => void;
  /**
   * Endpoint changes (status, URL, secret rotation, deletion) broadcast by the api. With it, endpoints and their
   * opened secrets are cached for `endpointCacheTtlMs` and dropped as soon as a change is announced; without it,
   * every delivery reads its endpoint.
   */
  bus?: CacheBus | null;
  endpointCacheTtlMs?: number;
  /** At most this many deliveries to one endpoint at once, so a slow endpoint cannot hold every slot. */
  perEndpointConcurrency?: number;
}

/** An endpoint as last read, with the secrets it signs with until `expiresAt`. */
interface CachedEndpoint {
  endpoint: WebhookDoc;
  secrets: string[];
  expiresAt: number;
}

interface AttemptResult {
  response: { status: number | null; headers: Record<string, string>; body: string };
  succeeded: boolean;
  /** Why the attempt failed, for the log line; null on success. */
  error: string | null;
}

const DELIVERY_CONCURRENCY = 32;
/** Deliveries to one endpoint at once, by default: a quarter of the slots. */
export const ENDPOINT_CONCURRENCY = 8;
const ENDPOINT_CACHE_TTL_MS = 5000;
/** A message for an endpoint already at its concurrency bound goes back for this long (no attempt is spent). */
const ENDPOINT_BUSY_DELAY_MS = 1000;

export class WebhookDelivery {
  private readonly o: DeliveryOptions;
  private readonly runner: PullRunner;
  private readonly now: () => Date;
  private readonly total: Counter<'outcome' | 'attempt'>;
  private readonly duration: Histogram<'outcome'>;
  /** Every delivery connects through these: each connection to a checked address (outbound.ts). */
  private readonly agents: OutboundAgents;
  private readonly endpoints = new Map<string, CachedEndpoint>();
  private readonly cacheTtlMs: number;
  /** Raised by every invalidation: a read that started before one is not cached (it may be the stale copy). */
  private invalidations = 0;
  private readonly perEndpoint: number;
  /** Deliveries in progress per endpoint id. */
  private readonly busy = new Map<string, number>();

  constructor(options: DeliveryOptions) {
    this.o = options;
    // Connections to an endpoint's origin are kept alive and reused (no new TLS handshake for every event), at most
    // as many as deliveries run at once: many endpoints often share one origin.
    this.agents = outboundAgents(options.targets, { maxSocketsPerOrigin: options.concurrency ?? DELIVERY_CONCURRENCY });
    this.now = options.now ?? (() => new Date());
    const concurrency = options.concurrency ?? DELIVERY_CONCURRENCY;
    this.perEndpoint = Math.min(options.perEndpointConcurrency ?? ENDPOINT_CONCURRENCY, concurrency);
    this.cacheTtlMs = options.bus ? (options.endpointCacheTtlMs ?? ENDPOINT_CACHE_TTL_MS) : 0;
    options.bus?.on((message) => {
      if (message.kind !== 'webhook' && message.kind !== 'all') return;
      this.invalidations++;
      if (message.kind === 'all') this.endpoints.clear();
      else this.endpoints.delete(message.id);
    });
    const registers = options.registry ? [options.registry] : [];
    this.total = new Counter({
      name: 'linkplane_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (succeeded, failed; dropped: endpoint gone or failing) and attempt number',
      labelNames: ['outcome', 'attempt'],
      registers,
    });
    // The first attempt's series exist from the start, so failure ratios read 0 rather than nothing.
    for (const outcome of ['succeeded', 'failed', 'dropped']) this.total.inc({ outcome, attempt: '1' }, 0);
    this.duration = new Histogram({
      name: 'linkplane_webhook_delivery_duration_seconds',
      help: 'Duration of webhook delivery POSTs, until the answer or the timeout',
      labelNames: ['outcome'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.runner = new PullRunner({
      nats: options.nats,
      stream: this.stream,
      durable: DELIVERY_DURABLE,
      concurrency: options.concurrency ?? DELIVERY_CONCURRENCY,
      // Above the POST timeout, so a slow receiver never makes JetStream redeliver a message in progress; a worker
      // killed mid-delivery leaves its message unanswered, and another worker gets it after this wait.
      ackWaitMs: this.ackWaitMs,
      logger: options.logger,
      handle: (msg) => this.handle(msg),
      retryDelayMs: infraRetryDelayMs,
    });
  }

  private get ackWaitMs(): number {
    return this.o.ackWaitMs ?? this.o.timeoutMs + 20_000;
  }

  get stream(): string {
    return this.o.nats.subjects.stream('DELIVERIES');
  }

  async start(): Promise<void> {
    await ensureDurable(this.o.nats, {
      stream: this.stream,
      durable: DELIVERY_DURABLE,
      filterSubject: `${this.o.nats.subjects.prefix}deliveries.>`,
      ackWaitMs: this.ackWaitMs,
      // Unlimited: the handler terms the message after the last retry; a cap here could silently end a delivery.
      maxDeliver: -1,
      deliverPolicy: DeliverPolicy.All,
    });
    this.runner.start();
  }

  async stop(): Promise<void> {
    await this.runner.stop();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private async handle(msg: JsMsg): Promise<void> {
    let message: DeliveryMessage;
    try {
      message = msg.json<DeliveryMessage>();
    } catch (error) {
      this.o.logger.error({ err: error, seq: msg.seq }, 'unreadable delivery message dropped');
      msg.term('unreadable');
      return;
    }
    const cached = await this.endpoint(message.webhook_id);
    // A deleted endpoint, or one that is failing: it receives nothing more (missed events are not replayed).
    if (!cached || cached.endpoint.status !== 'active') {
      this.total.inc({ outcome: 'dropped', attempt: String(msg.info.deliveryCount) });
      msg.ack();
      return;
    }
    const id = cached.endpoint._id;
    const running = this.busy.get(id) ?? 0;
    if (running >= this.perEndpoint) {
      msg.nak(ENDPOINT_BUSY_DELAY_MS);
      return;
    }
    this.busy.set(id, running + 1);
    try {
      await this.deliver(msg, message, cached);
    } finally {
      const left = (this.busy.get(id) ?? 1) - 1;
      if (left > 0) this.busy.set(id, left);
      else this.busy.delete(id);
    }
  }

  /**
   * The endpoint and the secrets it signs with now. From the cache while the api has announced no change to it
   * (and for at most the cache TTL, or until a previous secret's grace ends); read otherwise.
   */
  private async endpoint(id: string): Promise<CachedEndpoint | null> {
    const nowMs = this.now().getTime();
    const hit = this.endpoints.get(id);
    if (hit && hit.expiresAt > nowMs) return hit;
    this.endpoints.delete(id);
    const before = this.invalidations;
    const endpoint = await this.o.webhooks.collection.findOne({ _id: id });
    if (!endpoint) return null;
    // Opened only for an endpoint that will be sent to (a failing one's secrets are not needed).
    const secrets = endpoint.status === 'active' ? this.o.signingSecrets(endpoint) : [];
    let expiresAt = nowMs + this.cacheTtlMs;
    if (endpoint.previous_secret_expires_at) expiresAt = Math.min(expiresAt, endpoint.previous_secret_expires_at.getTime());
    const entry = { endpoint, secrets, expiresAt };
    if (this.cacheTtlMs > 0 && before === this.invalidations) this.endpoints.set(id, entry);
    return entry;
  }

  private async deliver(msg: JsMsg, message: DeliveryMessage, cached: CachedEndpoint): Promise<void> {
    const { endpoint, secrets } = cached;
    // Attempts are the POSTs logged so far, not JetStream's delivery count: a platform failure (this read or the log
    // write failing, NATS away, a worker killed) throws or leaves the message unanswered, it is handed out again,
    // and the receiver's retries are not spent on it. A message handed out for the first time has almost always
    // none logged: it is taken as attempt 1 without a read, and counted after all if that row exists already.
    const guessed = msg.info.deliveryCount === 1;
    let attempt = 1;
    if (!guessed) {
      const logged = await this.o.deliveries.logged(message.delivery_id);
      // Handed out again after it was delivered (its ack was lost, or came after ack_wait on a stalled worker):
      // the receiver has it, so it is acknowledged without a second POST.
      if (logged.succeeded) {
        msg.ack();
        return;
      }
      attempt = logged.attempts + 1;
    }

    const body = JSON.stringify({
      id: message.delivery_id,
      type: message.event.type,
      created_at: new Date(message.event.created_at).toISOString(),
      data: message.event.data,
    });
    // Signed at each attempt, in the endpoint's scheme as it is now: receivers refuse timestamps older than
    // 5 minutes, and retries come hours later.
    const timestamp = Math.floor(this.now().getTime() / 1000);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      'X-Service-Event': message.event.type,
      'X-Service-Delivery': message.delivery_id,
      ...(schemeOf(endpoint) === 'standard'
        ? standardHeaders(message.delivery_id, body, secrets, timestamp)
        : { [SIGNATURE_HEADER]: signPayload(body, secrets, timestamp) }),
    };

    const startedAt = this.now();
    const started = performance.now();
    const result = await this.post(endpoint.url, headers, body);
    const seconds = (performance.now() - started) / 1000;
    const outcome = result.succeeded ? 'succeeded' : 'failed';
    this.duration.observe({ outcome }, seconds);

    const retries = this.o.retryScheduleMs.length;
    // attempt n (1-based) is followed by retry n, due after retryScheduleMs[n-1]; attempt retries+1 is the last.
    const delayFor = (n: number) => (!result.succeeded && n <= retries ? this.o.retryScheduleMs[n - 1]! : null);
    const logFor = (n: number): WebhookDeliveryDoc => {
      const delay = delayFor(n);
      return {
      _id: `${message.delivery_id}.${n}`,
      delivery_id: message.delivery_id,
      webhook_id: endpoint._id,
      tenant_kind: endpoint.tenant_kind,
      workspace_id: endpoint.workspace_id,
      partner_id: endpoint.partner_id,
      event_id: message.event.id,
      event_type: message.event.type,
      attempt: n,
      created_at: startedAt,
      request: { headers, body },
      response: result.response,
      duration_ms: Math.round(seconds * 1000),
      outcome,
      next_retry_at: delay === null ? null : new Date(this.now().getTime() + delay),
      };
    };
    if (!guessed || !(await this.recordFirst(logFor(1)))) {
      // Not a first hand-out, or attempt 1 was logged before (the same delivery published twice): counted.
      if (guessed) attempt = (await this.o.deliveries.attemptsLogged(message.delivery_id)) + 1;
      await this.record(logFor(attempt));
    }
    this.total.inc({ outcome, attempt: String(attempt) });
    const delayMs = delayFor(attempt);

    if (result.succeeded) {
      msg.ack();
      // A running failure streak ends with a success (spec 3); no write when there is none (as last read: the
      // streak only grows when the endpoint turns failing, which is announced and drops the cached copy).
      if (endpoint.failure_streak > 0) {
        await this.o.webhooks.collection.updateOne({ _id: endpoint._id, failure_streak: { $gt: 0 } }, { $set: { failure_streak: 0 } });
        endpoint.failure_streak = 0;
      }
      return;
    }
    const context = { webhook_id: endpoint._id, delivery_id: message.delivery_id, attempt, status: result.response.status, reason: result.error };
    if (delayMs !== null) {
      this.o.logger.info({ ...context, retry_in_ms: delayMs }, 'webhook delivery failed; retry scheduled');
      msg.nak(delayMs);
      return;
    }
    this.o.logger.warn(context, 'webhook delivery failed after its last retry');
    msg.term('retry schedule exhausted');
    await this.markFailing(endpoint._id);
  }

  /** Writes attempt 1's row; false if it exists already. */
  private async recordFirst(doc: WebhookDeliveryDoc): Promise<boolean> {
    try {
      await this.o.deliveries.record(doc);
      return true;
    } catch (error) {
      if ((error as { code?: number }).code !== 11000) throw error;
      return false;
    }
  }

  /** The attempt log row; written once per attempt id, so a redelivered write is harmless. */
  private async record(doc: WebhookDeliveryDoc): Promise<void> {
    try {
      await this.o.deliveries.record(doc);
    } catch (error) {
      if ((error as { code?: number }).code !== 11000) throw error;
    }
  }

  private async markFailing(id: string): Promise<void> {
    const now = this.now();
    const before = await this.o.webhooks.collection.findOneAndUpdate(
      { _id: id },
      { $set: { status: 'failing', updated_at: now }, $inc: { failure_streak: 1 } },
      { returnDocument: 'before' },
    );
    // Every replica stops sending to it now, not when its cached copy expires.
    this.endpoints.delete(id);
    if (this.o.bus) await this.o.bus.publish({ kind: 'webhook', id });
    // Only the worker whose update found the endpoint active made the transition: it alone notifies the owner.
    if (before?.status === 'active') {
      const endpoint: WebhookDoc = { ...before, status: 'failing', failure_streak: before.failure_streak + 1, updated_at: now };
      try {
        this.o.onEndpointFailing(endpoint);
      } catch (error) {
        this.o.logger.error({ err: error, webhook_id: id }, 'onEndpointFailing hook failed');
      }
    }
  }

  /** One POST; never throws: a refused target, a timeout or a network error is a failed attempt. */
  private async post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    let answer: OutboundAnswer;
    try {
      // The target is checked as the connection is made, against the addresses it connects to (outbound.ts).
      answer = await send(this.agents, this.o.targets, { method: 'POST', url, headers, body, timeoutMs: this.o.timeoutMs, maxBodyBytes: RESPONSE_BODY_CAP_BYTES + 4 });
    } catch (error) {
      const e = error as OutboundError;
      const reason = e.kind === 'refused' ? `target refused: ${e.message}` : e.kind === 'timeout' ? e.message : `request failed: ${e.message}`;
      return { response: { status: null, headers: {}, body: '' }, succeeded: false, error: reason };
    }
    const responseHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers).slice(0, MAX_RESPONSE_HEADERS)) responseHeaders[name] = value.slice(0, 1024);
    const succeeded = answer.status >= 200 && answer.status < 300;
    // The store cuts to the cap on a character boundary; a broken tail sequence decodes to U+FFFD and is cut off.
    const text = answer.body.toString('utf8');
    return { response: { status: answer.status, headers: responseHeaders, body: text }, succeeded, error: succeeded ? null : `answered ${answer.status}` };
  }
}
