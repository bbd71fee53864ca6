import type { ClientSession, Collection, MongoClient } from 'mongodb';
import { inTransaction } from '../platform/mongo.ts';
import { newId } from '../platform/ids.ts';
import type { Logger } from '../platform/logger.ts';
import { isCurrencyCode } from '../platform/money.ts';
import {
  AttributionExpiredError,
  ClickPendingError,
  DuplicateKeyError,
  InvalidClickIdError,
  NotFoundError,
  ValidationError,
} from '../platform/errors.ts';
import { requireCapabilities, type Principal } from '../tenancy/principal.ts';
import type { EventStore } from '../events/event.store.ts';
import { DEFAULT_ATTRIBUTION_WINDOW_DAYS, type WorkspaceStore } from '../tenancy/workspace.store.ts';
import type { ClickIds } from '../clicks/click-id.ts';
import type { ClickDoc } from '../clicks/click.store.ts';
import type { AbFeedback } from '../clicks/ab-feedback.ts';
import { decodeTimePosition, pageOf, timePosition, type Pagination } from '../http/cursor.ts';
import type { ConversionDoc, ConversionStore } from './conversion.store.ts';
import type { Conversion, ConversionCreate, ConversionListQuery } from './conversion.schemas.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

/** A conversion may be reported a little ahead of our clock (the customer's servers), not more. */
const FUTURE_TOLERANCE_MS = 5 * 60_000;
const CLICK_POLL_MS = 50;

/**
 * What the figures of conversions (analytics) are told of each new one; wired when analytics counts them. It runs
 * inside the conversion's own transaction: the conversion, its event and its figures are committed together or not
 * at all, so a failure answers an error the client retries, and no recorded conversion is missing from the figures.
 */
export type ConversionCounted = (doc: ConversionDoc, session: ClientSession) => Promise<void>;

export interface ConversionServiceDeps {
  client: MongoClient;
  conversions: ConversionStore;
  clicks: Collection<ClickDoc>;
  workspaces: WorkspaceStore;
  events: EventStore;
  clickIds: ClickIds;
  /** Recomputes a link's A/B samples, weights and winner after a conversion of one of its variants. */
  abFeedback: AbFeedback | null;
  counted?: ConversionCounted[];
  logger: Logger;
  /** How long a genuine click not yet written by the ingestion is waited for before answering 504. */
  clickWaitMs: number;
  onEvent?: () => void;
  now?: () => Date;
}

export class ConversionService {
  private readonly d: ConversionServiceDeps;
  private readonly now: () => Date;
  constructor(deps: ConversionServiceDeps) {
    this.d = deps;
    this.now = deps.now ?? (() => new Date());
  }

  /** The conversion, and whether it is new (false: its external_id was recorded before, the first one is answered). */
  async create(principal: WorkspacePrincipal, input: ConversionCreate): Promise<{ conversion: Conversion; created: boolean }> {
    requireCapabilities(principal, ['conversions']);
    const workspaceId = principal.workspace._id;
    if (input.external_id !== undefined) {
      const existing = await this.d.conversions.findByExternalId(workspaceId, input.external_id);
      if (existing) return { conversion: conversionView(existing), created: false };
    }
    if (input.currency !== undefined && !isCurrencyCode(input.currency)) {
      throw new ValidationError([{ path: 'currency', message: 'is not an ISO 4217 currency code' }]);
    }
    const now = this.now();
    const occurredAt = input.occurred_at === undefined ? now : new Date(input.occurred_at);
    if (occurredAt.getTime() > now.getTime() + FUTURE_TOLERANCE_MS) throw new ValidationError([{ path: 'occurred_at', message: 'is in the future' }]);

    const workspace = await this.d.workspaces.findById(workspaceId);
    const windowDays = workspace?.attribution_window_days ?? DEFAULT_ATTRIBUTION_WINDOW_DAYS;
    // Checked without the database: the signature binds the id to the workspace and carries the click's time.
    const check = this.d.clickIds.verify(input.click_id, workspaceId, occurredAt, windowDays * 86_400_000);
    if (!check.ok) throw check.reason === 'invalid' ? new InvalidClickIdError() : new AttributionExpiredError(windowDays);
    if (occurredAt.getTime() < check.issuedAt.getTime()) throw new ValidationError([{ path: 'occurred_at', message: 'is before the click' }]);

    const click = await this.awaitClick(workspaceId, input.click_id);
    const doc: ConversionDoc = {
      _id: newId('cnv'),
      workspace_id: workspaceId,
      click_id: click._id,
      clicked_at: click.ts,
      link_id: click.link_id,
      domain: click.domain,
      slug: click.slug,
      type: input.type,
      goal: input.goal ?? null,
      amount: input.amount ?? null,
      currency: input.currency ?? null,
      external_id: input.external_id ?? null,
      customer_external_id: input.customer_external_id ?? null,
      metadata: input.metadata ?? {},
      variant_index: click.decision.variant_index,
      destination_id: click.decision.destination_id,
      country: click.visitor.country,
      device: click.visitor.device,
      occurred_at: occurredAt,
      created_at: now,
    };
    const conversion = conversionView(doc);
    try {
      await inTransaction(this.d.client, async (session) => {
        await this.d.conversions.insert(doc, session);
        await this.d.events.append({ type: 'conversion.created', workspaceId, partnerId: principal.workspace.partner_id, data: conversion }, session, now);
        for (const hook of this.d.counted ?? []) await hook(doc, session);
      });
    } catch (error) {
      // Two requests with one external_id at once: the second answers the first's conversion.
      if (!(error instanceof DuplicateKeyError) || input.external_id === undefined) throw error;
      const first = await this.d.conversions.findByExternalId(workspaceId, input.external_id);
      if (!first) throw error;
      return { conversion: conversionView(first), created: false };
    }
    this.d.onEvent?.();
    await this.afterRecorded(doc);
    return { conversion, created: true };
  }

  async get(principal: WorkspacePrincipal, id: string): Promise<Conversion> {
    const doc = await this.d.conversions.findById(principal.workspace._id, id);
    if (!doc) throw new NotFoundError('conversion');
    return conversionView(doc);
  }

  async list(principal: WorkspacePrincipal, query: ConversionListQuery): Promise<{ data: Conversion[]; pagination: Pagination }> {
    const rows = await this.d.conversions.page({
      workspaceId: principal.workspace._id,
      after: decodeTimePosition(query.cursor),
      limit: query.limit + 1,
      ...(query.link_id !== undefined ? { linkId: query.link_id } : {}),
      ...(query.type !== undefined ? { type: query.type } : {}),
      ...(query.from !== undefined ? { from: new Date(query.from) } : {}),
      ...(query.to !== undefined ? { to: new Date(query.to) } : {}),
    });
    const { page, pagination } = pageOf(rows, query.limit, timePosition);
    return { data: page.map(conversionView), pagination };
  }

  /**
   * The click behind a genuine id. The redirect records clicks asynchronously (DESIGN: it never waits on MongoDB),
   * so a conversion posted right after the visit may arrive before the ingestion wrote its click: wait a little.
   */
  private async awaitClick(workspaceId: string, clickId: string): Promise<ClickDoc> {
    const deadline = Date.now() + this.d.clickWaitMs;
    for (;;) {
      const click = await this.d.clicks.findOne({ _id: clickId, workspace_id: workspaceId });
      if (click) return click;
      if (Date.now() >= deadline) throw new ClickPendingError(5);
      await new Promise((resolve) => setTimeout(resolve, CLICK_POLL_MS));
    }
  }

  /** The A/B samples: recomputed from the stored conversions, so a failure here is logged and the next one heals it. */
  private async afterRecorded(doc: ConversionDoc): Promise<void> {
    if (doc.variant_index === null || !this.d.abFeedback) return;
    try {
      await this.d.abFeedback.updateLink(doc.link_id);
    } catch (error) {
      this.d.logger.error({ err: error, conversion: doc._id }, 'A/B samples not updated');
    }
  }
}

export function conversionView(doc: ConversionDoc): Conversion {
  return {
    id: doc._id,
    click_id: doc.click_id,
    clicked_at: doc.clicked_at.toISOString(),
    link_id: doc.link_id,
    domain: doc.domain,
    slug: doc.slug,
    type: doc.type,
    goal: doc.goal,
    amount: doc.amount,
    currency: doc.currency,
    external_id: doc.external_id,
    customer_external_id: doc.customer_external_id,
    occurred_at: doc.occurred_at.toISOString(),
    created_at: doc.created_at.toISOString(),
    metadata: doc.metadata,
    attribution: { variant_index: doc.variant_index, destination_id: doc.destination_id, country: doc.country, device: doc.device },
  };
}
