// One source link as one of ours: the create body the links service gets (validated as POST /links validates it), and
// what the link keeps of where it came from. Decisions (docs/importing/README.md, "Field mapping"):
// - slug: kept as the source has it; a source link without one gets a generated slug here (so the job knows the slug
//   it claimed before the link is written); a slug we do not accept (a `/` in it...) fails the row.
// - title: cut to our 200 characters; tags: by name, created in the workspace when missing, the first 20 kept.
// - iOS / Android destinations: OS targeting entries (visitors on that OS go there), ahead of the source's own.
// - created date and click totals: written on the link after it is created (`created_at`, `imported.clicks_total`);
//   clicks are a historical total marked imported, never raw clicks.
import { ValidationError, type AppError } from '../platform/errors.ts';
import { bodyValidator } from '../http/validation.ts';
import { generateSlug } from '../links/link.prepare.ts';
import { LinkCreateSchema, type LinkCreate } from '../links/link.schemas.ts';
import type { TargetingEntry } from '../rules/rule.schemas.ts';
import type { ImportedLink } from './source.ts';

const validateCreate = bodyValidator(LinkCreateSchema);

export const MAX_TITLE = 200;
export const MAX_TAGS = 20;
export const MAX_TAG_NAME = 50;

export interface MappedLink {
  input: LinkCreate;
  /** The slug came from us (the source had none): a clash draws another instead of failing the row. */
  generatedSlug: boolean;
}

/** Tag names of a link as we keep them: trimmed, cut to our length, without repeats, at most 20. */
export function tagNamesOf(link: ImportedLink): string[] {
  const names = link.tags.map((name) => name.trim().slice(0, MAX_TAG_NAME)).filter((name) => name !== '');
  return [...new Set(names)].slice(0, MAX_TAGS);
}

/** The create body for `link` on `domainId` with `tagIds`; a ValidationError when we cannot hold it. */
export function mapLink(link: ImportedLink, domainId: string, tagIds: string[]): MappedLink {
  const targeting: TargetingEntry[] = [];
  if (link.ios) targeting.push({ match: { os: ['ios'] }, url: link.ios });
  if (link.android) targeting.push({ match: { os: ['android'] }, url: link.android });
  targeting.push(...link.targeting);
  const body: Record<string, unknown> = {
    url: link.url,
    domain_id: domainId,
    slug: link.slug ?? generateSlug(),
    title: link.title === null ? null : link.title.slice(0, MAX_TITLE),
    tag_ids: tagIds,
    expires_at: link.expiresAt?.toISOString() ?? null,
    expired_url: link.expiredUrl,
    ...(link.password !== null ? { password: link.password } : {}),
    ...(targeting.length > 0 ? { targeting } : {}),
    ...(link.utm && Object.keys(link.utm).length > 0 ? { utm: link.utm } : {}),
  };
  return { input: validateCreate(body), generatedSlug: link.slug === null };
}

/** The row error of an AppError (a refused create, a failed validation), as the job lists it. */
export function rowErrorOf(error: AppError): { code: string; message: string } {
  if (error instanceof ValidationError && error.details && error.details.length > 0) {
    return { code: error.code, message: error.details.map((d) => `${d.path}: ${d.message}`).join('; ') };
  }
  return { code: error.code, message: error.message };
}

/** `slug-2`, `slug-3`...: the slug with a suffix, within our 100 characters. */
export function suffixed(slug: string, attempt: number): string {
  const suffix = `-${attempt + 1}`;
  return `${slug.slice(0, 100 - suffix.length)}${suffix}`;
}
