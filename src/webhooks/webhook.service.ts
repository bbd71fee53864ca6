import { newId } from '../platform/ids.ts';
import { NotFoundError, QuotaExceededError, ValidationError } from '../platform/errors.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import { PARTNER_ONLY_EVENTS, STREAMED_EVENTS, type EventType } from '../events/event-types.ts';
import { decodeTimePosition, pageOf, timePosition, type Pagination } from '../http/cursor.ts';
import { assertPublicTarget, type TargetOptions } from '../platform/outbound/ssrf.ts';
import { newSigningSecret, type SecretBox } from './secret-box.ts';
import { schemeOf, type WebhookChanges, type WebhookDoc, type WebhookStore, type WebhookTenant } from './webhook.store.ts';
import type { WebhookDeliveryDoc, WebhookDeliveryStore } from './delivery.store.ts';
import {
  MAX_ENDPOINTS_PER_TENANT,
  type Webhook,
  type WebhookCreate,
  type WebhookDelivery,
  type WebhookDeliveryListQuery,
  type SignatureScheme,
  type WebhookUpdate,
  type WebhookUpdated,
  type WebhookWithSecret,
} from './webhook.schemas.ts';

export interface WebhookServiceDeps {
  webhooks: WebhookStore;
  deliveries: WebhookDeliveryStore;
  box: SecretBox;
  /** SSRF policy: whether private targets are allowed, and the resolver. */
  targets: TargetOptions;
  /** How long the previous secret keeps signing after a rotation. */
  secretGraceHours: number;
  /** Told of every change to an endpoint, so workers caching it (delivery.ts) drop their copy at once. */
  bus?: CacheBus | null;
  now?: () => Date;
}

const PARTNER_ONLY: ReadonlySet<string> = new Set(PARTNER_ONLY_EVENTS);
const WORKSPACE_ONLY: ReadonlySet<string> = new Set(STREAMED_EVENTS);

/** The endpoint belongs to whoever holds the key: the workspace, or the partner itself. */
export function webhookTenantOf(principal: Principal): WebhookTenant {
  return principal.kind === 'workspace' ? { kind: 'workspace', id: principal.workspace._id } : { kind: 'partner', id: principal.partner._id };
}

export class WebhookService {
  private readonly d: WebhookServiceDeps;
  private readonly now: () => Date;
  constructor(deps: WebhookServiceDeps) {
    this.d = deps;
    this.now = deps.now ?? (() => new Date());
  }

  async create(tenant: WebhookTenant, input: WebhookCreate): Promise<WebhookWithSecret> {
    checkEvents(tenant, input.events);
    await assertPublicTarget(input.url, this.d.targets);
    // Checked before writing for a clean refusal, and again after: two concurrent creates at 19 cannot both stay.
    if ((await this.d.webhooks.count(tenant)) >= MAX_ENDPOINTS_PER_TENANT) throw new QuotaExceededError('webhook endpoints', MAX_ENDPOINTS_PER_TENANT);
    const scheme = input.signature_scheme ?? 'linkplane';
    const secret = newSigningSecret(scheme);
    const doc = newEndpointDoc(tenant, { url: input.url, events: input.events, name: input.name ?? null, signature_scheme: scheme }, secret, this.d.box, this.now());
    const id = doc._id;
    await this.d.webhooks.insert(doc);
    if ((await this.d.webhooks.count(tenant)) > MAX_ENDPOINTS_PER_TENANT) {
      await this.d.webhooks.delete(tenant, id);
      throw new QuotaExceededError('webhook endpoints', MAX_ENDPOINTS_PER_TENANT);
    }
    // The click streamers remember which endpoints of a workspace want clicks: a new one is announced to them.
    if (input.events.some((type) => WORKSPACE_ONLY.has(type))) await this.changed(id);
    return { ...this.view(doc), secret };
  }

  async list(tenant: WebhookTenant): Promise<{ data: Webhook[]; pagination: { next_cursor: null; has_more: false } }> {
    const docs = await this.d.webhooks.list(tenant);
    return { data: docs.map((doc) => this.view(doc)), pagination: { next_cursor: null, has_more: false } };
  }

  async get(tenant: WebhookTenant, id: string): Promise<Webhook> {
    return this.view(await this.find(tenant, id));
  }

  async update(tenant: WebhookTenant, id: string, patch: WebhookUpdate): Promise<WebhookUpdated> {
    const existing = await this.find(tenant, id);
    if (patch.events) checkEvents(tenant, patch.events);
    if (patch.url !== undefined) await assertPublicTarget(patch.url, this.d.targets);
    const changes: WebhookChanges = {
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.events !== undefined ? { events: patch.events } : {}),
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      // Re-enabling starts a clean slate; events missed while failing are not replayed (spec 3).
      ...(patch.status === 'active' ? { status: 'active' as const, failure_streak: 0 } : {}),
    };
    // Each scheme has its own secret format, so a change of scheme comes with a new secret, returned once. The old
    // one stops at once: a receiver switching scheme switches its verification code, and its secret, with it.
    const scheme = patch.signature_scheme !== undefined && patch.signature_scheme !== schemeOf(existing) ? patch.signature_scheme : null;
    const secret = scheme === null ? null : newSigningSecret(scheme);
    const now = this.now();
    if (scheme !== null && secret !== null) {
      Object.assign(changes, {
        signature_scheme: scheme,
        secret_enc: this.d.box.seal(secret, id),
        previous_secret_enc: null,
        previous_secret_expires_at: null,
        secret_rotated_at: now,
      } satisfies WebhookChanges);
    }
    const updated = await this.d.webhooks.update(tenant, id, { ...changes, updated_at: now });
    if (!updated) throw new NotFoundError('webhook endpoint');
    await this.changed(id);
    return secret === null ? this.view(updated) : { ...this.view(updated), secret };
  }

  async delete(tenant: WebhookTenant, id: string): Promise<void> {
    if (!(await this.d.webhooks.delete(tenant, id))) throw new NotFoundError('webhook endpoint');
    await this.changed(id);
    await this.d.deliveries.deleteForEndpoint(tenant, id);
  }

  /**
   * A new secret, returned once. The current one becomes the previous one and keeps signing for the grace period,
   * so receivers can switch without dropping deliveries; a second rotation within it retires the older secret.
   */
  async rotateSecret(tenant: WebhookTenant, id: string): Promise<WebhookWithSecret> {
    const existing = await this.find(tenant, id);
    // In the endpoint's scheme's format; the previous secret is of the same scheme, so both sign during the grace.
    const secret = newSigningSecret(schemeOf(existing));
    const now = this.now();
    // A secret sealed under a former SECRET_KEY cannot sign any more: rotating is how an operator recovers from
    // that, so such a secret is dropped rather than carried into the grace period.
    const grace = this.d.secretGraceHours > 0 && this.opens(existing);
    const updated = await this.d.webhooks.update(tenant, id, {
      secret_enc: this.d.box.seal(secret, id),
      previous_secret_enc: grace ? existing.secret_enc : null,
      previous_secret_expires_at: grace ? new Date(now.getTime() + this.d.secretGraceHours * 3_600_000) : null,
      secret_rotated_at: now,
      updated_at: now,
    });
    if (!updated) throw new NotFoundError('webhook endpoint');
    await this.changed(id);
    return { ...this.view(updated), secret };
  }

  /** Broadcast before the answer: a delivery that starts after it sees the change (status, URL, secret, deletion). */
  private async changed(id: string): Promise<void> {
    await this.d.bus?.publish({ kind: 'webhook', id });
  }

  /** The secrets a delivery is signed with now: the current one, then the previous one during its grace period. */
  signingSecrets(doc: WebhookDoc): string[] {
    const secrets = [this.d.box.open(doc.secret_enc, doc._id)];
    if (doc.previous_secret_enc !== null && this.previousIsLive(doc)) secrets.push(this.d.box.open(doc.previous_secret_enc, doc._id));
    return secrets;
  }

  async deliveries(tenant: WebhookTenant, id: string, query: WebhookDeliveryListQuery): Promise<{ data: WebhookDelivery[]; pagination: Pagination }> {
    await this.find(tenant, id);
    const rows = await this.d.deliveries.page({ tenant, webhookId: id, after: decodeTimePosition(query.cursor), limit: query.limit + 1 });
    const { page, pagination } = pageOf(rows, query.limit, timePosition);
    return { data: page.map(deliveryView), pagination };
  }

  private async find(tenant: WebhookTenant, id: string): Promise<WebhookDoc> {
    const doc = await this.d.webhooks.findById(tenant, id);
    if (!doc) throw new NotFoundError('webhook endpoint');
    return doc;
  }

  private opens(doc: WebhookDoc): boolean {
    try {
      this.d.box.open(doc.secret_enc, doc._id);
      return true;
    } catch {
      return false;
    }
  }

  private previousIsLive(doc: WebhookDoc): boolean {
    return doc.previous_secret_expires_at !== null && doc.previous_secret_expires_at > this.now();
  }

  private view(doc: WebhookDoc): Webhook {
    return {
      id: doc._id,
      url: doc.url,
      events: doc.events,
      name: doc.name,
      status: doc.status,
      signature_scheme: schemeOf(doc),
      created_at: doc.created_at.toISOString(),
      updated_at: doc.updated_at.toISOString(),
      secret_rotated_at: doc.secret_rotated_at?.toISOString() ?? null,
      previous_secret_expires_at: this.previousIsLive(doc) ? doc.previous_secret_expires_at!.toISOString() : null,
    };
  }
}

/**
 * Partner-only event types concern a partner's clients and billing; a workspace endpoint cannot subscribe to them.
 * Streamed clicks (`link.clicked`) are a workspace's own: a partner endpoint cannot subscribe to its clients' clicks.
 */
function checkEvents(tenant: WebhookTenant, events: readonly EventType[]): void {
  const refused = events.flatMap((type, i) => {
    if (tenant.kind === 'workspace' && PARTNER_ONLY.has(type)) return [{ path: `events[${i}]`, message: `"${type}" is available to partner endpoints only` }];
    if (tenant.kind === 'partner' && WORKSPACE_ONLY.has(type)) return [{ path: `events[${i}]`, message: `"${type}" is available to workspace endpoints only` }];
    return [];
  });
  if (refused.length > 0) throw new ValidationError(refused);
}

function deliveryView(doc: WebhookDeliveryDoc): WebhookDelivery {
  return {
    id: doc.delivery_id,
    event_id: doc.event_id,
    event_type: doc.event_type,
    attempt: doc.attempt,
    created_at: doc.created_at.toISOString(),
    request: doc.request,
    response: doc.response,
    duration_ms: doc.duration_ms,
    outcome: doc.outcome,
    next_retry_at: doc.next_retry_at?.toISOString() ?? null,
  };
}

/** A new, active endpoint owned by `tenant`, its signing secret sealed under the endpoint id. */
export function newEndpointDoc(
  tenant: WebhookTenant,
  fields: { url: string; events: EventType[]; name: string | null; signature_scheme?: SignatureScheme },
  secret: string,
  box: SecretBox,
  now: Date,
): WebhookDoc {
  const id = newId('wh');
  return {
    _id: id,
    tenant_kind: tenant.kind,
    workspace_id: tenant.kind === 'workspace' ? tenant.id : null,
    partner_id: tenant.kind === 'partner' ? tenant.id : null,
    ...fields,
    status: 'active',
    secret_enc: box.seal(secret, id),
    previous_secret_enc: null,
    previous_secret_expires_at: null,
    failure_streak: 0,
    created_at: now,
    updated_at: now,
    secret_rotated_at: null,
  };
}
