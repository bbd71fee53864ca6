// One page of a source, imported: each link mapped to a create body, the ones already imported skipped, the others
// claimed in `imported_links` (pending, naming the id their link will have), written through the links service's
// bulk create in chunks, then marked created in one write. A dry run goes through the same checks and writes nothing.
//
// A page's chunks are written side by side when the links quota has room for all of them (the worker and the
// database then work at once, as bulk calls made in parallel do); near the limit they go one after the other, so that
// the rows refused for quota are the page's last ones, as in a single bulk call.
//
// Exactly once across a worker's death: a link is claimed (pending, with the domain and slug it is written on)
// before it is written, and marked created after. A run that finds a pending claim looks for the link at that domain
// and slug: one the import wrote (it carries the source id, or was created after the claim) is adopted, else the
// claim is dropped and the link written now.
import type { Collection } from 'mongodb';
import { MongoBulkWriteError, type WriteError } from 'mongodb';
import { AppError, QuotaExceededError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { LinkService } from '../links/link.service.ts';
import type { LinkDoc } from '../links/link.store.ts';
import type { LabelDoc, LabelStore } from '../links/label.store.ts';
import { generateSlug } from '../links/link.prepare.ts';
import type { ImportedLink, SourcePage } from './source.ts';
import type { ImportDomains } from './import-domains.ts';
import { mapLink, rowErrorOf, suffixed, tagNamesOf, type MappedLink } from './import-mapping.ts';
import type { ImportErrorDoc, ImportJobDoc, ImportStore, ImportedLinkDoc } from './import.store.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

/** Slug attempts per link after a clash (a suffix, or a fresh generated slug). */
const CLASH_ATTEMPTS = 5;
/** Rows of a batch are numbered batch × this + index, so errors list in source order. */
const ROWS_PER_BATCH = 1_000_000;
/** Links per bulk write; a page of more is written in several chunks. */
export const WRITE_CHUNK = 500;

/** A dry run's account across its batches: the domain + slug pairs it would take, the links quota it has left. */
export interface DryRunState {
  taken: Set<string>;
  /** Links the plan would still allow; null until the first row needs it. */
  remaining: number | null;
}

export interface BatchDeps {
  store: ImportStore;
  links: LinkService;
  linkDocs: Collection<LinkDoc>;
  tags: LabelStore;
  domains: ImportDomains;
  principal: WorkspacePrincipal;
  now: () => Date;
}

export interface BatchOutcome {
  created: number;
  skipped: number;
  failed: number;
  errors: ImportErrorDoc[];
}

interface Candidate {
  index: number;
  link: ImportedLink;
  mapped: MappedLink;
  /** The slug the source asked for (suffixes are appended to it). */
  slug: string;
  domainId: string;
  /** The id the link is created with. */
  linkId: string;
  /** Its claim in `imported_links`, once made. */
  claimId: string;
}

export class ImportBatch {
  private readonly d: BatchDeps;
  private readonly job: ImportJobDoc;
  private readonly outcome: BatchOutcome = { created: 0, skipped: 0, failed: 0, errors: [] };
  private readonly batch: number;
  /** What a dry run has counted so far, across its batches. */
  private readonly dryRunState: DryRunState;

  constructor(deps: BatchDeps, job: ImportJobDoc, dryRunState: DryRunState) {
    this.d = deps;
    this.job = job;
    this.batch = job.batches;
    this.dryRunState = dryRunState;
  }

  async run(page: SourcePage): Promise<BatchOutcome> {
    page.errors.forEach((error, i) => this.fail(page.links.length + i, error.ref, { code: 'source_row', message: error.message }, null, null));
    const fresh = await this.withoutImported(page.links);
    const candidates: Candidate[] = [];
    for (const { index, link } of fresh) {
      const candidate = await this.candidate(index, link);
      if (candidate) candidates.push(candidate);
    }
    if (this.job.dry_run) {
      await this.markExistingTaken(page);
      await this.dryRun(candidates);
    } else {
      await this.write(candidates);
    }
    return this.outcome;
  }

  /** The page's links less those imported already (or repeated in the page); pending claims are settled first. */
  private async withoutImported(links: readonly ImportedLink[]): Promise<Array<{ index: number; link: ImportedLink }>> {
    const { store, principal } = this.d;
    const claims = await store.imported
      .find({ workspace_id: principal.workspace._id, source: this.job.source, source_id: { $in: links.map((l) => l.sourceId) } })
      .toArray();
    const bySourceId = new Map(claims.map((claim) => [claim.source_id, claim]));
    const seen = new Set<string>();
    const fresh: Array<{ index: number; link: ImportedLink }> = [];
    for (const [index, link] of links.entries()) {
      if (seen.has(link.sourceId)) {
        this.outcome.skipped++;
        continue;
      }
      seen.add(link.sourceId);
      const claim = bySourceId.get(link.sourceId);
      if (claim?.state === 'created') this.outcome.skipped++;
      else if (claim && !this.job.dry_run && (await this.adopt(claim))) this.outcome.created++;
      else fresh.push({ index, link });
    }
    return fresh;
  }

  /** A pending claim left by a run that died: true when its link was written (now marked), else the claim is dropped. */
  private async adopt(claim: ImportedLinkDoc): Promise<boolean> {
    const { linkDocs, store } = this.d;
    const link = await linkDocs.findOne({ workspace_id: claim.workspace_id, domain_id: claim.domain_id, slug: claim.slug });
    if (link && (link.imported?.source_id === claim.source_id || link.created_at >= claim.at)) {
      await store.imported.updateOne({ _id: claim._id }, { $set: { state: 'created', link_id: link._id, job_id: this.job._id } });
      return true;
    }
    await store.imported.deleteOne({ _id: claim._id, state: 'pending' });
    return false;
  }

  private async candidate(index: number, link: ImportedLink): Promise<Candidate | null> {
    const domain = await this.d.domains.choose(link.domain);
    if ('error' in domain) {
      this.fail(index, link.sourceId, domain.error, link.slug, link.domain);
      return null;
    }
    try {
      const tagIds = this.job.dry_run ? [] : await this.tagIds(tagNamesOf(link));
      const mapped = mapLink(link, domain.id.startsWith('dry-run:') ? 'dom_dryrun' : domain.id, tagIds);
      return { index, link, mapped, slug: mapped.input.slug!, domainId: domain.id, linkId: newId('lnk'), claimId: newId('imp') };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      this.fail(index, link.sourceId, rowErrorOf(error), link.slug, domain.hostname);
      return null;
    }
  }

  /**
   * A dry run refuses what the write would: every check of the links service that needs no write (plan, references,
   * the destination blocklist, redirect loops), a slug taken here or by an earlier row, and the links quota (what
   * the plan has left, less the rows the dry run counted already).
   */
  private async dryRun(candidates: readonly Candidate[]): Promise<void> {
    const state = this.dryRunState;
    // A domain the import would connect does not exist yet: its rows are checked on the default domain (the checks
    // that depend on the domain, the slug and its custom-domain capability, are made apart).
    const inputs = candidates.map((c) => {
      if (!c.domainId.startsWith('dry-run:')) return c.mapped.input;
      const { domain_id: _domain, ...input } = c.mapped.input;
      return input;
    });
    const checks = await this.d.links.checkMany(this.d.principal, inputs);
    for (const [i, c] of candidates.entries()) {
      const refused = checks[i];
      if (refused) {
        this.fail(c.index, c.link.sourceId, rowErrorOf(refused), c.slug, c.link.domain);
        continue;
      }
      const key = `${c.domainId}/${c.slug}`;
      if (state.taken.has(key) && !c.mapped.generatedSlug && this.job.on_slug_clash === 'error') {
        this.fail(c.index, c.link.sourceId, { code: 'conflict', message: `The slug "${c.slug}" is already taken.` }, c.slug, c.link.domain);
        continue;
      }
      state.remaining ??= await this.d.links.linksRemaining(this.d.principal);
      if (state.remaining <= 0) {
        this.fail(c.index, c.link.sourceId, rowErrorOf(new QuotaExceededError('links', this.d.principal.plan.limits.links)), c.slug, c.link.domain);
        continue;
      }
      state.remaining--;
      state.taken.add(key);
      this.outcome.created++;
    }
  }

  /** Existing links clash in a dry run too: looked up once for the batch. */
  private async markExistingTaken(page: SourcePage): Promise<void> {
    const slugs = page.links.map((l) => l.slug).filter((s): s is string => s !== null);
    if (slugs.length === 0) return;
    const taken = await this.d.linkDocs.find({ slug: { $in: slugs } }, { projection: { domain_id: 1, slug: 1 } }).toArray();
    for (const link of taken) this.dryRunState.taken.add(`${link.domain_id}/${link.slug}`);
  }

  private async write(candidates: Candidate[]): Promise<void> {
    const claimed = await this.claim(candidates);
    const chunks: Candidate[][] = [];
    for (let i = 0; i < claimed.length; i += WRITE_CHUNK) chunks.push(claimed.slice(i, i + WRITE_CHUNK));
    if (chunks.length > 1 && (await this.d.links.linksRemaining(this.d.principal)) >= claimed.length) {
      await Promise.all(chunks.map((chunk) => this.writeChunk(chunk)));
    } else {
      for (const chunk of chunks) await this.writeChunk(chunk);
    }
  }

  /** One bulk write of claimed links (and again, with new slugs, for those whose slug clashed). */
  private async writeChunk(claimed: Candidate[]): Promise<void> {
    let todo = claimed;
    for (let attempt = 0; todo.length > 0; attempt++) {
      // Each link is written with its origin (the import mark, its source's creation date) in the same write.
      const at = this.d.now();
      const origins = todo.map((c) => ({
        imported: { source: this.job.source, source_id: c.link.sourceId, job_id: this.job._id, clicks_total: c.link.clicksTotal, at },
        created_at: c.link.createdAt,
        id: c.linkId,
      }));
      const result = await this.d.links.importMany(this.d.principal, todo.map((c) => c.mapped.input), origins);
      const retry: Candidate[] = [];
      const created: Candidate[] = [];
      for (const item of result) {
        const c = todo[item.index]!;
        if ('id' in item) {
          created.push(c);
          continue;
        }
        const clash = item.error.code === 'conflict' && (c.mapped.generatedSlug || this.job.on_slug_clash === 'suffix');
        if (clash && attempt < CLASH_ATTEMPTS) {
          const slug = c.mapped.generatedSlug ? generateSlug() : suffixed(c.slug, attempt + 1);
          c.mapped = { ...c.mapped, input: { ...c.mapped.input, slug } };
          retry.push(c);
        } else {
          this.fail(c.index, c.link.sourceId, rowErrorOf(item.error), c.mapped.input.slug ?? null, c.link.domain);
          await this.d.store.imported.deleteOne({ _id: c.claimId, state: 'pending' });
        }
      }
      await this.markCreated(created);
      // The claim follows the slug before it is tried: a run that dies meanwhile finds the link where it was written.
      if (retry.length > 0) {
        await this.d.store.imported.bulkWrite(
          retry.map((c) => ({
            updateOne: { filter: { _id: c.claimId }, update: { $set: { slug: c.mapped.input.slug!, at: this.d.now() } } },
          })),
        );
      }
      todo = retry;
    }
  }

  /** Claims each candidate's source id; one claimed meanwhile by another job (the same import run twice at once) is skipped. */
  private async claim(candidates: Candidate[]): Promise<Candidate[]> {
    if (candidates.length === 0) return [];
    const at = this.d.now();
    const docs: ImportedLinkDoc[] = candidates.map((c) => ({
      _id: c.claimId,
      workspace_id: this.d.principal.workspace._id,
      source: this.job.source,
      source_id: c.link.sourceId,
      job_id: this.job._id,
      state: 'pending',
      link_id: c.linkId,
      domain_id: c.domainId,
      slug: c.slug,
      url: c.mapped.input.url,
      at,
    }));
    const refused = new Set<number>();
    try {
      await this.d.store.imported.insertMany(docs, { ordered: false });
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError)) throw error;
      const writeErrors: ReadonlyArray<{ code: number; index: number }> = Array.isArray(error.writeErrors) ? (error.writeErrors as WriteError[]) : [error.writeErrors as WriteError];
      for (const writeError of writeErrors) {
        if (writeError.code !== 11000) throw error;
        refused.add(writeError.index);
      }
    }
    this.outcome.skipped += refused.size;
    return candidates.filter((_, i) => !refused.has(i));
  }

  /** The claims of the created links (written with their origin) are marked created; they already name the link and its slug. */
  private async markCreated(created: readonly Candidate[]): Promise<void> {
    if (created.length === 0) return;
    await this.d.store.imported.updateMany({ _id: { $in: created.map((c) => c.claimId) } }, { $set: { state: 'created' } });
    this.outcome.created += created.length;
  }

  /** Tag ids for names, the missing tags created in the workspace. */
  private async tagIds(names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const workspaceId = this.d.principal.workspace._id;
    const found = async () => new Map((await this.d.tags.collection.find({ workspace_id: workspaceId, name: { $in: [...names] } }).toArray()).map((t: LabelDoc) => [t.name, t._id]));
    let byName = await found();
    const missing = names.filter((name) => !byName.has(name));
    if (missing.length > 0) {
      for (const name of missing) {
        try {
          await this.d.tags.insert({ _id: newId('tag'), workspace_id: workspaceId, name, color: null, created_at: this.d.now() });
        } catch (error) {
          // Created meanwhile (another batch, another job): read below.
          if (!(error instanceof AppError && error.code === 'conflict')) throw error;
        }
      }
      byName = await found();
    }
    return names.map((name) => byName.get(name)).filter((id): id is string => id !== undefined);
  }

  private fail(index: number, ref: string, error: { code: string; message: string }, slug: string | null, domain: string | null): void {
    const seq = this.batch * ROWS_PER_BATCH + index;
    this.outcome.failed++;
    this.outcome.errors.push({ _id: `${this.job._id}:${seq}`, job_id: this.job._id, workspace_id: this.job.workspace_id, seq, ref, code: error.code, message: error.message, slug, domain });
  }
}
