import { randomBase62 } from '../platform/ids.ts';
import { ValidationError, type ErrorDetail } from '../platform/errors.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { Capability } from '../tenancy/plans.ts';
import type { LabelStore } from './label.store.ts';
import { DEFAULT_DOMAIN_ID, type DomainDirectory, type ResolvedDomain } from './domains.ts';
import type { LinkCreate, Utm } from './link.schemas.ts';
import { ruleIpDetails } from '../rules/rule-checks.ts';
import { blockedReason, type Blocklist } from '../config/link-safety.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

/** The link content the checks below look at (a create body, or an existing link merged with a patch). */
export type LinkContent = Omit<LinkCreate, 'utm'> & { archived?: boolean };

/** Generated slugs: 7 base62 characters (3.5 × 10^12 values): short, and not guessable from one another. */
export function generateSlug(): string {
  return randomBase62(7);
}

/** Adds the UTM parameters to the destination, replacing any of the same name already in it. */
export function applyUtm(url: string, utm: Utm | undefined): string {
  if (!utm) return url;
  const parsed = new URL(url);
  for (const [name, value] of Object.entries(utm)) if (typeof value === 'string') parsed.searchParams.set(name, value);
  return parsed.toString();
}

/** Adds the UTM parameters the destination does not set itself (a variant's own `utm_content` is kept). */
function addUtm(url: string, utm: Utm): string {
  const parsed = new URL(url);
  let added = false;
  for (const [name, value] of Object.entries(utm)) {
    if (typeof value === 'string' && !parsed.searchParams.has(name)) {
      parsed.searchParams.set(name, value);
      added = true;
    }
  }
  return added ? parsed.toString() : url;
}

/**
 * A link's UTM parameters on every destination it sends visitors to: the main `url` (replacing parameters of the same
 * name, as at creation), and, where they do not set that parameter themselves, the A/B variants, the rotator
 * destinations and the redirects of the link's rules.
 */
export function withUtm<T extends Omit<LinkContent, 'url'> & { url?: string }>(content: T, utm: Utm | undefined): T {
  if (!utm || Object.keys(utm).length === 0) return content;
  return {
    ...content,
    ...(content.url !== undefined ? { url: applyUtm(content.url, utm) } : {}),
    ...(content.ab_test ? { ab_test: { ...content.ab_test, variants: content.ab_test.variants.map((v) => ({ ...v, url: addUtm(v.url, utm) })) } } : {}),
    ...(content.rotator ? { rotator: { ...content.rotator, destinations: content.rotator.destinations.map((d) => ({ ...d, url: addUtm(d.url, utm) })) } } : {}),
    ...(content.rules
      ? { rules: content.rules.map((rule) => (rule.action.type === 'redirect' && 'url' in rule.action && typeof rule.action.url === 'string' ? { ...rule, action: { ...rule.action, url: addUtm(rule.action.url, utm) } } : rule)) }
      : {}),
  };
}

/** Which plan capabilities a link's content uses. */
export function capabilitiesUsed(content: LinkContent, password: boolean): Capability[] {
  const used: Capability[] = [];
  if (content.targeting && content.targeting.length > 0) used.push('targeting');
  if (content.ab_test) used.push('ab_test');
  if (content.rules && content.rules.length > 0) used.push('rules');
  if (content.mobile) used.push('mobile');
  if (content.rotator) used.push('rotator');
  if (password) used.push('password');
  if (content.domain_id !== undefined && content.domain_id !== DEFAULT_DOMAIN_ID) used.push('custom_domains');
  if (content.rules?.some((r) => r.match.ip_list_ids !== undefined)) used.push('ip_lists');
  return used;
}

/** Every destination URL a link can send a visitor to, with the field path that holds it. */
function destinations(content: LinkContent): Array<[string, string]> {
  const out: Array<[string, string]> = [['url', content.url]];
  if (content.expired_url) out.push(['expired_url', content.expired_url]);
  content.targeting?.forEach((t, i) => out.push([`targeting[${i}].url`, t.url]));
  content.ab_test?.variants.forEach((v, i) => out.push([`ab_test.variants[${i}].url`, v.url]));
  content.rules?.forEach((r, i) => {
    if (r.action.type === 'redirect') out.push([`rules[${i}].action.url`, r.action.url]);
  });
  content.rotator?.destinations.forEach((d, i) => out.push([`rotator.destinations[${i}].url`, d.url]));
  if (content.rotator?.fallback_url) out.push(['rotator.fallback_url', content.rotator.fallback_url]);
  content.rules?.forEach((r, i) => {
    if (r.action.type === 'page' && r.action.button_url) out.push([`rules[${i}].action.button_url`, r.action.button_url]);
  });
  if (content.mobile?.desktop_url) out.push(['mobile.desktop_url', content.mobile.desktop_url]);
  for (const os of ['ios', 'android'] as const) {
    const app = content.mobile?.[os];
    if (app?.web_url) out.push([`mobile.${os}.web_url`, app.web_url]);
    if (app?.store_url) out.push([`mobile.${os}.store_url`, app.store_url]);
  }
  return out;
}

/** What the reference checks ask of the database: one link's answers each, or a batch's read once (`batchLookups`). */
export interface ReferenceLookups {
  domain(domainId: string | undefined): Promise<ResolvedDomain | null>;
  folderExists(folderId: string): Promise<boolean>;
  tagsFound(tagIds: readonly string[]): Promise<ReadonlySet<string>>;
  isShortDomain(url: string): Promise<boolean>;
}

type ReferenceDeps = { domains: DomainDirectory; tags: LabelStore; folders: LabelStore; blocklist?: Blocklist };

/** Lookups made as the checks ask for them (one link). */
function directLookups(workspaceId: string, deps: ReferenceDeps): ReferenceLookups {
  return {
    domain: (id) => deps.domains.resolve(workspaceId, id),
    folderExists: async (id) => (await deps.folders.findById(workspaceId, id)) !== null,
    tagsFound: async (ids) => new Set((await deps.tags.findMany(workspaceId, ids)).map((t) => t._id)),
    isShortDomain: (url) => deps.domains.isShortDomain(url),
  };
}

/**
 * The answers a batch of links needs, read once for all of them: each distinct domain, the folders and tags they
 * name, and which of their destinations' hosts are short domains (one query each, whatever the batch's size).
 */
export async function batchLookups(principal: WorkspacePrincipal, contents: readonly LinkContent[], deps: ReferenceDeps): Promise<ReferenceLookups> {
  const workspaceId = principal.workspace._id;
  const domainIds = [...new Set(contents.map((c) => c.domain_id ?? DEFAULT_DOMAIN_ID))];
  const folderIds = [...new Set(contents.flatMap((c) => (c.folder_id ? [c.folder_id] : [])))];
  const tagIds = [...new Set(contents.flatMap((c) => c.tag_ids ?? []))];
  const urls = contents.flatMap((c) => destinations(c).map(([, url]) => url));
  const [domains, folders, tags, shortHosts] = await Promise.all([
    Promise.all(domainIds.map(async (id) => [id, await deps.domains.resolve(workspaceId, id)] as const)),
    deps.folders.findMany(workspaceId, folderIds),
    deps.tags.findMany(workspaceId, tagIds),
    deps.domains.shortDomainHosts(urls),
  ]);
  const domainOf = new Map(domains);
  const folderSet = new Set(folders.map((f) => f._id));
  const tagSet = new Set(tags.map((t) => t._id));
  return {
    domain: (id) => Promise.resolve(domainOf.get(id ?? DEFAULT_DOMAIN_ID) ?? null),
    folderExists: (id) => Promise.resolve(folderSet.has(id)),
    tagsFound: () => Promise.resolve(tagSet),
    isShortDomain: (url) => Promise.resolve(shortHosts(url)),
  };
}

/**
 * Checks that need the database or the plan, after the schema: the domain is usable by the workspace, the folder
 * and tags exist in it, no destination points back at one of our short domains (a redirect loop).
 */
export async function checkReferences(
  principal: WorkspacePrincipal,
  content: LinkContent,
  deps: ReferenceDeps,
  lookups: ReferenceLookups = directLookups(principal.workspace._id, deps),
): Promise<ResolvedDomain> {
  const details: ErrorDetail[] = [];
  const domain = await lookups.domain(content.domain_id);
  if (!domain) details.push({ path: 'domain_id', message: 'is not a domain of this workspace (or not active yet)' });
  details.push(...ruleIpDetails(content.rules));
  if (content.folder_id) {
    if (!(await lookups.folderExists(content.folder_id))) details.push({ path: 'folder_id', message: 'no such folder' });
  }
  if (content.tag_ids && content.tag_ids.length > 0) {
    const found = await lookups.tagsFound(content.tag_ids);
    content.tag_ids.forEach((id, i) => {
      if (!found.has(id)) details.push({ path: `tag_ids[${i}]`, message: 'no such tag' });
    });
  }
  const refused: string[] = [];
  for (const [path, url] of destinations(content)) {
    const reason = deps.blocklist ? blockedReason(deps.blocklist, url) : null;
    if (reason !== null) {
      details.push({ path, message: `is refused by the link safety blocklist: ${reason}` });
      refused.push(`${path} (${reason})`);
    } else if (await lookups.isShortDomain(url)) {
      details.push({ path, message: 'points at a short-link domain (a redirect loop)' });
    }
  }
  if (refused.length > 0) throw new ValidationError(details, `A destination is refused by the link safety blocklist: ${refused.join('; ')}.`);
  if (details.length > 0 || !domain) throw new ValidationError(details);
  return domain;
}
