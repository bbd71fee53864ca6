// The link editor's state and its translation to and from the API. The draft keeps the API's field names and
// nesting, so an error's `details[].path` (`rules[1].action.url`) names the draft field that caused it.
import type { AbTest, Link, Mobile, Rotator, Rule, RuleAction, TargetingEntry } from './link-types.ts';

export interface Utm {
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
}

/** The custom social card as edited: an empty title means none. */
export interface PreviewDraft {
  title: string;
  description: string;
  image: string;
}

export const UTM_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;

/**
 * A link's UTM parameters are written into its destinations by the API (on create and update). The editor shows them
 * apart: the main URL's `utm_*` parameters become the UTM fields and leave the URL, and the destinations (A/B
 * variants, rotator, rule redirects) lose the ones equal to the main URL's, which the API adds back on save. A
 * destination's own different value (a variant's `utm_content`) stays in its URL.
 */
function stripUtm(url: string, drop: (key: string, value: string) => boolean): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const doomed = [...parsed.searchParams].filter(([key, value]) => (UTM_KEYS as readonly string[]).includes(key) && drop(key, value));
  if (doomed.length === 0) return url;
  for (const [key] of doomed) parsed.searchParams.delete(key);
  return parsed.toString().replace(/\?(#|$)/, '$1');
}

function utmOfUrl(url: string): Utm {
  const utm = emptyDraft().utm;
  try {
    const params = new URL(url).searchParams;
    for (const key of UTM_KEYS) utm[key] = params.get(key) ?? '';
  } catch {
    // an unparsable URL has no parameters to show
  }
  return utm;
}

/** The non-empty UTM fields, as the API takes them. */
export function utmBody(utm: Utm): Partial<Utm> {
  return compact({ ...utm });
}

/** A rule as edited: `key` tells rows apart while they are reordered (new rules have no id until saved). */
export type RuleDraft = Rule & { key: string };

export interface LinkDraft {
  url: string;
  domain_id: string;
  slug: string;
  title: string;
  note: string;
  folder_id: string;
  tag_ids: string[];
  redirect_type: number;
  /** A `datetime-local` value in the browser's time zone, or ''. */
  expires_at: string;
  expired_url: string;
  /** A new password to set ('' keeps the current one). */
  password: string;
  remove_password: boolean;
  has_password: boolean;
  utm: Utm;
  targeting: TargetingEntry[];
  ab_test: AbTest | null;
  rules: RuleDraft[];
  workspace_rules_off: boolean;
  mobile: Mobile | null;
  rotator: Rotator | null;
  preview: PreviewDraft;
}

let keySeed = 0;
export function newKey(): string {
  keySeed += 1;
  return `k${keySeed}`;
}

export function emptyDraft(): LinkDraft {
  return {
    url: '',
    domain_id: '',
    slug: '',
    title: '',
    note: '',
    folder_id: '',
    tag_ids: [],
    redirect_type: 302,
    expires_at: '',
    expired_url: '',
    password: '',
    remove_password: false,
    has_password: false,
    utm: { utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '' },
    targeting: [],
    ab_test: null,
    rules: [],
    workspace_rules_off: false,
    mobile: null,
    rotator: null,
    preview: { title: '', description: '', image: '' },
  };
}

export function draftOf(link: Link): LinkDraft {
  const utm = utmOfUrl(link.url);
  const shared = (key: string, value: string) => utm[key as keyof Utm] === value;
  const own = (url: string) => stripUtm(url, shared);
  return {
    ...emptyDraft(),
    url: stripUtm(link.url, () => true),
    utm,
    domain_id: link.domain_id,
    slug: link.slug,
    title: link.title ?? '',
    note: link.note ?? '',
    folder_id: link.folder_id ?? '',
    tag_ids: link.tags.map((t) => t.id),
    redirect_type: link.redirect_type,
    expires_at: link.expires_at ? toLocalInput(link.expires_at) : '',
    expired_url: link.expired_url ?? '',
    has_password: link.has_password,
    targeting: structuredClone(link.targeting),
    ab_test: link.ab_test ? { ...structuredClone(link.ab_test), variants: link.ab_test.variants.map((v) => ({ ...v, url: own(v.url) })) } : null,
    rules: link.rules.map((rule) => {
      const copy = structuredClone(rule);
      if (copy.action.type === 'redirect' && typeof copy.action.url === 'string') copy.action = { ...copy.action, url: own(copy.action.url) };
      return { ...copy, key: newKey() };
    }),
    workspace_rules_off: link.workspace_rules_off,
    mobile: link.mobile ? structuredClone(link.mobile) : null,
    rotator: link.rotator ? { ...structuredClone(link.rotator), destinations: link.rotator.destinations.map((d) => ({ ...d, url: own(d.url) })) } : null,
    preview: { title: link.preview?.title ?? '', description: link.preview?.description ?? '', image: link.preview?.image ?? '' },
  };
}

/** `2026-11-24T14:05` in the browser's zone for an ISO instant. */
export function toLocalInput(iso: string): string {
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function fromLocalInput(local: string): string {
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

/** Drops empty strings, undefined and empty arrays from an object (one level), so optional fields stay absent. */
export function compact<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    out[key] = v;
  }
  return out as T;
}

function cleanAction(action: RuleAction): RuleAction {
  return compact(action);
}

export function cleanRule({ key: _key, ...rule }: RuleDraft): Rule {
  const out: Rule = { enabled: rule.enabled, invert: rule.invert, match: compact(rule.match), action: cleanAction(rule.action) };
  if (rule.id) out.id = rule.id;
  if (rule.label) out.label = rule.label;
  return out;
}

function cleanMobile(mobile: Mobile): Mobile {
  const out: Mobile = compact({ ...mobile });
  for (const side of ['ios', 'android'] as const) {
    const app = mobile[side] ? compact({ ...mobile[side] }) : undefined;
    if (app && Object.keys(app).length > 0) out[side] = app;
    else delete out[side];
  }
  return out;
}

function cleanAb(ab: AbTest): AbTest {
  return { ...ab, variants: ab.variants.map((v) => compact({ ...v })) };
}

function cleanRotator(rotator: Rotator): Rotator {
  return { ...rotator, fallback_url: rotator.fallback_url || null, destinations: rotator.destinations.map((d) => ({ ...d })) };
}

/** Every field the editor manages, as the API takes it (without `utm` and `password`, which are write-only). */
function managedFields(draft: LinkDraft): Record<string, unknown> {
  return {
    url: draft.url.trim(),
    domain_id: draft.domain_id || undefined,
    slug: draft.slug.trim() || undefined,
    title: draft.title.trim() || null,
    note: draft.note.trim() || null,
    folder_id: draft.folder_id || null,
    tag_ids: draft.tag_ids,
    redirect_type: draft.redirect_type,
    expires_at: draft.expires_at ? fromLocalInput(draft.expires_at) : null,
    expired_url: draft.expired_url.trim() || null,
    targeting: draft.targeting,
    ab_test: draft.ab_test ? cleanAb(draft.ab_test) : null,
    rules: draft.rules.map(cleanRule),
    workspace_rules_off: draft.workspace_rules_off,
    mobile: draft.mobile ? cleanMobile(draft.mobile) : null,
    rotator: draft.rotator ? cleanRotator(draft.rotator) : null,
    preview: draft.preview.title.trim()
      ? { title: draft.preview.title.trim(), description: draft.preview.description.trim() || null, image: draft.preview.image.trim() || null }
      : null,
  };
}

/** The POST /links body: only what was filled in. */
export function createBody(draft: LinkDraft): Record<string, unknown> {
  const fields = managedFields(draft);
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === null || value === false || (Array.isArray(value) && value.length === 0)) continue;
    body[key] = value;
  }
  if (draft.password) body.password = draft.password;
  const utm = utmBody(draft.utm);
  if (Object.keys(utm).length > 0) body.utm = utm;
  return body;
}

/** The PATCH /links/{id} body: the fields that differ from the link as loaded, and a password change. */
export function updateBody(draft: LinkDraft, original: LinkDraft): Record<string, unknown> {
  const now = managedFields(draft);
  const before = managedFields(original);
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(now)) {
    if (JSON.stringify(value) !== JSON.stringify(before[key])) body[key] = value ?? null;
  }
  // domain_id and slug are never cleared: an emptied field means "leave as is".
  if (body.domain_id === null) delete body.domain_id;
  if (body.slug === null) delete body.slug;
  // The destinations are sent without the link's UTM parameters: changed UTM sends them all again, and any destination
  // sent goes with the UTM for the API to write back in.
  const utm = utmBody(draft.utm);
  if (JSON.stringify(utm) !== JSON.stringify(utmBody(original.utm))) {
    for (const key of ['url', 'ab_test', 'rotator', 'rules'] as const) if (now[key] !== null) body[key] = now[key];
  }
  if (['url', 'ab_test', 'rotator', 'rules'].some((key) => key in body) && Object.keys(utm).length > 0) body.utm = utm;
  if (draft.password) body.password = draft.password;
  else if (draft.remove_password && draft.has_password) body.password = null;
  return body;
}

/** Splits a typed list ("US, de, FR" or one per line) into its items; items may contain spaces ("New York"). */
export function parseList(text: string, transform: (item: string) => string = (s) => s): string[] {
  return text
    .split(/[,;\n]+/)
    .map((s) => transform(s.trim()))
    .filter((s) => s.length > 0);
}
