import type { LinkDoc } from './link.store.ts';
import type { LabelDoc } from './label.store.ts';
import type { Link } from './link.schemas.ts';
import { DEFAULT_DOMAIN_ID } from './domains.ts';

/** How the API shows a stored link (spec 2.1): dates as ISO strings in UTC, the password only as `has_password`. */
export function linkView(doc: LinkDoc, tags: ReadonlyMap<string, LabelDoc>, defaultBaseUrl: string): Link {
  const base = doc.domain_id === DEFAULT_DOMAIN_ID ? defaultBaseUrl : `https://${doc.domain}`;
  return {
    id: doc._id,
    short_url: `${base}/${doc.slug}`,
    domain_id: doc.domain_id,
    domain: doc.domain,
    slug: doc.slug,
    url: doc.url,
    title: doc.title,
    note: doc.note,
    folder_id: doc.folder_id,
    tags: tagViews(doc.tag_ids, tags),
    redirect_type: doc.redirect_type,
    expires_at: doc.expires_at?.toISOString() ?? null,
    expired_url: doc.expired_url,
    has_password: doc.password_hash !== null,
    targeting: doc.targeting,
    ab_test: doc.ab_test,
    rules: doc.rules,
    workspace_rules_off: doc.workspace_rules_off,
    mobile: doc.mobile,
    rotator: doc.rotator,
    preview: doc.preview ?? null,
    destination_preview: destinationPreview(doc),
    archived: doc.archived,
    moderation: doc.moderation
      ? { state: doc.moderation.state, reason: doc.moderation.reason, report_id: doc.moderation.report_id, at: doc.moderation.at.toISOString() }
      : null,
    imported: doc.imported
      ? { source: doc.imported.source, source_id: doc.imported.source_id, job_id: doc.imported.job_id, clicks_total: doc.imported.clicks_total, imported_at: doc.imported.at.toISOString() }
      : null,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

/** A link's tags as the API shows them, in the link's order; a tag deleted meanwhile is left out. */
export function tagViews(tagIds: readonly string[], tags: ReadonlyMap<string, LabelDoc>): Link['tags'] {
  return tagIds.flatMap((id) => {
    const tag = tags.get(id);
    return tag ? [{ id: tag._id, name: tag.name, color: tag.color ?? null }] : [];
  });
}

/** The fetched tags when they belong to the current destination and say something; null otherwise. */
export function destinationPreview(doc: Pick<LinkDoc, 'url' | 'preview_fetched'>): Link['destination_preview'] {
  const fetched = doc.preview_fetched;
  if (!fetched || fetched.url !== doc.url || (fetched.title === null && fetched.description === null && fetched.image === null)) return null;
  return { title: fetched.title, description: fetched.description, image: fetched.image, fetched_at: fetched.fetched_at.toISOString() };
}
