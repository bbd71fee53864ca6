import type { MongoClient } from 'mongodb';
import { newId } from '../platform/ids.ts';
import { isCurrencyCode } from '../platform/money.ts';
import { ConflictError, isDuplicateKey, NotFoundError, QuotaExceededError, ValidationError, type ErrorDetail } from '../platform/errors.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import { inTransaction } from '../platform/mongo.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import type { KeyService, CreatedKey } from '../tenancy/key.service.ts';
import { keyInfo } from '../keys/key.routes.ts';
import { clientPage, type WorkspaceDoc, type WorkspaceStore } from '../tenancy/workspace.store.ts';
import { CAPABILITIES, planById, PLANS, type Plan } from '../tenancy/plans.ts';
import { decodeCursor, pageOf, type Pagination } from '../http/cursor.ts';
import { ownerEmail } from '../platform/email.ts';
import { displayName } from '../platform/schema.ts';
import {
  DEFAULT_GRACE_PERIOD_DAYS,
  DEFAULT_PLATFORM_PLAN,
  DEFAULT_PROCESSOR_FEE,
  type PartnerDoc,
  type PartnerSettingsChanges,
  type PartnerStore,
} from '../tenancy/partner.store.ts';
import type { PartnerPlanDoc, PartnerPlanStore } from './plan.store.ts';
import type { PartnerPlan, PlanCreate, PlanUpdate } from './plan.schemas.ts';
import { CLIENT_KEY_DEFAULT_SCOPES, type Client, type ClientCreate, type ClientKeyCreate, type ClientUpdate, type PartnerProfile, type PartnerUpdate } from './partner.schemas.ts';
import { initialSubscription, type Trigger } from '../tenancy/subscription.ts';
import type { SubscriptionWriter } from './subscription.service.ts';

/** Plans a partner may keep (a single page, as spec 4.2 says). */
export const MAX_PLANS_PER_PARTNER = 100;

export function clientView(ws: WorkspaceDoc): Client {
  const subscription = ws.subscription ?? initialSubscription(ws.created_at);
  return {
    id: ws._id,
    name: ws.name,
    plan: ws.partner_plan_id ?? null,
    platform_plan: { id: ws.plan_id, name: planById(ws.plan_id)?.name ?? ws.plan_id },
    status: subscription.state,
    subscription: {
      state: subscription.state,
      changed_at: subscription.changed_at.toISOString(),
      past_due_since: subscription.past_due_since?.toISOString() ?? null,
      suspended_reason: subscription.suspended_reason,
      external_subscription_id: subscription.external_subscription_id,
    },
    billing_customer_id: ws.billing_customer_id ?? null,
    metadata: ws.metadata ?? {},
    created_at: ws.created_at.toISOString(),
  };
}

export class BillingCustomerTakenError extends ConflictError {
  constructor(id: string, cause?: unknown) {
    super(`Another client of the partner already has the billing customer id "${id}".`, { cause });
  }
}

export interface PartnerServiceDeps {
  client: MongoClient;
  partners: PartnerStore;
  workspaces: WorkspaceStore;
  plans: PartnerPlanStore;
  subscriptions: SubscriptionWriter;
  keys: KeyService | null;
  box: SecretBox | null;
  bus: CacheBus | null;
  config: { clientQuota: number; platformFeeBps: number; publicApiUrl: string; defaultWorkspaceRatePerMinute: number };
  /** Called after an event row is written, so the outbox relay publishes without waiting for its poll. */
  onEvent?: () => void;
}

/** The ceiling a partner's plans live under: its platform plan, rate limit defaulted. */
export function platformPlanOf(partner: PartnerDoc, defaultRate: number): Plan & { limits: { rate_limit_per_minute: number } } {
  const plan = planById(partner.platform_plan_id ?? DEFAULT_PLATFORM_PLAN) ?? PLANS[DEFAULT_PLATFORM_PLAN]!;
  return { ...plan, limits: { ...plan.limits, rate_limit_per_minute: plan.limits.rate_limit_per_minute ?? defaultRate } };
}

/** A new partner (the CLI and the demo create partners; there is no API for it). */
export async function createPartner(partners: PartnerStore, input: { name: string; ownerEmail?: string | null }): Promise<PartnerDoc> {
  const name = displayName(input.name, 120);
  if (name === null) throw new ValidationError([{ path: 'name', message: 'must be 1 to 120 characters, not all white space' }]);
  const email = ownerEmail(input.ownerEmail);
  const doc: PartnerDoc = { _id: newId('ptr'), name, rate_limit_per_minute: null, owner_email: email, created_at: new Date(), clients_count: 0 };
  await partners.insert(doc);
  return doc;
}

export class PartnerService {
  private readonly d: PartnerServiceDeps;
  constructor(deps: PartnerServiceDeps) {
    this.d = deps;
  }

  // ----- the partner itself -----

  private async partner(partnerId: string): Promise<PartnerDoc> {
    const partner = await this.d.partners.findById(partnerId);
    if (!partner) throw new NotFoundError('partner');
    return partner;
  }

  async profile(partnerId: string): Promise<PartnerProfile> {
    return this.profileOf(await this.partner(partnerId));
  }

  private async profileOf(partner: PartnerDoc): Promise<PartnerProfile> {
    const platform = platformPlanOf(partner, this.d.config.defaultWorkspaceRatePerMinute);
    const count = await this.d.workspaces.collection.countDocuments({ partner_id: partner._id });
    return {
      id: partner._id,
      name: partner.name,
      platform_plan: { id: platform.id, limits: platform.limits, capabilities: [...platform.capabilities] },
      clients: { count, quota: this.quotaOf(partner) },
      platform_fee_bps: this.platformFeeBps(partner),
      suspended_links: partner.suspended_links ?? 'redirect',
      grace_period_days: partner.grace_period_days ?? DEFAULT_GRACE_PERIOD_DAYS,
      processor_fee: partner.processor_fee ?? DEFAULT_PROCESSOR_FEE,
      billing: {
        stripe_ingestion_url: `${this.d.config.publicApiUrl}/v1/billing/stripe/${partner._id}`,
        stripe_endpoint_secret_set: typeof partner.stripe_secret_sealed === 'string',
      },
      created_at: partner.created_at.toISOString(),
    };
  }

  platformFeeBps(partner: PartnerDoc): number {
    return partner.platform_fee_bps ?? this.d.config.platformFeeBps;
  }

  private quotaOf(partner: PartnerDoc): number {
    return partner.client_quota ?? this.d.config.clientQuota;
  }

  /**
   * Settings. A change of `suspended_links` is applied to every inactive client at once and broadcast, so redirect
   * pods answer the new way within the moment the broadcast takes.
   */
  async update(partnerId: string, patch: PartnerUpdate): Promise<PartnerProfile> {
    const changes: PartnerSettingsChanges = { updated_at: new Date() };
    if (patch.suspended_links !== undefined) changes.suspended_links = patch.suspended_links;
    if (patch.grace_period_days !== undefined) changes.grace_period_days = patch.grace_period_days;
    if (patch.processor_fee !== undefined) changes.processor_fee = patch.processor_fee;
    if (patch.stripe_endpoint_secret !== undefined) {
      if (!this.d.box) throw new Error('PartnerService was built without a SecretBox');
      changes.stripe_secret_sealed = patch.stripe_endpoint_secret === null ? null : this.d.box.seal(patch.stripe_endpoint_secret, `partner-billing:${partnerId}`);
    }
    const partner = await this.d.partners.updateSettings(partnerId, changes);
    if (!partner) throw new NotFoundError('partner');
    if (patch.suspended_links !== undefined) await this.applySuspendedLinks(partner);
    return this.profileOf(partner);
  }

  private async applySuspendedLinks(partner: PartnerDoc): Promise<void> {
    const page = partner.suspended_links === 'suspended_page';
    const inactive = { partner_id: partner._id, 'subscription.state': { $in: ['suspended', 'canceled'] } };
    const affected = await this.d.workspaces.collection
      .find({ ...inactive, redirect_suspended: { $ne: page } } as never, { projection: { _id: 1 } })
      .toArray();
    if (affected.length === 0) return;
    await this.d.workspaces.collection.updateMany({ _id: { $in: affected.map((w) => w._id) } }, { $set: { redirect_suspended: page } });
    for (const ws of affected) await this.d.bus?.publish({ kind: 'workspace', id: ws._id });
  }

  /** The Stripe endpoint secret, opened; null when none is configured. */
  stripeSecret(partner: PartnerDoc): string | null {
    if (typeof partner.stripe_secret_sealed !== 'string' || !this.d.box) return null;
    return this.d.box.open(partner.stripe_secret_sealed, `partner-billing:${partner._id}`);
  }

  // ----- plans -----

  async listPlans(partnerId: string): Promise<{ data: PartnerPlan[]; pagination: Pagination }> {
    const [plans, counts] = await Promise.all([this.d.plans.list(partnerId), this.clientCounts(partnerId)]);
    return { data: plans.map((p) => planView(p, counts.get(p._id) ?? 0)), pagination: { next_cursor: null, has_more: false } };
  }

  async getPlan(partnerId: string, id: string): Promise<PartnerPlan> {
    const plan = await this.findPlan(partnerId, id);
    return planView(plan, await this.clientsOn(partnerId, id));
  }

  async createPlan(partnerId: string, input: PlanCreate): Promise<PartnerPlan> {
    const partner = await this.partner(partnerId);
    this.checkBounds(partner, input);
    if ((await this.d.plans.count(partnerId)) >= MAX_PLANS_PER_PARTNER) throw new QuotaExceededError('plans', MAX_PLANS_PER_PARTNER);
    const now = new Date();
    const doc: PartnerPlanDoc = {
      _id: newId('pln'),
      partner_id: partnerId,
      name: input.name.trim(),
      status: 'active',
      price: input.price,
      limits: input.limits,
      capabilities: sortedCapabilities(input.capabilities),
      external_price_id: input.external_price_id ?? null,
      created_at: now,
      updated_at: now,
    };
    await this.d.plans.insert(doc);
    return planView(doc, 0);
  }

  /** A change of limits or capabilities reaches the plan's clients at once (their keys' cached plan is dropped). */
  async updatePlan(partnerId: string, id: string, patch: PlanUpdate): Promise<PartnerPlan> {
    const partner = await this.partner(partnerId);
    const current = await this.findPlan(partnerId, id);
    this.checkBounds(partner, { price: patch.price ?? current.price, limits: patch.limits ?? current.limits, capabilities: patch.capabilities ?? current.capabilities });
    const changes: Partial<PartnerPlanDoc> = { updated_at: new Date() };
    if (patch.name !== undefined) changes.name = patch.name.trim();
    if (patch.price !== undefined) changes.price = patch.price;
    if (patch.limits !== undefined) changes.limits = patch.limits;
    if (patch.capabilities !== undefined) changes.capabilities = sortedCapabilities(patch.capabilities);
    if (patch.external_price_id !== undefined) changes.external_price_id = patch.external_price_id;
    const updated = await this.d.plans.update(partnerId, id, changes);
    if (!updated) throw new NotFoundError('plan');
    if (patch.limits !== undefined || patch.capabilities !== undefined) {
      const clients = await this.d.workspaces.collection.find({ partner_id: partnerId, partner_plan_id: id }, { projection: { _id: 1 } }).toArray();
      await this.d.workspaces.collection.updateMany({ partner_id: partnerId, partner_plan_id: id }, { $set: planFields(partner, updated, this.d.config.defaultWorkspaceRatePerMinute) });
      for (const c of clients) await this.d.bus?.publish({ kind: 'workspace', id: c._id });
    }
    return planView(updated, await this.clientsOn(partnerId, id));
  }

  async archivePlan(partnerId: string, id: string): Promise<PartnerPlan> {
    await this.findPlan(partnerId, id);
    const updated = await this.d.plans.update(partnerId, id, { status: 'archived', updated_at: new Date() });
    if (!updated) throw new NotFoundError('plan');
    return planView(updated, await this.clientsOn(partnerId, id));
  }

  /** A plan in use cannot be deleted (409 conflict), only archived. */
  async deletePlan(partnerId: string, id: string): Promise<void> {
    await this.findPlan(partnerId, id);
    const inUse = await this.clientsOn(partnerId, id);
    if (inUse > 0) throw new ConflictError(`The plan is in use by ${inUse} client(s); archive it instead (POST /partner/plans/${id}/archive).`);
    await this.d.plans.delete(partnerId, id);
  }

  private async findPlan(partnerId: string, id: string): Promise<PartnerPlanDoc> {
    const plan = await this.d.plans.findById(partnerId, id);
    if (!plan) throw new NotFoundError('plan');
    return plan;
  }

  private clientsOn(partnerId: string, planId: string): Promise<number> {
    return this.d.workspaces.collection.countDocuments({ partner_id: partnerId, partner_plan_id: planId });
  }

  private async clientCounts(partnerId: string): Promise<Map<string, number>> {
    const rows = await this.d.workspaces.collection
      .aggregate<{ _id: string; n: number }>([{ $match: { partner_id: partnerId, partner_plan_id: { $type: 'string' } } }, { $group: { _id: '$partner_plan_id', n: { $sum: 1 } } }])
      .toArray();
    return new Map(rows.map((r) => [r._id, r.n]));
  }

  /** Never beyond the partner's platform plan: 422 naming each field over it. */
  private checkBounds(partner: PartnerDoc, input: Pick<PlanCreate, 'price' | 'limits' | 'capabilities'>): void {
    const ceiling = platformPlanOf(partner, this.d.config.defaultWorkspaceRatePerMinute);
    const details: ErrorDetail[] = [];
    for (const field of ['links', 'domains', 'tracked_clicks_per_month', 'rate_limit_per_minute'] as const) {
      if (input.limits[field] > ceiling.limits[field]) {
        details.push({ path: `limits.${field}`, message: `must be at most ${ceiling.limits[field]} (the partner's ${ceiling.id} platform plan)` });
      }
    }
    input.capabilities.forEach((capability, i) => {
      if (!ceiling.capabilities.includes(capability)) details.push({ path: `capabilities[${i}]`, message: `"${capability}" is not in the partner's ${ceiling.id} platform plan` });
    });
    if (!isCurrencyCode(input.price.currency)) details.push({ path: 'price.currency', message: 'must be an ISO 4217 currency code' });
    if (details.length > 0) throw new ValidationError(details);
  }

  // ----- clients -----

  async listClients(partnerId: string, cursor: string | undefined, limit: number): Promise<{ data: Client[]; pagination: Pagination }> {
    const after = cursor === undefined ? null : (decodeCursor(cursor, { id: 'string' }).id as string);
    // One extra row tells whether another page exists without a count.
    const rows = await clientPage(this.d.workspaces, partnerId, after, limit + 1);
    const { page, pagination } = pageOf(rows, limit, (ws) => ({ id: ws._id }));
    return { data: page.map(clientView), pagination };
  }

  async getClient(partnerId: string, id: string): Promise<Client> {
    return clientView(await this.findClient(partnerId, id));
  }

  /** The client quota is taken before the workspace is written, so concurrent creates cannot pass it. */
  async createClient(partnerId: string, input: ClientCreate): Promise<Client> {
    const partner = await this.partner(partnerId);
    const name = input.name.trim();
    if (name.length === 0) throw new ValidationError([{ path: 'name', message: 'must not be blank' }]);
    const plan = input.plan === undefined ? null : await this.assignablePlan(partnerId, input.plan);
    const quota = this.quotaOf(partner);
    if (partner.clients_count === undefined) {
      const count = await this.d.workspaces.collection.countDocuments({ partner_id: partnerId });
      await this.d.partners.collection.updateOne({ _id: partnerId, clients_count: { $exists: false } }, { $set: { clients_count: count } });
    }
    if (!(await this.d.partners.reserveClient(partnerId, quota))) throw new QuotaExceededError('clients', quota);
    const now = new Date();
    const doc: WorkspaceDoc = {
      _id: newId('ws'),
      name,
      plan_id: 'free',
      partner_id: partnerId,
      limits_override: null,
      owner_email: null,
      created_at: now,
      partner_plan_id: null,
      subscription: initialSubscription(now),
      billing_customer_id: input.billing_customer_id ?? null,
      metadata: input.metadata ?? {},
      ...(plan ? { ...planFields(partner, plan, this.d.config.defaultWorkspaceRatePerMinute), partner_plan_id: plan._id } : {}),
    };
    try {
      await this.insertClient(doc);
    } catch (error) {
      await this.d.partners.releaseClient(partnerId);
      throw error;
    }
    return clientView(doc);
  }

  private async insertClient(doc: WorkspaceDoc): Promise<void> {
    try {
      await this.d.workspaces.insert(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw new BillingCustomerTakenError(doc.billing_customer_id ?? '', error);
      throw error;
    }
  }

  async updateClient(partnerId: string, id: string, patch: ClientUpdate): Promise<Client> {
    const partner = await this.partner(partnerId);
    await this.findClient(partnerId, id);
    const set: Partial<WorkspaceDoc> = {};
    if (patch.name !== undefined) {
      const name = patch.name.trim();
      if (name.length === 0) throw new ValidationError([{ path: 'name', message: 'must not be blank' }]);
      set.name = name;
    }
    if (patch.plan !== undefined) {
      const plan = await this.assignablePlan(partnerId, patch.plan);
      Object.assign(set, planFields(partner, plan, this.d.config.defaultWorkspaceRatePerMinute), { partner_plan_id: plan._id });
    }
    if (patch.billing_customer_id !== undefined) set.billing_customer_id = patch.billing_customer_id;
    if (patch.metadata !== undefined) set.metadata = patch.metadata;
    let updated: WorkspaceDoc | null;
    try {
      updated = await this.d.workspaces.collection.findOneAndUpdate({ _id: id, partner_id: partnerId }, { $set: set }, { returnDocument: 'after' });
    } catch (error) {
      if (isDuplicateKey(error)) throw new BillingCustomerTakenError(patch.billing_customer_id ?? '', error);
      throw error;
    }
    if (!updated) throw new NotFoundError('client');
    // Keys cache the workspace with its plan: a plan change (or a rename) must reach them now.
    await this.d.bus?.publish({ kind: 'workspace', id });
    return clientView(updated);
  }

  /** Suspend or reactivate by hand; a move the state machine does not allow from the current state is 409 conflict. */
  async setActive(partnerId: string, id: string, active: boolean): Promise<Client> {
    const partner = await this.partner(partnerId);
    const trigger: Trigger = active ? { kind: 'reactivate' } : { kind: 'suspend' };
    const applied = await inTransaction(this.d.client, async (session) => {
      const client = await this.d.workspaces.collection.findOne({ _id: id, partner_id: partnerId }, { session });
      if (!client) throw new NotFoundError('client');
      return this.d.subscriptions.apply(client, partner, trigger, session, { now: new Date() });
    });
    if (!applied.transition) {
      const state = applied.client.subscription?.state ?? 'pending';
      throw new ConflictError(active ? `The client is ${state}, not suspended or canceled; nothing to reactivate.` : `The client is already ${state}.`);
    }
    await this.d.subscriptions.announce(applied);
    this.d.onEvent?.();
    return clientView(applied.client);
  }

  /** A workspace key for the client, shown once: the partner operates the client's links through the workspace API. */
  async mintClientKey(partnerId: string, id: string, input: ClientKeyCreate): Promise<CreatedKey & { view: ReturnType<typeof keyInfo> }> {
    if (!this.d.keys) throw new Error('PartnerService was built without the key service');
    await this.findClient(partnerId, id);
    const created = await this.d.keys.create({
      kind: 'workspace',
      ownerId: id,
      scopes: input.scopes ?? CLIENT_KEY_DEFAULT_SCOPES,
      name: input.name ?? null,
      expiresAt: input.expires_at ? new Date(input.expires_at) : null,
    });
    return { ...created, view: keyInfo(created.record) };
  }

  async findClient(partnerId: string, id: string): Promise<WorkspaceDoc> {
    const ws = await this.d.workspaces.collection.findOne({ _id: id, partner_id: partnerId });
    if (!ws) throw new NotFoundError('client');
    return ws;
  }

  private async assignablePlan(partnerId: string, planId: string): Promise<PartnerPlanDoc> {
    const plan = await this.d.plans.findById(partnerId, planId);
    if (!plan) throw new ValidationError([{ path: 'plan', message: 'no such plan of the partner' }]);
    if (plan.status !== 'active') throw new ValidationError([{ path: 'plan', message: 'the plan is archived; choose an active plan' }]);
    return plan;
  }
}

/** How a partner plan lands on a client workspace: the partner's platform plan with the plan's limits and capabilities. */
function planFields(partner: PartnerDoc, plan: PartnerPlanDoc, defaultRate: number): Pick<WorkspaceDoc, 'plan_id' | 'limits_override' | 'capabilities_override'> {
  return {
    plan_id: platformPlanOf(partner, defaultRate).id,
    limits_override: { ...plan.limits },
    capabilities_override: [...plan.capabilities],
  };
}

function sortedCapabilities(list: readonly string[]): PartnerPlanDoc['capabilities'] {
  return CAPABILITIES.filter((c) => list.includes(c));
}

function planView(doc: PartnerPlanDoc, clients: number): PartnerPlan {
  return {
    id: doc._id,
    name: doc.name,
    status: doc.status,
    price: doc.price,
    limits: doc.limits,
    capabilities: doc.capabilities,
    external_price_id: doc.external_price_id,
    clients,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

