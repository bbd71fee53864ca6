import type { Readable } from 'node:stream';
import type { ClientSession, MongoClient } from 'mongodb';
import { inTransaction } from '../platform/mongo.ts';
import { GroupCommit, type GroupOutcome } from '../platform/group-commit.ts';
import { newId } from '../platform/ids.ts';
import { AppError, DuplicateKeyError, ExportsBusyError, NotFoundError, QuotaExceededError } from '../platform/errors.ts';
import { LEASE_MS, type ExportSlots } from '../platform/export-slots.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import { requireCapabilities, type Principal } from '../tenancy/principal.ts';
import type { EventStore, NewEvent } from '../events/event.store.ts';
import type { EventType } from '../events/event-types.ts';
import { decodeTimePosition, pageOf, timePosition } from '../http/cursor.ts';
import { bodyValidator } from '../http/validation.ts';
import type { LinkDoc, LinkImportMark, LinkStore } from './link.store.ts';
import type { LinkEventData } from './link.schemas.ts';
import type { QuotaStore } from './quota.store.ts';
import type { LabelDoc, LabelStore } from './label.store.ts';
import type { DomainDirectory } from './domains.ts';
import { hashPassword } from '../platform/password.ts';
import { linkView } from './link.view.ts';
import { LinkRenderer } from './link.render.ts';
import { exportLinks, type LinkExportFormat } from './link.export.ts';
import type { Blocklist } from '../config/link-safety.ts';
import { withUtm, batchLookups, capabilitiesUsed, checkReferences, generateSlug, type LinkContent, type ReferenceLookups } from './link.prepare.ts';
import { withRuleIds } from '../rules/rule-checks.ts';
import { LinkStoredSchema, type Link, type LinkCountQuery, type LinkCreate, type LinkListQuery, type LinkUpdate } from './link.schemas.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

export interface LinkServiceDeps {
  client: MongoClient;
  links: LinkStore;
  quota: QuotaStore;
  tags: LabelStore;
  folders: LabelStore;
  events: EventStore;
  domains: DomainDirectory;
  /** Null in tools that run without NATS; the api always has it. */
  bus: CacheBus | null;
  /** Wakes the outbox relay when it runs in this process (all-in-one). */
  onEvent?: () => void;
  /** Link safety: destinations refused on every URL field (config LINK_BLOCKLIST_*). */
  blocklist?: Blocklist;
  /** Caps the links exports of a workspace running at once (across API pods); none: no cap. */
  exportSlots?: ExportSlots;
}

/** Where an imported link comes from, written with it; `id`, when given, is the id it is created with (chosen by the importer beforehand, so that what it records of the link names it before the write). */
export interface ImportOrigin {
  imported: LinkImportMark;
  created_at: Date | null;
  id?: string;
}

export type BulkItem =
  | { index: number; status: 'created'; link: Link }
  | { index: number; status: 'failed'; error: { code: string; message: string; details?: Array<{ path: string; message: string }> } };

const SLUG_ATTEMPTS = 5;
/** Single creates written in one transaction at most (the size of a bulk call). */
const MAX_GROUP = 100;
const validateStored = bodyValidator(LinkStoredSchema);

export class LinkService {
  private readonly d: LinkServiceDeps;
  private readonly renderer: LinkRenderer;
  /** Single creates, written in groups (see writeGroup). */
  private readonly creates = new GroupCommit<BatchRow, void>((rows) => this.writeGroup(rows), MAX_GROUP);
  constructor(deps: LinkServiceDeps) {
    this.d = deps;
    this.renderer = new LinkRenderer(deps.domains.default.baseUrl);
  }

  async create(principal: WorkspacePrincipal, input: LinkCreate): Promise<Link> {
    const doc = await this.prepare(principal, input);
    await this.creates.submit({ index: 0, principal, doc, chosen: input.slug !== undefined });
    return this.viewOne(doc);
  }

  /**
   * Single creates written together (a group commit, see GroupCommit): the links that arrived while the last group
   * was being written take their quota places (one take per workspace) and are inserted with their `link.created`
   * events in one transaction. Each create keeps its own outcome: past the quota it fails alone, a generated slug
   * found taken is drawn again, a chosen one fails as the conflict it is, and the others are written all the same.
   */
  private async writeGroup(rows: readonly BatchRow[]): Promise<Array<GroupOutcome<void>>> {
    const outcomes: Array<GroupOutcome<void>> = rows.map(() => ({ value: undefined }));
    const fail = (index: number, error: AppError) => {
      outcomes[index] = { error };
    };
    const numbered = rows.map((row, index) => ({ ...row, index }));
    const byWorkspace = new Map<string, BatchRow[]>();
    for (const row of numbered) {
      const group = byWorkspace.get(row.doc.workspace_id);
      if (group) group.push(row);
      else byWorkspace.set(row.doc.workspace_id, [row]);
    }
    const granted = new Map<string, number>();
    const takes = await Promise.allSettled(
      [...byWorkspace].map(async ([workspaceId, group]) => {
        const limit = group[0]!.principal.plan.limits.links;
        const places = await this.d.quota.takeLinksUpTo(workspaceId, group.length, limit);
        granted.set(workspaceId, places);
        for (const row of group.slice(places)) fail(row.index, new QuotaExceededError('links', limit));
        return group.slice(0, places);
      }),
    );
    const refused = takes.find((take) => take.status === 'rejected');
    if (refused) {
      await this.releasePlaces(granted);
      throw refused.reason;
    }
    const written = await this.writeRows(takes.flatMap((take) => (take.status === 'fulfilled' ? take.value : [])), fail, granted);
    if (written.length > 0) await this.broadcast(...written.map((r) => r.doc));
    return outcomes;
  }

  /**
   * Each item succeeds or fails on its own; the quota counts every item. The batch is written as one: every item is
   * checked before anything is written (the domains, folders, tags and short hosts it names read once for all),
   * slugs are settled with one read per domain (generated ones drawn again where taken, chosen ones failing as a
   * conflict), the quota places taken at once, and the links with their `link.created` events inserted in one
   * transaction.
   */
  async createMany(principal: WorkspacePrincipal, inputs: readonly LinkCreate[]): Promise<{ data: BulkItem[]; created: number; failed: number }> {
    const { outcomes, docs } = await this.writeMany(principal, inputs);
    const links = await this.views(docs);
    const byId = new Map(links.map((link) => [link.id, link]));
    const data: BulkItem[] = outcomes.map((o) =>
      'id' in o ? { index: o.index, status: 'created', link: byId.get(o.id)! } : { index: o.index, status: 'failed', error: { code: o.error.code, message: o.error.message, ...(o.error.details ? { details: o.error.details } : {}) } },
    );
    const created = docs.length;
    return { data, created, failed: data.length - created };
  }

  /**
   * createMany for an import: each link gets what it keeps of its origin (`imported`, and its source's creation
   * date) in the same write, and the answer is the new ids only (an import never shows the links it writes).
   */
  async importMany(
    principal: WorkspacePrincipal,
    inputs: readonly LinkCreate[],
    origins: ReadonlyArray<ImportOrigin>,
  ): Promise<Array<{ index: number; id: string } | { index: number; error: AppError }>> {
    return (await this.writeMany(principal, inputs, origins)).outcomes;
  }

  /** The bulk write: checks, slugs settled in one read per domain and round, one quota take, one transaction. */
  private async writeMany(
    principal: WorkspacePrincipal,
    inputs: readonly LinkCreate[],
    origins?: ReadonlyArray<ImportOrigin>,
  ): Promise<{ outcomes: Array<{ index: number; id: string } | { index: number; error: AppError }>; docs: LinkDoc[] }> {
    const outcomes: Array<{ index: number; id: string } | { index: number; error: AppError } | undefined> = inputs.map(() => undefined);
    const fail = (index: number, error: AppError) => {
      outcomes[index] = { index, error };
    };
    const lookups = await batchLookups(principal, inputs.map(({ utm: _utm, password: _password, ...content }) => content), this.d);
    const prepared: BatchRow[] = [];
    await Promise.all(
      inputs.map(async (input, index) => {
        try {
          const doc = await this.prepare(principal, input, lookups);
          const origin = origins?.[index];
          if (origin) {
            if (origin.id !== undefined) doc._id = origin.id;
            doc.imported = origin.imported;
            if (origin.created_at) doc.created_at = origin.created_at;
          }
          prepared.push({ index, principal, doc, chosen: input.slug !== undefined });
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          fail(index, error);
        }
      }),
    );
    const settled = await this.settleSlugs(prepared.sort((a, b) => a.index - b.index), fail);
    // Places in the quota for the rows in order; those past the limit fail.
    const limit = principal.plan.limits.links;
    const places = await this.d.quota.takeLinksUpTo(principal.workspace._id, settled.length, limit);
    for (const row of settled.slice(places)) fail(row.index, new QuotaExceededError('links', limit));
    const rows = await this.writeRows(settled.slice(0, places), fail, new Map([[principal.workspace._id, places]]));
    if (rows.length > 0) await this.broadcast(...rows.map((r) => r.doc));
    for (const row of rows) outcomes[row.index] = { index: row.index, id: row.doc._id };
    return { outcomes: outcomes as Array<{ index: number; id: string } | { index: number; error: AppError }>, docs: rows.map((r) => r.doc) };
  }

  /**
   * What createMany would refuse of each input before writing, without writing: the plan's capabilities, the
   * references (domain, tags, folder), the destination blocklist and redirect loops. The slug and the quota are left
   * to the caller (a dry run keeps its own account of both across batches; see `linksRemaining`). null: would pass.
   */
  async checkMany(principal: WorkspacePrincipal, inputs: readonly LinkCreate[]): Promise<Array<AppError | null>> {
    const contents = inputs.map(({ utm: _utm, password: _password, ...content }) => content);
    const lookups = await batchLookups(principal, contents, this.d);
    return Promise.all(
      inputs.map(async (input, index) => {
        try {
          requireCapabilities(principal, capabilitiesUsed(contents[index]!, input.password !== undefined && input.password !== null));
          await checkReferences(principal, contents[index]!, this.d, lookups);
          return null;
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          return error;
        }
      }),
    );
  }

  /** Links the workspace may still create under its plan's quota. */
  async linksRemaining(principal: WorkspacePrincipal): Promise<number> {
    return Math.max(0, principal.plan.limits.links - (await this.d.quota.linksUsed(principal.workspace._id)));
  }

  /**
   * The rows whose slug is free on its domain, in order: one read of the taken ones per domain and round; a
   * generated slug that is taken (or repeated in the batch) is drawn again, a chosen one fails as a conflict.
   */
  private async settleSlugs(rows: readonly BatchRow[], fail: (index: number, error: AppError) => void): Promise<BatchRow[]> {
    const byDomain = new Map<string, BatchRow[]>();
    for (const row of rows) byDomain.set(row.doc.domain_id, [...(byDomain.get(row.doc.domain_id) ?? []), row]);
    const kept: BatchRow[] = [];
    await Promise.all(
      [...byDomain].map(async ([domainId, group]) => {
        const used = new Set<string>();
        let todo = group;
        for (let round = 1; todo.length > 0; round++) {
          const taken = await this.d.links.takenSlugs(domainId, todo.map((r) => r.doc.slug));
          const again: BatchRow[] = [];
          for (const row of todo) {
            const slug = row.doc.slug;
            if (!taken.has(slug) && !used.has(slug)) {
              used.add(slug);
              kept.push(row);
            } else if (row.chosen || round >= SLUG_ATTEMPTS) {
              fail(row.index, new DuplicateKeyError(`The slug "${slug}" is already taken on ${row.doc.domain}.`, { domain_id: domainId, slug }, undefined));
            } else {
              row.doc.slug = generateSlug();
              again.push(row);
            }
          }
          todo = again;
        }
      }),
    );
    return kept.sort((a, b) => a.index - b.index);
  }

  /**
   * Writes rows whose quota places are taken (`granted`, per workspace): their links and events in one transaction,
   * again after settling the slugs when one was taken meanwhile (a generated slug is drawn again, a chosen one fails).
   * Places not used in the end are given back, and all of them when the write fails. The rows written.
   */
  private async writeRows(rows: readonly BatchRow[], fail: (index: number, error: AppError) => void, granted: ReadonlyMap<string, number>): Promise<BatchRow[]> {
    let todo = [...rows];
    try {
      for (let attempt = 1; todo.length > 0; attempt++) {
        try {
          await this.commitMany(todo);
          break;
        } catch (error) {
          if (!(error instanceof DuplicateKeyError)) throw error;
          if (attempt >= SLUG_ATTEMPTS) {
            for (const row of todo) fail(row.index, error);
            todo = [];
            break;
          }
          todo = await this.settleSlugs(todo, fail);
        }
      }
    } catch (error) {
      await this.releasePlaces(granted);
      throw error;
    }
    const unused = new Map(granted);
    for (const row of todo) unused.set(row.doc.workspace_id, (unused.get(row.doc.workspace_id) ?? 0) - 1);
    await this.releasePlaces(unused);
    return todo;
  }

  /** Gives back quota places, per workspace. */
  private async releasePlaces(places: ReadonlyMap<string, number>): Promise<void> {
    await Promise.all([...places].filter(([, count]) => count > 0).map(([workspaceId, count]) => this.d.quota.releaseLinks(workspaceId, count)));
  }

  /** Links and their `link.created` events in one transaction, each kind in one insert, then the relay is nudged. */
  private async commitMany(rows: readonly BatchRow[]): Promise<void> {
    await inTransaction(this.d.client, async (session) => {
      await this.d.links.insertMany(rows.map((r) => r.doc), session);
      await this.d.events.appendMany(rows.map((r) => eventOf(r.principal, 'link.created', r.doc)), session);
    });
    this.d.onEvent?.();
  }

  async get(principal: WorkspacePrincipal, id: string): Promise<Link> {
    return this.viewOne(await this.find(principal, id));
  }

  async update(principal: WorkspacePrincipal, id: string, patch: LinkUpdate): Promise<Link> {
    const existing = await this.find(principal, id);
    const { password, utm, ...changes } = patch;
    // The merged link must satisfy the same schema as a new one: a patch cannot leave it half-valid.
    const merged = withUtm(validateStored({ ...contentOf(existing), ...changes }) as LinkContent, utm);
    const passwordHash = password === undefined ? existing.password_hash : password === null ? null : await hashPassword(password);
    const touched = capabilitiesUsed(changes as LinkContent, password !== undefined && password !== null);
    requireCapabilities(principal, touched);
    const domain = await checkReferences(principal, merged, this.d);
    const doc: LinkDoc = {
      ...existing,
      ...docFields(merged),
      domain_id: domain.id,
      domain: domain.hostname,
      slug: merged.slug ?? existing.slug,
      password_hash: passwordHash,
      archived: merged.archived ?? existing.archived,
      updated_at: new Date(),
    };
    // A test edited by hand starts its looks for a winner again (src/clicks/ab-auto.ts).
    if (changes.ab_test !== undefined) delete doc.ab_last_look;
    // The destination's tags are those of the old page: the worker reads the new one at its next round.
    if (doc.url !== existing.url) delete doc.preview_fetched;
    await this.commit(principal, 'link.updated', doc, async (session) => {
      if (!(await this.d.links.replace(doc, session))) throw new NotFoundError('link');
    }, { changed: Object.keys(patch).sort() });
    await this.broadcast(existing, doc);
    return this.viewOne(doc);
  }

  async delete(principal: WorkspacePrincipal, id: string): Promise<void> {
    const existing = await this.find(principal, id);
    await this.commit(principal, 'link.deleted', existing, async (session) => {
      if (!(await this.d.links.delete(existing.workspace_id, id, session))) throw new NotFoundError('link');
    });
    await this.d.quota.releaseLinks(existing.workspace_id, 1);
    await this.broadcast(existing);
  }

  /**
   * A page of links as the JSON text of the list answer: rendered from the stored bytes (`LinkRenderer`), with the
   * page's tags read once for all its links.
   */
  async listJson(principal: WorkspacePrincipal, query: LinkListQuery): Promise<string> {
    const rows = await this.d.links.pageBytes({
      workspaceId: principal.workspace._id,
      after: decodeTimePosition(query.cursor),
      limit: query.limit + 1,
      ...(query.search ? { search: query.search } : {}),
      ...(query.domain_id !== undefined ? { domain_id: query.domain_id } : {}),
      ...(query.tag !== undefined ? { tag: query.tag } : {}),
      ...(query.folder_id !== undefined ? { folder_id: query.folder_id } : {}),
      ...(query.archived !== undefined ? { archived: query.archived === 'true' } : {}),
    });
    const links = rows.map((bytes) => this.renderer.render(bytes));
    const { page, pagination } = pageOf(links, query.limit, (link) => timePosition({ created_at: link.createdAt, _id: link.id }));
    const tags = await this.tagsOf(principal.workspace._id, page.flatMap((link) => link.tagIds));
    return `{"data":[${page.map((link) => this.renderer.json(link, tags)).join(',')}],"pagination":${JSON.stringify(pagination)}}`;
  }

  /** How many links match the list's filters (GET /links/count). */
  count(principal: WorkspacePrincipal, query: LinkCountQuery): Promise<number> {
    return this.d.links.count({
      workspaceId: principal.workspace._id,
      ...(query.search ? { search: query.search } : {}),
      ...(query.domain_id !== undefined ? { domain_id: query.domain_id } : {}),
      ...(query.tag !== undefined ? { tag: query.tag } : {}),
      ...(query.folder_id !== undefined ? { folder_id: query.folder_id } : {}),
      ...(query.archived !== undefined ? { archived: query.archived === 'true' } : {}),
    });
  }

  /** Every link of the workspace with every field, streamed (link.export.ts). */
  /**
   * Every link of the workspace as a stream. With export slots, the export holds one of the workspace's for as long
   * as it streams (renewed meanwhile, given back when the stream closes, ended or not): with all taken, 429.
   */
  async export(principal: WorkspacePrincipal, format: LinkExportFormat): Promise<Readable> {
    const workspaceId = principal.workspace._id;
    const slots = this.d.exportSlots;
    const slot = slots ? await slots.acquire(workspaceId) : null;
    if (slot && 'retryAfterSeconds' in slot) throw new ExportsBusyError('links exports', slots!.perWorkspace, slot.retryAfterSeconds);
    const stream = exportLinks({ links: this.d.links, tags: this.d.tags, folders: this.d.folders, defaultBaseUrl: this.d.domains.default.baseUrl }, workspaceId, format);
    if (slot) {
      const renew = setInterval(() => void slot.renew().catch(() => undefined), LEASE_MS / 3);
      renew.unref();
      stream.once('close', () => {
        clearInterval(renew);
        void slot.release().catch(() => undefined);
      });
    }
    return stream;
  }

  private async find(principal: WorkspacePrincipal, id: string): Promise<LinkDoc> {
    const doc = await this.d.links.findById(principal.workspace._id, id);
    if (!doc) throw new NotFoundError('link');
    return doc;
  }

  private async prepare(principal: WorkspacePrincipal, input: LinkCreate, lookups?: ReferenceLookups): Promise<LinkDoc> {
    const { utm, password, ...content } = input;
    requireCapabilities(principal, capabilitiesUsed(content, password !== undefined && password !== null));
    const domain = await checkReferences(principal, content, this.d, lookups);
    const now = new Date();
    return {
      _id: newId('lnk'),
      workspace_id: principal.workspace._id,
      ...docFields(withUtm(content, utm)),
      domain_id: domain.id,
      domain: domain.hostname,
      slug: content.slug ?? generateSlug(),
      password_hash: password ? await hashPassword(password) : null,
      archived: false,
      created_at: now,
      updated_at: now,
    };
  }

  /** The change and its event row commit together (the outbox), then the relay is nudged. */
  private async commit(
    principal: WorkspacePrincipal,
    type: EventType,
    doc: LinkDoc,
    work: (session: ClientSession) => Promise<void>,
    extra: Pick<LinkEventData, 'changed'> = {},
  ): Promise<void> {
    await inTransaction(this.d.client, async (session) => {
      await work(session);
      await this.d.events.append(eventOf(principal, type, doc, extra), session);
    });
    this.d.onEvent?.();
  }

  /** Every redirect pod drops its copy of these host + slug pairs at once (and any cached "not found"). */
  private async broadcast(...docs: LinkDoc[]): Promise<void> {
    const keys = [...new Set(docs.map((d) => `${d.domain}/${d.slug}`))];
    await this.d.bus?.publish({ kind: 'link', id: docs[0]!._id, keys });
  }

  private async viewOne(doc: LinkDoc): Promise<Link> {
    return (await this.views([doc]))[0]!;
  }

  private async views(docs: LinkDoc[]): Promise<Link[]> {
    const workspaceId = docs[0]?.workspace_id;
    if (!workspaceId) return [];
    const tags = await this.tagsOf(workspaceId, docs.flatMap((d) => d.tag_ids));
    return docs.map((d) => linkView(d, tags, this.d.domains.default.baseUrl));
  }

  private async tagsOf(workspaceId: string, tagIds: readonly string[]): Promise<Map<string, LabelDoc>> {
    return new Map((await this.d.tags.findMany(workspaceId, [...new Set(tagIds)])).map((t) => [t._id, t]));
  }
}

/** The outbox row of a change to a link (link.created carries id, domain, slug and url: spec 6.1). */
function eventOf(principal: WorkspacePrincipal, type: EventType, doc: LinkDoc, extra: Pick<LinkEventData, 'changed'> = {}): NewEvent {
  const data = { id: doc._id, domain: doc.domain, slug: doc.slug, url: doc.url, ...extra } satisfies LinkEventData;
  return { type, workspaceId: doc.workspace_id, partnerId: principal.workspace.partner_id, data };
}

/** A bulk item on its way to being written: its index in the call, and whether the client chose its slug. */
interface BatchRow {
  index: number;
  /** Who writes it (its event names the workspace's partner). */
  principal: WorkspacePrincipal;
  doc: LinkDoc;
  chosen: boolean;
}

/** A stored link as content (what a client sends), to merge a patch into and validate the result. */
function contentOf(doc: LinkDoc): LinkContent {
  return {
    url: doc.url,
    domain_id: doc.domain_id,
    slug: doc.slug,
    title: doc.title,
    note: doc.note,
    folder_id: doc.folder_id,
    tag_ids: doc.tag_ids,
    redirect_type: doc.redirect_type,
    expires_at: doc.expires_at?.toISOString() ?? null,
    expired_url: doc.expired_url,
    targeting: doc.targeting,
    ab_test: doc.ab_test,
    rules: doc.rules,
    workspace_rules_off: doc.workspace_rules_off,
    mobile: doc.mobile,
    rotator: doc.rotator,
    preview: doc.preview ?? null,
    archived: doc.archived,
  };
}

/** Content fields as stored: dates as Dates, absent optional blocks as their empty value, rules with ids. */
function docFields(content: LinkContent): Omit<LinkDoc, '_id' | 'workspace_id' | 'domain_id' | 'domain' | 'slug' | 'password_hash' | 'archived' | 'created_at' | 'updated_at'> {
  return {
    url: content.url,
    title: content.title ?? null,
    note: content.note ?? null,
    folder_id: content.folder_id ?? null,
    tag_ids: [...new Set(content.tag_ids ?? [])],
    redirect_type: (content.redirect_type ?? 302),
    expires_at: content.expires_at ? new Date(content.expires_at) : null,
    expired_url: content.expired_url ?? null,
    targeting: content.targeting ?? [],
    ab_test: content.ab_test ?? null,
    rules: withRuleIds(content.rules),
    workspace_rules_off: content.workspace_rules_off ?? false,
    mobile: content.mobile ?? null,
    rotator: content.rotator ?? null,
    preview: content.preview ?? null,
  };
}
