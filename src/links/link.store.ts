import type { ClientSession, Collection, Db, Filter, FindCursor } from 'mongodb';
import { DuplicateKeyError, isDuplicateKey } from '../platform/errors.ts';
import { newestFirstBytes } from '../platform/paging.ts';
import type { AbTest, LinkPreview, Mobile, Rotator } from './link.schemas.ts';
import type { Rule, TargetingEntry } from '../rules/rule.schemas.ts';

export type RedirectType = 301 | 302 | 307 | 308;

export interface LinkDoc {
  _id: string;
  workspace_id: string;
  domain_id: string;
  /** The hostname, denormalised: the redirect path resolves host + slug without a join. */
  domain: string;
  slug: string;
  url: string;
  title: string | null;
  note: string | null;
  folder_id: string | null;
  tag_ids: string[];
  redirect_type: RedirectType;
  expires_at: Date | null;
  expired_url: string | null;
  /** scrypt; the password itself is never stored or returned. */
  password_hash: string | null;
  targeting: TargetingEntry[];
  ab_test: AbTest | null;
  rules: Rule[];
  workspace_rules_off: boolean;
  mobile: Mobile | null;
  rotator: Rotator | null;
  /** The custom social preview; absent on links stored before previews existed (read as null). */
  preview?: LinkPreview | null;
  /** The destination's own Open Graph tags as the worker last fetched them (src/links/preview-fetch.ts). */
  preview_fetched?: FetchedPreview | null;
  archived: boolean;
  created_at: Date;
  updated_at: Date;
  /** The last A/B look taken for a winner (src/clicks/ab-auto.ts); absent before the first. Not part of the API. */
  ab_last_look?: number;
  /** Set by resolving an abuse report with `warn` or `disable` (src/reports); absent or null: none. */
  moderation?: LinkModeration | null;
  /** Set when an import job created the link (src/imports); absent: created here. */
  imported?: LinkImportMark;
}

/** What a link keeps of its origin when an import created it. */
export interface LinkImportMark {
  /** The import source kind (`bitly`, `dub`, `csv`…). */
  source: string;
  /** The source's own id of the link. */
  source_id: string;
  job_id: string;
  /** The source's total clicks for the link when it was imported: a historical figure, never turned into raw clicks. */
  clicks_total: number | null;
  at: Date;
}

/** What the worker read from a destination's page: its tags (null when absent), and when. */
export interface FetchedPreview {
  /** The destination fetched (the link's url at the time): a changed url makes this stale. */
  url: string;
  title: string | null;
  description: string | null;
  image: string | null;
  fetched_at: Date;
  /** When the worker reads the destination again (sooner after a failure). */
  due_at: Date;
  /** Why nothing usable came back (timeout, refused, not HTML, status), or null when the page was read. */
  error: string | null;
}

/** An abuse report's outcome on the link: visitors are warned first, or the link no longer redirects. */
export interface LinkModeration {
  state: 'warned' | 'disabled';
  /** The report's reason (`phishing`, `malware`, ...). */
  reason: string;
  report_id: string;
  at: Date;
}

export interface LinkPage {
  workspaceId: string;
  /** Position after which the page starts (newest first): the last row of the previous page. */
  after: { created_at: Date; id: string } | null;
  limit: number;
  search?: string;
  domain_id?: string;
  tag?: string;
  folder_id?: string;
  archived?: boolean;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function pageFilters(query: LinkPage): Filter<LinkDoc>[] {
  const and: Filter<LinkDoc>[] = [{ workspace_id: query.workspaceId }];
  if (query.domain_id !== undefined) and.push({ domain_id: query.domain_id });
  if (query.tag !== undefined) and.push({ tag_ids: query.tag });
  if (query.folder_id !== undefined) and.push({ folder_id: query.folder_id });
  if (query.archived !== undefined) and.push({ archived: query.archived });
  if (query.search) {
    const pattern = { $regex: escapeRegex(query.search), $options: 'i' };
    and.push({ $or: [{ slug: pattern }, { url: pattern }, { title: pattern }, { note: pattern }] });
  }
  return and;
}

export class LinkStore {
  readonly collection: Collection<LinkDoc>;
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
    this.collection = db.collection<LinkDoc>('links');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { domain_id: 1, slug: 1 }, name: 'domain_slug_unique', unique: true },
      { key: { workspace_id: 1, created_at: -1, _id: -1 }, name: 'workspace_newest' },
      { key: { workspace_id: 1, tag_ids: 1, created_at: -1 }, name: 'workspace_tag' },
      { key: { workspace_id: 1, folder_id: 1, created_at: -1 }, name: 'workspace_folder' },
      // The preview worker's "which destinations are due" (src/links/preview-fetch.ts).
      { key: { 'preview_fetched.due_at': 1 }, name: 'preview_due' },
      // The analytics summary's imported click totals: only the workspace's imported links with a total are read,
      // not every link of the workspace on every summary.
      { key: { workspace_id: 1, 'imported.clicks_total': 1 }, name: 'workspace_imported_clicks' },
    ]);
  }

  /** Inserts a batch (in the caller's transaction); a taken domain + slug anywhere in it is a DuplicateKeyError. */
  async insertMany(docs: readonly LinkDoc[], session?: ClientSession): Promise<void> {
    if (docs.length === 0) return;
    try {
      await this.collection.insertMany(docs, session ? { session } : {});
    } catch (error) {
      if (isDuplicateKey(error)) throw new DuplicateKeyError('A slug of the batch is already taken.', error.keyValue, error);
      throw error;
    }
  }

  /** Which of `slugs` are taken on the domain (one indexed read for the lot). */
  async takenSlugs(domainId: string, slugs: readonly string[]): Promise<Set<string>> {
    if (slugs.length === 0) return new Set();
    const taken = await this.collection.find({ domain_id: domainId, slug: { $in: [...slugs] } }, { projection: { _id: 0, slug: 1 } }).toArray();
    return new Set(taken.map((t) => t.slug));
  }

  /** The tenant id is part of every lookup: another workspace's link is indistinguishable from a missing one. */
  findById(workspaceId: string, id: string, session?: ClientSession): Promise<LinkDoc | null> {
    return this.collection.findOne({ _id: id, workspace_id: workspaceId }, session ? { session } : {});
  }

  findBySlug(domainId: string, slug: string): Promise<LinkDoc | null> {
    return this.collection.findOne({ domain_id: domainId, slug });
  }

  async replace(doc: LinkDoc, session?: ClientSession): Promise<boolean> {
    try {
      const result = await this.collection.replaceOne({ _id: doc._id, workspace_id: doc.workspace_id }, doc, session ? { session } : {});
      return result.matchedCount === 1;
    } catch (error) {
      if (isDuplicateKey(error)) throw new DuplicateKeyError(`The slug "${doc.slug}" is already taken on ${doc.domain}.`, error.keyValue, error);
      throw error;
    }
  }

  async delete(workspaceId: string, id: string, session?: ClientSession): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: id, workspace_id: workspaceId }, session ? { session } : {});
    return result.deletedCount === 1;
  }

  /** A page of links, newest first, each as its stored BSON bytes (rendered by `LinkRenderer`). */
  pageBytes(query: LinkPage): Promise<Uint8Array[]> {
    return newestFirstBytes(this.db, this.collection.collectionName, pageFilters(query), query.after, query.limit);
  }

  /** How many links the page's filters match, over every page. */
  count(query: Omit<LinkPage, 'after' | 'limit'>): Promise<number> {
    return this.collection.countDocuments({ $and: pageFilters({ ...query, after: null, limit: 0 }) });
  }

  /**
   * Every link of a workspace, oldest first (the `workspace_newest` index walked backwards), read `batchSize` at a
   * time: what an export streams.
   */
  everyLink(workspaceId: string, batchSize: number): FindCursor<LinkDoc> {
    return this.collection.find({ workspace_id: workspaceId }, { batchSize }).sort({ created_at: 1, _id: 1 });
  }

  async removeTag(workspaceId: string, tagId: string, session?: ClientSession): Promise<void> {
    await this.collection.updateMany({ workspace_id: workspaceId, tag_ids: tagId }, { $pull: { tag_ids: tagId } }, session ? { session } : {});
  }

  async clearFolder(workspaceId: string, folderId: string, session?: ClientSession): Promise<void> {
    await this.collection.updateMany({ workspace_id: workspaceId, folder_id: folderId }, { $set: { folder_id: null } }, session ? { session } : {});
  }
}
