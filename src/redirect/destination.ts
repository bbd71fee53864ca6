// The URL a visitor is finally sent to: UTM merge and click id (DESIGN step 10), and the mobile app launcher (step 7).
import type { Mobile } from '../links/link.schemas.ts';
import type { VisitorProfile } from '../visitor/visitor-profile.ts';

export const CLICK_ID_PARAM = 'lp_click_id';

function decodeKey(segment: string): string {
  const raw = segment.split('=', 1)[0] ?? '';
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}

/**
 * Adds the short URL's `utm_*` parameters to `url` where the destination does not set that parameter already (the
 * link owner's tags win: they were chosen for this destination, a visitor's are whatever the sharer typed), then
 * `lp_click_id` when given (a click id already in the destination is replaced: only ours can be verified).
 * The destination's own query and fragment are kept as written: parameters are appended to the query string, never
 * re-serialised, so an owner's unusual encoding survives.
 */
export function finishUrl(url: string, query: URLSearchParams, clickId: string | null): string {
  let utm: [string, string][] | null = null;
  for (const [key, value] of query) {
    if (key.startsWith('utm_')) (utm ??= []).push([key, value]);
  }
  if (utm === null && clickId === null) return url;

  const hash = url.indexOf('#');
  const fragment = hash === -1 ? '' : url.slice(hash);
  const beforeFragment = hash === -1 ? url : url.slice(0, hash);
  const mark = beforeFragment.indexOf('?');
  const path = mark === -1 ? beforeFragment : beforeFragment.slice(0, mark);
  let existing = mark === -1 ? '' : beforeFragment.slice(mark + 1);
  const present = new Set(existing.split('&').map(decodeKey));

  const added: string[] = [];
  for (const [key, value] of utm ?? []) {
    if (!present.has(key)) added.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  }
  if (clickId !== null) {
    if (present.has(CLICK_ID_PARAM)) existing = existing.split('&').filter((segment) => decodeKey(segment) !== CLICK_ID_PARAM).join('&');
    added.push(`${CLICK_ID_PARAM}=${encodeURIComponent(clickId)}`);
  }
  if (added.length === 0) return url;
  const separator = existing === '' || existing.endsWith('&') ? '' : '&';
  return `${path}?${existing}${separator}${added.join('&')}${fragment}`;
}

/**
 * Deferred deep linking: the store page carries the click so the app can read it on first launch. Google Play has a
 * standard, the `referrer` parameter that the Play Install Referrer API hands to the app, holding
 * `lp_click_id=<id>&lp_link=<slug>` url-encoded. The App Store has no install referrer at all: its URL is left as
 * is, and an iOS app attributes through the click id of the web or universal link instead.
 */
export function deferredStoreUrl(storeUrl: string, clickId: string | null, slug: string): string {
  let parsed: URL;
  try {
    parsed = new URL(storeUrl);
  } catch {
    return storeUrl;
  }
  if (parsed.protocol !== 'market:' && parsed.hostname !== 'play.google.com') return storeUrl;
  const context = new URLSearchParams();
  if (clickId !== null) context.set(CLICK_ID_PARAM, clickId);
  context.set('lp_link', slug);
  parsed.searchParams.set('referrer', context.toString());
  return parsed.toString();
}

export type MobileChoice =
  | { kind: 'app'; appUrl: string; fallbackUrl: string; delayMs: number; platform: 'ios' | 'android' }
  | { kind: 'redirect'; url: string };

export interface MobileContext {
  slug: string;
  /** The link's own destination, already finished: the launcher's last fallback. */
  linkUrl: string;
  /** The click id for deferred store links, whether or not conversion tracking appends it to web URLs. */
  clickId: string | null;
  /** UTM merge and click id for web destinations. */
  finish(url: string): string;
}

/**
 * Step 7. Null: the mobile settings do not decide for this visitor, and the decision continues (A/B, rotator, url).
 * - A phone, or a tablet unless `tablet: 'desktop'`, on iOS or Android with a config for that platform:
 *   `attempt` with an `app_url` opens the launcher (fallback: store, else web, else the link's url); `attempt`
 *   without an `app_url` acts as `store`; `store` goes to the store, else the web URL; `web` goes to the web URL.
 *   When the mode finds none of its URLs the decision continues, so the link's A/B test or rotator still applies.
 * - A desktop, or a tablet with `tablet: 'desktop'`, goes to `desktop_url` when set.
 */
export function decideMobile(mobile: Mobile, profile: VisitorProfile, context: MobileContext): MobileChoice | null {
  const handheld = profile.device === 'mobile' || (profile.device === 'tablet' && mobile.tablet !== 'desktop');
  if (!handheld) return mobile.desktop_url ? { kind: 'redirect', url: context.finish(mobile.desktop_url) } : null;

  if (profile.os !== 'ios' && profile.os !== 'android') return null;
  const platform = profile.os;
  const app = mobile[platform];
  if (!app) return null;

  const store = app.store_url ? (mobile.deferred ? deferredStoreUrl(app.store_url, context.clickId, context.slug) : app.store_url) : null;
  const web = app.web_url ? context.finish(app.web_url) : null;
  const mode = mobile.in_app ?? 'attempt';

  if (mode === 'attempt' && app.app_url) {
    const delayMs = mobile.delay_ms ?? 1600;
    return { kind: 'app', appUrl: app.app_url, fallbackUrl: store ?? web ?? context.linkUrl, delayMs, platform };
  }
  const url = mode === 'web' ? web : (store ?? web);
  return url === null ? null : { kind: 'redirect', url };
}
